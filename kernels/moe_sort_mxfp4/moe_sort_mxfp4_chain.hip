// F5 chain (what the fusion replaces, aiter's multi-phase path): five plain launches.
//   sort (moe_sort_mxfp4_sort.hip)  count -> scan -> scatter, which also zeroes moe_buf
//   mxfp4_quant_rows_kernel         every row, in order: e2m1 bytes and per-row scales [rows][K/32]
//   mxfp4_scale_sort_kernel         every 4-byte word of the written scale tiles, in address order:
//                                   the scale of the row its sorted entry reads, 0 for sentinels,
//                                   pad columns and rows past num_valid_ids[0]
// 64-bit offsets throughout, so the chain serves every T (the fused role falls back to it where
// the fused kernels' 32-bit offsets would overflow). Arithmetic: moe_sort_mxfp4_math.hpp.
#include "kernels/common/gpu_check.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_device.hpp"

namespace fb {
namespace {

template <MxScaleRule kRule, Fp4Rounding kRounding>
__global__ __launch_bounds__(kMxThreads) void mxfp4_quant_rows_kernel(const std::uint16_t* x, std::uint8_t* xq,
                                                                      std::uint8_t* row_scales, std::int64_t vectors) {
  mx_quant_rows_block<kRule, kRounding, std::int64_t>(x, xq, row_scales, vectors, blockIdx.x);
}

__global__ __launch_bounds__(kMxThreads) void mxfp4_scale_sort_kernel(
    const std::int32_t* sorted_ids, const std::int32_t* num_valid_ids, const std::uint8_t* row_scales,
    std::uint8_t* scales, std::int64_t tokens, std::int64_t topk, MoeStage stage, std::int64_t scale_cols,
    std::int64_t cols_pad) {
  const std::int64_t valid = num_valid_ids[0];
  const std::int64_t word = static_cast<std::int64_t>(blockIdx.x) * kMxThreads + threadIdx.x;
  if (4 * word >= (valid + 31) / 32 * 32 * cols_pad) return;  // tiles past num_valid_ids[0]: not written
  std::uint32_t out = 0;
  for (int byte = 0; byte < 4; ++byte) {
    const MxScaleCoord c = mx_scale_coord(4 * word + byte, cols_pad);
    if (c.p >= valid || c.y >= scale_cols) continue;
    const std::int32_t entry = sorted_ids[c.p];
    if (moe_entry_token(entry) >= tokens) continue;  // sentinel
    out |= static_cast<std::uint32_t>(row_scales[mx_source_row(entry, topk, stage) * scale_cols + c.y]) << (8 * byte);
  }
  reinterpret_cast<std::uint32_t*>(scales)[word] = out;
}

}  // namespace

void mxfp4_quant_rows_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream) {
  const std::int64_t vectors = p.rows() * p.cols / 8;
  with_mx_options(p.rule, p.rounding, [&](auto rule, auto rounding) {
    mxfp4_quant_rows_kernel<decltype(rule)::value, decltype(rounding)::value>
        <<<grid_for(vectors, kMxRound), kMxThreads, 0, static_cast<hipStream_t>(stream)>>>(b.x, b.xq, b.row_scales,
                                                                                        vectors);
  });
  gpu_check_launch("mxfp4_quant_rows_kernel");
}

void mxfp4_scale_sort_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream) {
  // Sized for the largest num_valid_ids[0]; threads past the written tiles return at once.
  const std::int64_t words = p.scale_rows() * p.scale_cols_pad() / 4;
  mxfp4_scale_sort_kernel<<<grid_for(words, kMxThreads), kMxThreads, 0, static_cast<hipStream_t>(stream)>>>(
      b.sorted_token_ids, b.num_valid_ids, b.row_scales, b.scales, p.tokens, p.topk, p.stage, p.scale_cols(),
      p.scale_cols_pad());
  gpu_check_launch("mxfp4_scale_sort_kernel");
}

void moe_sort_mxfp4_chain_launch(const MoeSortMxfp4Params& p, const MoeSortMxfp4Buffers& b, void* stream) {
  moe_sort_count_launch(p, b, stream);
  moe_sort_scan_launch(p, b, stream);
  moe_sort_scatter_launch(p, b, true, stream);  // with moe_buf zeroing
  mxfp4_quant_rows_launch(p, b, stream);
  mxfp4_scale_sort_launch(p, b, stream);
}

}  // namespace fb
