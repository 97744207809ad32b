// moe_sort_quant (F5, T <= 1024): the MoE sort and the MXFP4 quant in one launch, and the fused
// role's dispatcher (moe_sort_mxfp4_fused_launch).
//
// A persistent grid (at most two blocks per multiprocessor); every block builds the whole sort
// table in shared memory once (the routing is at most 1024 x k ids, read from L2): a bitmap [E][T/32] of which tokens each expert receives (atomicOr: bits only get
// set, so arrival order is irrelevant), counts by popcount, and the packed exclusive scan that gives
// each expert's start, local id and padding. Pair (t, s) of expert e then sits at
//   start[e] + (set bits of expert e's row below t)
// which is the contract's order, computed identically by every block. With that table a block
//   1 issues the loads of its first row tile (they fly while the table is built),
//   2 for each of its tiles (index = blockIdx.x, + gridDim.x, ...): writes the sorted entries of
//     the tile rows' pairs and caches their positions,
//   3 quantizes the tile: e2m1 bytes in row order, each block's scale straight to its row's
//     sorted positions (pad columns 0),
//   4 takes a grid-strided share of num_valid_ids, sorted_expert_ids, sentinels, zero scale rows
//     and moe_buf.
// Every output element has exactly one writer. 32-bit offsets (the dispatcher checks the limit).
#include <algorithm>

#include "kernels/common/gpu_check.hpp"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_device.hpp"

