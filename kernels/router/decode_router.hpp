// F4 (`m31_router`): the one-launch decode router for 1 to 16 tokens: router GEMV + gate + MoE sort
// (the landed sort's outputs: sorted token ids, weights, expert ids, num_valid_ids, zeroed moe_buf).
//   fused  decode_router_kernel: one launch (below).
//   chain  router GEMV with its own reduce (T <= 16), gate (router_chain_launch), then the landed
//          multi-phase sort: count, scan, scatter with moe_buf zeroing. 5 launches.
// Claim: bitwise on every output (partials, logits, ids, weights; the sort's outputs over the
// landed sort's compared region).
//
// The one launch, G blocks (any G >= 1; the launcher picks one block per GEMV item unless told):
//   1 every block takes GEMV items blockIdx.x, + G, ... (partials to global memory) and a
//     grid-strided share of moe_buf's zeroing;
//   2 grid-wide handoff without waiting (router_last_block): each block, after its writes, fences
//     (release) and takes a
//     ticket from a device counter (atomicAdd); the block holding ticket G - 1 is the last to finish
//     phase 1, so every partial is written, and it alone goes on (acquire fence, then loads that
//     bypass the non-coherent L1). No block ever waits for another, so the launch is correct for any
//     number of resident blocks (even one at a time) and any G. The last block resets the counter to
//     0 for the next launch (launches on one stream are ordered; concurrent launches on several
//     streams would need one counter each);
//   3 the last block: the gate of every row (sums the partials in slice order, writes logits, ids,
//     weights), then the sort of the M x k pairs with the landed one-launch sort table
//     (moe_sort_build_table), entries, expert ids, num_valid_ids and sentinels.
// F8's small-M gate_up GEMM (the shared expert, `shared`) is one more block role: blocks [G, G + F)
// run its block body (fp8_gemm_small_m_block, 256 threads: 16 columns each, F = ceil(N / 16)) and
// return; they never touch the counter or moe_buf (their outputs do not feed the router), so the
// handoff counts the G router blocks only. The chain runs it as its own launch (6 launches).
// shared.cols = 0: no shared GEMM (the launch has the G router blocks only).
#pragma once

#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4.hpp"
#include "kernels/router/router.hpp"

namespace fb {

inline constexpr std::int64_t kDecodeRouterMaxRows = 16;

struct DecodeRouterParams {
  RouterParams router;         // rows = T <= 16
  std::int64_t block = 32;     // B, the sort's block (the MoE GEMM's M tile)
  std::int64_t buf_cols = 0;   // D, moe_buf's row width (a multiple of 8)
  int grid_blocks = 0;         // router blocks G; 0: the launcher's choice; tests force odd grids
  // F8, the shared expert's gate_up: rows = T, cols = N (0: none), depth = K of its fp8 input;
  // e4m3fn only (the one launch instantiates one flavour).
  Fp8GemmParams shared{};
  MoeSortMxfp4Params sort() const;
};

struct DecodeRouterBuffers {
  RouterBuffers router;
  std::int32_t* sorted_token_ids = nullptr;   // [T*k + E*B - k]
  float* sorted_weights = nullptr;            // [T*k + E*B - k]
  std::int32_t* sorted_expert_ids = nullptr;  // [ceil(entries / B)]
  std::int32_t* num_valid_ids = nullptr;      // [2]
  std::uint16_t* moe_buf = nullptr;           // bf16 [T][D], zeroed
  std::int32_t* chunk_counts = nullptr;       // chain workspace: [1][E]
  std::int32_t* expert_info = nullptr;        // chain workspace: MoeExpertInfoLayout
  Fp8GemmBuffers shared{};                    // F8: a, a_scale, b, b_scale in; c bf16 [T][N] out
  MoeSortMxfp4Buffers sort() const;
};

void decode_router_validate(const DecodeRouterParams& p);

void decode_router_fused_emu(const DecodeRouterParams& p, const DecodeRouterBuffers& b);
void decode_router_chain_emu(const DecodeRouterParams& p, const DecodeRouterBuffers& b);
void decode_router_fused_launch(const DecodeRouterParams& p, const DecodeRouterBuffers& b, void* stream);
void decode_router_chain_launch(const DecodeRouterParams& p, const DecodeRouterBuffers& b, void* stream);

}  // namespace fb
