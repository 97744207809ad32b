// F3: the router and the shared expert's SwiGLU -> fp8 (the landed F2 producer) in one launch,
// then the fused gate reading the partials.
//   fused  router_swiglu_kernel: blocks [0, G) are router GEMV work items (partials), blocks
//          [G, G + F) run F2's block body (swiglu_fp8_rows) on gate_up; then the fused gate
//          (router_gate_partials_launch). 2 launches.
//   chain  router GEMV, reduce, gate (router_chain_launch), then the landed F2 launch
//          (swiglu_fp8_fused_launch). 4 launches (3 at T <= 16, where the GEMV reduces itself).
// The two halves share no data, so the fused launch needs no handoff. Claim: bitwise on every
// output (partials, logits, ids, weights, fp8 bytes, scales).
#pragma once

#include "kernels/router/router.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8.hpp"

namespace fb {

struct RouterSwigluParams {
  RouterParams router;     // rows = T
  SwigluFp8Params swiglu;  // the same rows; swiglu_oai, write_out = false, d a multiple of 8
};

struct RouterSwigluBuffers {
  RouterBuffers router;
  SwigluFp8Buffers swiglu;  // out unused
};

void router_swiglu_validate(const RouterSwigluParams& p);

void router_swiglu_fused_emu(const RouterSwigluParams& p, const RouterSwigluBuffers& b);
void router_swiglu_chain_emu(const RouterSwigluParams& p, const RouterSwigluBuffers& b);
void router_swiglu_fused_launch(const RouterSwigluParams& p, const RouterSwigluBuffers& b, void* stream);
void router_swiglu_chain_launch(const RouterSwigluParams& p, const RouterSwigluBuffers& b, void* stream);

}  // namespace fb
