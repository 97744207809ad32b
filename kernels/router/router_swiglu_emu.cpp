// CPU emulation of F3: the router pieces (router_emu.cpp) and the landed F2 emulation. The fused
// launch's two block roles touch disjoint data, so their emulation is the two pieces in turn.
#include <fmt/format.h>

#include "core/errors.hpp"
#include "kernels/router/router_swiglu.hpp"

namespace fb {

void router_swiglu_validate(const RouterSwigluParams& p) {
  router_validate(p.router);
  if (p.swiglu.rows != p.router.rows)
    throw InputError(fmt::format("the shared expert has {} rows, the router {}", p.swiglu.rows, p.router.rows));
  if (p.swiglu.activation != SwigluActivation::swiglu_oai || p.swiglu.write_out || p.swiglu.d % 8 != 0)
    throw InputError(fmt::format("d={}: F3 runs swiglu_oai without the bf16 out, d a multiple of 8", p.swiglu.d));
  if (p.swiglu.granularity == Fp8Granularity::per_1x128 && p.swiglu.d % 128 != 0)
    throw InputError(fmt::format("d={} is not a multiple of the 1x128 group", p.swiglu.d));
}

void router_swiglu_fused_emu(const RouterSwigluParams& p, const RouterSwigluBuffers& b) {
  router_gemv_emu(p.router, b.router);
  swiglu_fp8_fused_emu(p.swiglu, b.swiglu);
  router_gate_partials_emu(p.router, b.router);
}

void router_swiglu_chain_emu(const RouterSwigluParams& p, const RouterSwigluBuffers& b) {
  router_chain_emu(p.router, b.router);
  swiglu_fp8_fused_emu(p.swiglu, b.swiglu);
}

}  // namespace fb
