// Small pieces every family's case file uses: the input distribution axis, variant dispatch, GPU
// launcher lookup. (The fp8 output options live with fp8_quant: kernels/fp8_quant/fp8_quant_options.hpp.)
#pragma once

#include <initializer_list>
#include <string>
#include <type_traits>

#include "core/errors.hpp"
#include "core/inputs.hpp"
#include "core/kernel_case.hpp"

// A GPU launcher where this build has a GPU backend, nullptr in a CPU-only build (the .hip sources
// that define it are not compiled there).
#if FUSEBENCH_HAS_GPU
#define FB_GPU_LAUNCHER(fn) (&(fn))
#else
#define FB_GPU_LAUNCHER(fn) (nullptr)
#endif

namespace fb {

AxisSpec distribution_axis();

Distribution distribution_of(const Point& p);

// One variant's two implementations: the CPU emulation and the GPU launcher (nullptr in a CPU-only
// build, or for a variant with no emulation).
template <class Params, class Buffers>
struct VariantImpl {
  void (*emu)(const Params&, const Buffers&) = nullptr;
  void (*gpu)(const Params&, const Buffers&, void*) = nullptr;
};

// Runs variant `v` (an index into `impls`, in the case's variant order): the emulation on the CPU
// backend, the launcher on the GPU backend.
template <class Params, class Buffers>
void run_variant(VariantId v, const ExecContext& ctx, const Params& p, const Buffers& b,
                 std::initializer_list<VariantImpl<Params, Buffers>> impls) {
  if (v >= impls.size()) throw std::logic_error("run_variant: no implementation for variant " + std::to_string(v));
  const VariantImpl<Params, Buffers>& impl = impls.begin()[v];
  if (ctx.backend == Backend::cpu) {
    if (!impl.emu) throw InputError("this variant has no CPU emulation");
    impl.emu(p, b);
    return;
  }
  if (!impl.gpu) throw DeviceError("this build has no GPU kernels for this variant (FUSEBENCH_GPU=none)");
  impl.gpu(p, b, ctx.stream);
}

// The classic fused/chain pair (variant 0 fused, 1 chain).
template <class Params, class Buffers>
void run_role(VariantId v, const ExecContext& ctx, const Params& p, const Buffers& b,
              void (*fused_emu)(const Params&, const Buffers&), void (*chain_emu)(const Params&, const Buffers&),
              std::type_identity_t<void (*)(const Params&, const Buffers&, void*)> fused_gpu,
              std::type_identity_t<void (*)(const Params&, const Buffers&, void*)> chain_gpu) {
  run_variant<Params, Buffers>(v, ctx, p, b, {{fused_emu, fused_gpu}, {chain_emu, chain_gpu}});
}

}  // namespace fb