namespace fb {
namespace {

struct OneLaunchArgs {
  const std::int32_t* ids;
  const float* weights;
  const std::uint16_t* x;
  const std::int32_t* mask;
  std::int32_t* sorted_ids;
  float* sorted_weights;
  std::int32_t* expert_ids;
  std::int32_t* num_valid_ids;
  std::uint16_t* moe_buf;
  std::uint8_t* xq;
  std::uint8_t* scales;
  int tokens, topk, experts, block, slots, scale_cols, cols_pad;
  std::uint32_t rows, vectors_per_row, tile_rows, tiles, moe_units;
};

template <MxScaleRule kRule, Fp4Rounding kRounding>
__global__ __launch_bounds__(kMxThreads) void moe_sort_quant_kernel(OneLaunchArgs a) {
  // Shared memory: scan values [E] u64, scan partials [256] u64, bitmap [E][W] u32, start [E+1],
  // count [E], local [E], pad_start [E+1], position cache (MoeSortMxfp4Params::one_launch_smem_bytes).
  extern __shared__ std::uint64_t moe_sort_quant_smem[];
  const int E = a.experts, W = (a.tokens + 31) / 32;
  std::uint64_t* vals = moe_sort_quant_smem;
  std::uint64_t* partial = vals + E;
  auto* bits = reinterpret_cast<std::uint32_t*>(partial + kMxThreads);
  auto* start = reinterpret_cast<std::int32_t*>(bits + E * W);
  std::int32_t* count = start + E + 1;
  std::int32_t* local = count + E;
  std::int32_t* pad_start = local + E;
  std::int32_t* pos = pad_start + E + 1;

  // 1. The first of this block's row tiles (blocks past the last tile only take duties): its loads
  // fly while the table is built.
  auto tile_at = [&](std::uint32_t index) {
    const std::uint32_t row0 = index * a.tile_rows;
    return MxTile{row0, index < a.tiles ? min(a.tile_rows, a.rows - row0) : 0u, a.vectors_per_row};
  };
  Bf16x8 v[kMxUnroll];
  mx_tile_load(a.x, tile_at(blockIdx.x), 0, v);

  // The sort table.
  MoeSortTable tb{vals, partial, bits, start, count, local, pad_start, 0, 0};
  moe_sort_build_table(tb, a.ids, a.mask, a.tokens, a.topk, E, a.block);
  const std::int32_t valid = tb.valid, padding = tb.padding;

  // 2, 3. Persistent over tiles (the table above is built once per block): the pairs of each
  // tile's rows (sorted entries, positions cached), then the tile's quant.
  for (std::uint32_t index = blockIdx.x; index < a.tiles; index += gridDim.x) {
    const MxTile tile = tile_at(index);
    if (index != blockIdx.x) mx_tile_load(a.x, tile, 0, v);
    for (std::uint32_t i = threadIdx.x; i < tile.rows * a.slots; i += kMxThreads) {
      const int pair = static_cast<int>(tile.row0 * a.slots + i), t = pair / a.topk;
      const std::int32_t e = a.ids[pair];
      std::int32_t p = -1;
      if (moe_expert_routed(e, E, a.mask)) {
        p = start[e] + rank_below(&bits[e * W], t);
        a.sorted_ids[p] = moe_sort_entry(t, pair % a.topk);
        a.sorted_weights[p] = a.weights[pair];
      }
      pos[i] = p;
    }
    __syncthreads();
    for (std::uint32_t round = 0; round < tile.rounds(); ++round) {
      if (round > 0) mx_tile_load(a.x, tile, round, v);
      mx_tile_quantize<kRule, kRounding>(tile, round, v, a.xq, a.scales, pos, a.slots, a.scale_cols, a.cols_pad);
    }
    __syncthreads();  // the next tile rewrites pos
  }

  // 4. Grid-strided duties.
  const std::int64_t gtid = static_cast<std::int64_t>(blockIdx.x) * kMxThreads + threadIdx.x;
  const std::int64_t gstride = static_cast<std::int64_t>(gridDim.x) * kMxThreads;
  if (gtid == 0) {
    a.num_valid_ids[0] = valid;
    a.num_valid_ids[1] = a.tokens;
  }
  for (std::int64_t j = gtid; j < valid / a.block; j += gstride)
    a.expert_ids[j] = local[moe_owner(start, E, j * a.block)];
  moe_padding_duty(start, count, pad_start, E, valid, padding, moe_sort_sentinel(a.tokens, a.topk), a.sorted_ids,
                   a.sorted_weights, a.scales, a.cols_pad, gtid, gstride);
  moe_buf_zero_duty<std::uint32_t>(a.moe_buf, a.moe_units, static_cast<std::uint32_t>(gtid),
                                   static_cast<std::uint32_t>(gstride));
}

}  // namespace

void moe_sort_quant_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream) {
  OneLaunchArgs a{b.topk_ids, b.topk_weights, b.x, b.expert_mask, b.sorted_token_ids, b.sorted_weights,
                  b.sorted_expert_ids, b.num_valid_ids, b.moe_buf, b.xq, b.scales,
                  static_cast<int>(p.tokens), static_cast<int>(p.topk), static_cast<int>(p.experts),
                  static_cast<int>(p.block), static_cast<int>(p.slots_per_row()), static_cast<int>(p.scale_cols()),
                  static_cast<int>(p.scale_cols_pad()), static_cast<std::uint32_t>(p.rows()),
                  static_cast<std::uint32_t>(p.cols / 8), static_cast<std::uint32_t>(p.tile_rows()),
                  static_cast<std::uint32_t>(p.tiles()), static_cast<std::uint32_t>(p.tokens * p.buf_cols / 8)};
  // Enough blocks for the duties too: the zero scale rows (at most min(E, T*k) * (B - 1) + 31 rows)
  // and moe_buf, at about 8 items per thread.
  // Persistent: at most two blocks per multiprocessor (each builds the sort table once), fewer when
  // the tiles and duties (zero scale rows at one item per thread, moe_buf at 8 vectors) need fewer.
  const std::int64_t duty = std::max<std::int64_t>(grid_for(moe_padding_duty_items(p), kMxThreads),
                                                   grid_for(p.tokens * p.buf_cols / 8, kMxThreads * 8));
  const auto grid = static_cast<unsigned>(
      std::max<std::int64_t>(1, std::min<std::int64_t>(std::max(p.tiles(), duty), 2 * std::int64_t{device_multiprocessors()})));
  with_mx_options(p.rule, p.rounding, [&](auto rule, auto rounding) {
    moe_sort_quant_kernel<decltype(rule)::value, decltype(rounding)::value>
        <<<grid, kMxThreads, static_cast<std::size_t>(p.one_launch_smem_bytes()), static_cast<hipStream_t>(stream)>>>(a);
  });
  gpu_check_launch("moe_sort_quant_kernel");
}

void moe_sort_mxfp4_fused_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream) {
  switch (moe_sort_quant_path(p)) {
    case MoeSortQuantPath::one_launch: moe_sort_quant_launch(p, b, stream); return;
    case MoeSortQuantPath::four_launch: moe_sort_quant_large_launch(p, b, stream); return;
    case MoeSortQuantPath::chain: moe_sort_mxfp4_chain_launch(p, b, stream); return;
  }
}

}  // namespace fb
