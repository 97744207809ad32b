// F4's one-launch decode router (decode_router.hpp says what each phase does and why the handoff is
// correct on any number of resident blocks), and the chain's launches.
#include <algorithm>

#include "kernels/common/gpu_check.hpp"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/fp8_gemm/fp8_gemm_small_m_device.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_device.hpp"
#include "kernels/router/decode_router.hpp"
#include "kernels/router/router_device.hpp"

namespace fb {
namespace {

static_assert(kRouterThreads == kMxThreads, "the sort table is built by a block of the router's size");
static_assert(router_gemv_stage_bytes(8) <= kFp8GemmSmallMSmemVec4 * 16, "the GEMV's x steps fit F8's buffer");
static_assert(kDecodeRouterMaxRows <= kRouterTailRows &&
                  kRouterTailRows * kRouterMaxExperts * 4 <= kFp8GemmSmallMSmemVec4 * 16,
              "the last block's staged logits fit F8's buffer");
constexpr int kMaxPairs = static_cast<int>(kDecodeRouterMaxRows * kRouterMaxTopk);
constexpr int kMaxExperts = static_cast<int>(kRouterMaxExperts);

// The handoff's ticket counter: zero when the module loads, reset to zero by each launch's last block.
__device__ unsigned decode_router_tickets = 0;

struct DecodeArgs {
  const std::uint16_t* x;
  const void* w;
  float* partials;
  float* logits;
  std::int32_t* ids;
  float* weights;
  std::int32_t* sorted_ids;
  float* sorted_weights;
  std::int32_t* expert_ids;
  std::int32_t* num_valid_ids;
  std::uint16_t* moe_buf;
  std::uint32_t moe_units;  // 16-byte vectors of moe_buf
  RouterGemvShape sh;
  RouterGateArgs gate;
  int block;         // B
  int router_blocks;  // G: blocks [0, G) route, blocks [G, gridDim.x) run F8
  Fp8GemmParams f8;
  Fp8GemmBuffers f8b;
};

// F8's columns per block of this launch (its 256 threads, 16 lanes per column).
constexpr int kF8Columns = kRouterThreads / kFp8GemmPartials;

template <RouterWeight kW, int kRowTile, int kF8Rows>
__global__ __launch_bounds__(kRouterThreads) void decode_router_kernel(DecodeArgs a) {
  // 0. F8's blocks: the shared expert's gate_up columns, then done (no ticket, no moe_buf share).
  // One buffer for the two roles (static shared memory is the sum of every declaration): F8's A
  // phases, or the router GEMV's x steps and then the last router block's staged logits.
  __shared__ float4 smem[kFp8GemmSmallMSmemVec4];
  if (static_cast<int>(blockIdx.x) >= a.router_blocks) {
    // F8 block j: column block j % C of row tile j / C (C column blocks).
    const std::int64_t j = blockIdx.x - a.router_blocks, columns = (a.f8.cols + kF8Columns - 1) / kF8Columns;
    Fp8GemmParams p = a.f8;
    Fp8GemmBuffers b = a.f8b;
    fp8_gemm_row_slice(p, b, j / columns * kF8Rows, kF8Rows);
    fp8_gemm_small_m_block<Fp8E4m3fnFormat, kF8Rows, kRouterThreads>(p, b, j % columns * kF8Columns, smem);
    return;
  }
  const auto G = static_cast<unsigned>(a.router_blocks);
  const float bias = router_bias_preload(a.gate);  // for the last block's gate, before the GEMV

  // 1. GEMV items and a share of moe_buf.
  for (int item = static_cast<int>(blockIdx.x); item < a.sh.items(); item += a.router_blocks)
    router_gemv_item<kW, kRowTile>(a.x, a.w, a.partials, a.sh, item, reinterpret_cast<std::uint16_t*>(smem));
  const std::uint32_t gtid = blockIdx.x * kRouterThreads + threadIdx.x, gstride = G * kRouterThreads;
  moe_buf_zero_duty<std::uint32_t>(a.moe_buf, a.moe_units, gtid, gstride);

  // 2. The handoff (router_last_block) among the G router blocks: only the block holding the last
  // ticket goes on.
  if (!router_last_block(&decode_router_tickets, G)) return;

  // 3a. The gate of every row: lane group g takes rows g, g + 8 (all groups run the same rounds).
  __shared__ std::int32_t pair_ids[kMaxPairs];
  __shared__ float pair_weights[kMaxPairs];
  float* stage = reinterpret_cast<float*>(smem);
  const int k = a.gate.topk;
  __shared__ float bias_s[kMaxExperts];
  const RouterGateArgs staged = router_stage_bias(a.gate, bias, bias_s);
  router_block_logits(a.partials, a.logits, a.gate.rows, a.gate.experts, a.gate.split_k, stage);
  __syncthreads();
  router_block_gate(staged, stage, pair_ids, pair_weights);
  __syncthreads();
  const int pairs = a.gate.rows * k;
  for (int i = threadIdx.x; i < pairs; i += kRouterThreads) {
    a.ids[i] = pair_ids[i];
    a.weights[i] = pair_weights[i];
  }

  // 3b. The sort (the landed one-launch table; T <= 16 tokens: one bitmap word per expert).
  __shared__ std::uint64_t vals[kMaxExperts], partial[kMxThreads];
  __shared__ std::uint32_t bits[kMaxExperts];
  __shared__ std::int32_t start[kMaxExperts + 1], count[kMaxExperts], local[kMaxExperts], pad_start[kMaxExperts + 1];
  MoeSortTable tb{vals, partial, bits, start, count, local, pad_start, 0, 0};
  const int E = a.gate.experts;
  moe_sort_build_table(tb, pair_ids, nullptr, a.gate.rows, k, E, a.block);
  for (int i = threadIdx.x; i < pairs; i += kRouterThreads) {
    const std::int32_t e = pair_ids[i];
    if (!moe_expert_routed(e, E, nullptr)) continue;
    const int t = i / k, p = start[e] + rank_below(&bits[e], t);
    a.sorted_ids[p] = moe_sort_entry(t, i % k);
    a.sorted_weights[p] = pair_weights[i];
  }
  if (threadIdx.x == 0) {
    a.num_valid_ids[0] = tb.valid;
    a.num_valid_ids[1] = a.gate.rows;
  }
  for (int j = threadIdx.x; j < tb.valid / a.block; j += kRouterThreads)
    a.expert_ids[j] = local[moe_owner(start, E, static_cast<std::int64_t>(j) * a.block)];
  moe_padding_duty(start, count, pad_start, E, tb.valid, tb.padding, moe_sort_sentinel(a.gate.rows, k), a.sorted_ids,
                   a.sorted_weights, nullptr, 0, threadIdx.x, kRouterThreads);
}

// T's tiles: F8's (the small-M kernel's auto rule: 1, 2, 3, 4, 8, 16) and the router GEMV's (1, 2,
// 4, 4, 8, 8 for those), one instance per range of T. F4 always runs F8 at its auto tile (bits do
// not depend on the tile).
template <class Fn>
void with_decode_tiles(std::int64_t rows, Fn&& fn) {
  Fp8GemmParams f8;
  f8.rows = rows;
  with_fp8_gemm_small_m_rows(f8, [&](auto f8_rows) {
    constexpr int kF8 = decltype(f8_rows)::value;
    fn(std::integral_constant<int, kF8 == 3 ? 4 : (kF8 == 16 ? 8 : kF8)>{}, f8_rows);
  });
}

}  // namespace

void decode_router_fused_launch(const DecodeRouterParams& p, const DecodeRouterBuffers& b, void* stream) {
  const RouterParams& r = p.router;
  with_router_weight(r.weight, [&](auto weight) {
    with_decode_tiles(r.rows, [&](auto tile, auto f8_rows) {
      constexpr int kRowTile = decltype(tile)::value;
      DecodeArgs a{b.router.x, b.router.w, b.router.partials, b.router.logits, b.router.topk_ids,
                   b.router.topk_weights, b.sorted_token_ids, b.sorted_weights, b.sorted_expert_ids, b.num_valid_ids,
                   b.moe_buf, static_cast<std::uint32_t>(r.rows * p.buf_cols / 8), router_gemv_shape(r, kRowTile),
                   RouterGateArgs{static_cast<int>(r.rows), static_cast<int>(r.experts), static_cast<int>(r.split_k),
                                  static_cast<int>(r.topk), r.gate, r.routed_scaling, b.router.bias},
                   static_cast<int>(p.block), 0, p.shared, b.shared};
      constexpr int kF8Rows = decltype(f8_rows)::value;
      const std::int64_t f8_blocks =
          p.shared.cols > 0 ? (p.shared.cols + kF8Columns - 1) / kF8Columns * ((r.rows + kF8Rows - 1) / kF8Rows) : 0;
      // Router blocks: one per GEMV item; beside F8's blocks (one block of this kernel fits an SM:
      // about 200 registers a thread), as many as leave one wave for all, but at most two items a block.
      const std::int64_t items = a.sh.items();
      std::int64_t g = items;
      if (f8_blocks > 0)
        g = std::min<std::int64_t>(items, std::max<std::int64_t>(device_multiprocessors() - f8_blocks, (items + 1) / 2));
      a.router_blocks = p.grid_blocks > 0 ? p.grid_blocks : static_cast<int>(g);
      const auto grid = static_cast<unsigned>(a.router_blocks + f8_blocks);
      decode_router_kernel<decltype(weight)::value, kRowTile, decltype(f8_rows)::value>
          <<<grid, kRouterThreads, 0, static_cast<hipStream_t>(stream)>>>(a);
    });
  });
  gpu_check_launch("decode_router_kernel");
}

void decode_router_chain_launch(const DecodeRouterParams& p, const DecodeRouterBuffers& b, void* stream) {
  router_chain_launch(p.router, b.router, stream);
  const MoeSortMxfp4Params sp = p.sort();
  const MoeSortMxfp4Buffers sb = b.sort();
  moe_sort_count_launch(sp, sb, stream);
  moe_sort_scan_launch(sp, sb, stream);
  moe_sort_scatter_launch(sp, sb, true, stream);
  if (p.shared.cols > 0) fp8_gemm_small_m_launch(p.shared, b.shared, stream);  // F8, its own launch
}

}  // namespace fb
