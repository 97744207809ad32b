// Small pieces every family's case file uses: the input distribution axis, role dispatch, GPU
// launcher lookup. (The fp8 output options live with fp8_quant: kernels/fp8_quant/fp8_quant_options.hpp.)
#pragma once

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

// Runs a role: the emulation on the CPU backend, the launcher on the GPU backend.
template <class Params, class Buffers>
void run_role(Role role, const ExecContext& ctx, const Params& p, const Buffers& b,
              void (*fused_emu)(const Params&, const Buffers&), void (*chain_emu)(const Params&, const Buffers&),
              std::type_identity_t<void (*)(const Params&, const Buffers&, void*)> fused_gpu,
              std::type_identity_t<void (*)(const Params&, const Buffers&, void*)> chain_gpu) {
  if (ctx.backend == Backend::cpu) {
    (role == Role::fused ? fused_emu : chain_emu)(p, b);
    return;
  }
  auto* launch = role == Role::fused ? fused_gpu : chain_gpu;
  if (!launch) throw DeviceError("this build has no GPU kernels (FUSEBENCH_GPU=none)");
  launch(p, b, ctx.stream);
}

}  // namespace fb
