// moe_sort_quant_large (F5, T > 1024): four launches.
//   1 moe_sort_count_kernel    per-chunk expert counts                       (moe_sort_mxfp4_sort.hip)
//   2 moe_sort_scan_kernel     offsets, expert table, num_valid_ids, sorted_expert_ids
//   3 moe_sort_scatter_kernel  sorted ids and weights, sentinels, each pair's sorted position,
//                              zero scale bytes of sentinel rows and of rows past num_valid_ids[0]
//   4 moe_sort_quant_large_quant_kernel (here): each row tile is read once; e2m1 bytes in row
//                              order and each block's scale straight to the sorted positions of
//                              its row (no per-row scale round trip, no scale-sort launch); the
//                              same grid zeroes moe_buf.
// Against the chain: one launch and the per-row scale buffer (write + read) fewer.
// NOTE: 32-bit element offsets into x, xq and moe_buf; the dispatcher only comes here while
// rows * K and T * D stay below 2^31 (T <= 349,525 at K = 6144).
#include "kernels/common/gpu_check.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_device.hpp"

namespace fb {
namespace {

template <MxScaleRule kRule, Fp4Rounding kRounding>
__global__ __launch_bounds__(kMxThreads) void moe_sort_quant_large_quant_kernel(
    const std::uint16_t* x, std::uint8_t* xq, std::uint8_t* scales, const std::int32_t* pair_pos,
    std::uint16_t* moe_buf, std::uint32_t rows, std::uint32_t vectors_per_row, std::uint32_t tile_rows, int slots,
    int scale_cols, int cols_pad, std::uint32_t moe_units) {
  __shared__ std::int32_t pos[kPositionCache];
  const std::uint32_t row0 = blockIdx.x * tile_rows;
  const MxTile t{row0, min(tile_rows, rows - row0), vectors_per_row};
  Bf16x8 v[kMxUnroll];
  mx_tile_load(x, t, 0, v);  // in flight while the positions arrive
  // Row r of the tile owns pairs [(row0 + r) * slots, ... + slots): contiguous in pair_pos.
  for (std::uint32_t i = threadIdx.x; i < t.rows * slots; i += kMxThreads) pos[i] = pair_pos[row0 * slots + i];
  __syncthreads();
  for (std::uint32_t round = 0; round < t.rounds(); ++round) {
    if (round > 0) mx_tile_load(x, t, round, v);
    mx_tile_quantize<kRule, kRounding>(t, round, v, xq, scales, pos, slots, scale_cols, cols_pad);
  }
  moe_buf_zero_duty<std::uint32_t>(moe_buf, moe_units, blockIdx.x * kMxThreads + threadIdx.x, gridDim.x * kMxThreads);
}

}  // namespace

void moe_sort_quant_large_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream) {
  moe_sort_count_launch(p, b, stream);
  moe_sort_scan_launch(p, b, stream);
  moe_sort_scatter_launch(p, b, true, stream);
  with_mx_options(p.rule, p.rounding, [&](auto rule, auto rounding) {
    moe_sort_quant_large_quant_kernel<decltype(rule)::value, decltype(rounding)::value>
        <<<static_cast<unsigned>(p.tiles()), kMxThreads, 0, static_cast<hipStream_t>(stream)>>>(
            b.x, b.xq, b.scales, b.pair_pos, b.moe_buf, static_cast<std::uint32_t>(p.rows()),
            static_cast<std::uint32_t>(p.cols / 8), static_cast<std::uint32_t>(p.tile_rows()),
            static_cast<int>(p.slots_per_row()), static_cast<int>(p.scale_cols()), static_cast<int>(p.scale_cols_pad()),
            static_cast<std::uint32_t>(p.tokens * p.buf_cols / 8));
  });
  gpu_check_launch("moe_sort_quant_large_quant_kernel");
}

}  // namespace fb
