// moe_sort_quant_large (F5, T > 1024): four launches.
//   1 moe_sort_quant_large_rows_kernel (here), block families in one grid:
//       blocks [0, chunks)   per-chunk expert counts (moe_sort_count_block)
//       the rest             row-order quant like the chain's quant_rows (mx_quant_rows_block):
//                            e2m1 bytes and compact per-row scales [rows][K/32], all coalesced
//       every block          a grid-strided share of the moe_buf zeroing
//   2 moe_sort_scan_kernel     offsets, expert table, num_valid_ids, sorted_expert_ids (shared)
//   3 moe_sort_scatter_kernel  sorted ids and weights, sentinels (shared, without moe_buf zeroing)
//   4 moe_sort_quant_large_gather_kernel (here): the swizzled sorted scales, word-wise. Each
//     thread owns rows p and p + 16 of a 32-row tile and one 8-column group: two 8-byte loads of
//     per-row scales, four whole words stored (16 lanes write 64 contiguous bytes), every byte of
//     the written tiles, sentinels, pad columns and rows past num_valid_ids[0] included.
// Against the chain: the count, the quant and the moe_buf zeroing share one launch (the quant is
// instruction-bound, the zeroing store-bound), and the scale sort moves whole words by (row,
// group) instead of decoding every byte's (p, y). The earlier design stored each scale byte at
// its k sorted positions from the quant (one byte per store, 8 sectors per warp store): 2.2x the
// chain's quant_rows at T = 32768.
// NOTE: 32-bit element offsets into x, xq and moe_buf; the dispatcher only comes here while
// rows * K and T * D stay below 2^31 (T <= 349,525 at K = 6144).
#include <algorithm>

#include "kernels/common/gpu_check.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_device.hpp"

namespace fb {
namespace {

constexpr int kGatherLanes = 16;                            // lanes per (tile, group) slot
constexpr int kGatherSlots = kMxThreads / kGatherLanes;     // slots per block

template <MxScaleRule kRule, Fp4Rounding kRounding>
__global__ __launch_bounds__(kMxThreads) void moe_sort_quant_large_rows_kernel(
    const std::int32_t* ids, const std::int32_t* mask, std::int32_t* chunk_counts, const std::uint16_t* x,
    std::uint8_t* xq, std::uint8_t* row_scales, std::uint16_t* moe_buf, int tokens, int topk, int experts,
    std::uint32_t chunks, std::uint32_t vectors, std::uint32_t moe_units) {
  extern __shared__ std::uint64_t moe_sort_quant_large_smem[];  // [E] counts, count blocks only
  if (blockIdx.x < chunks)
    moe_sort_count_block(ids, mask, chunk_counts, tokens, topk, experts, static_cast<int>(blockIdx.x),
                         reinterpret_cast<std::int32_t*>(moe_sort_quant_large_smem));
  else
    mx_quant_rows_block<kRule, kRounding, std::uint32_t>(x, xq, row_scales, vectors, blockIdx.x - chunks);
  moe_buf_zero_duty<std::uint32_t>(moe_buf, moe_units, blockIdx.x * kMxThreads + threadIdx.x, gridDim.x * kMxThreads);
}

// Slot q = (tile q / groups, 8-column group q % groups) covers bytes [256 q, 256 q + 256) (see
// mx_scale_word). 32-bit q: slots are 256 bytes of an allocated buffer. kWide: K/32 % 8 == 0, so
// each group is 8 aligned bytes of a row (no pad columns); otherwise byte loads, pad columns 0.
template <bool kWide>
__global__ __launch_bounds__(kMxThreads) void moe_sort_quant_large_gather_kernel(
    const std::int32_t* sorted_ids, const std::int32_t* num_valid_ids, const std::uint8_t* row_scales,
    std::uint8_t* scales, int tokens, int topk, MoeStage stage, int scale_cols, std::uint32_t groups) {
  const std::uint32_t q = blockIdx.x * kGatherSlots + threadIdx.x / kGatherLanes;
  const std::uint32_t tile = q / groups, group = q - tile * groups;
  const std::int64_t valid = num_valid_ids[0];
  if (static_cast<std::int64_t>(tile) * 32 >= valid) return;  // tiles past num_valid_ids[0]: not written
  const auto group_of = [&](std::int64_t p) -> std::uint64_t {
    if (p >= valid) return 0;
    const std::int32_t entry = sorted_ids[p];
    if (moe_entry_token(entry) >= tokens) return 0;  // sentinel
    const std::uint8_t* row =
        row_scales + static_cast<std::uint32_t>(mx_source_row(entry, topk, stage)) * static_cast<std::uint32_t>(scale_cols);
    if constexpr (kWide)
      return *reinterpret_cast<const std::uint64_t*>(row + 8 * group);
    else
      return mx_row_scale_group(row, scale_cols, group);
  };
  const std::int64_t p = static_cast<std::int64_t>(tile) * 32 + threadIdx.x % kGatherLanes;
  const std::uint64_t a = group_of(p), b = group_of(p + 16);
  std::uint32_t* out = reinterpret_cast<std::uint32_t*>(scales + static_cast<std::uint64_t>(q) * 256) +
                       threadIdx.x % kGatherLanes;
#pragma unroll
  for (int c = 0; c < 4; ++c) out[16 * c] = mx_scale_word(a, b, c);
}

}  // namespace

void moe_sort_quant_large_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  const std::int64_t vectors = p.rows() * p.cols / 8;
  const auto grid = static_cast<unsigned>(p.chunks() + grid_for(vectors, kMxRound));
  const std::size_t smem = static_cast<std::size_t>(p.experts) * 4;
  with_mx_options(p.rule, p.rounding, [&](auto rule, auto rounding) {
    moe_sort_quant_large_rows_kernel<decltype(rule)::value, decltype(rounding)::value><<<grid, kMxThreads, smem, s>>>(
        b.topk_ids, b.expert_mask, b.chunk_counts, b.x, b.xq, b.row_scales, b.moe_buf, static_cast<int>(p.tokens),
        static_cast<int>(p.topk), static_cast<int>(p.experts), static_cast<std::uint32_t>(p.chunks()),
        static_cast<std::uint32_t>(vectors), static_cast<std::uint32_t>(p.tokens * p.buf_cols / 8));
  });
  gpu_check_launch("moe_sort_quant_large_rows_kernel");
  moe_sort_scan_launch(p, b, stream);
  moe_sort_scatter_launch(p, b, false, stream);
  // Sized for the largest num_valid_ids[0]; slots past the written tiles return at once.
  const std::int64_t groups = p.scale_cols_pad() / 8, slots = p.scale_rows() / 32 * groups;
  const unsigned gather_grid = grid_for(slots, kGatherSlots);
  const int tokens = static_cast<int>(p.tokens), topk = static_cast<int>(p.topk), cols = static_cast<int>(p.scale_cols());
  if (p.scale_cols() % 8 == 0)
    moe_sort_quant_large_gather_kernel<true><<<gather_grid, kMxThreads, 0, s>>>(
        b.sorted_token_ids, b.num_valid_ids, b.row_scales, b.scales, tokens, topk, p.stage, cols,
        static_cast<std::uint32_t>(groups));
  else
    moe_sort_quant_large_gather_kernel<false><<<gather_grid, kMxThreads, 0, s>>>(
        b.sorted_token_ids, b.num_valid_ids, b.row_scales, b.scales, tokens, topk, p.stage, cols,
        static_cast<std::uint32_t>(groups));
  gpu_check_launch("moe_sort_quant_large_gather_kernel");
}

}  // namespace fb
