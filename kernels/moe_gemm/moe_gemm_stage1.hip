// MoE stage 1: for each sorted position p < num_valid_ids[0] with a real token, gate and up are the
// MXFP4 dot products of xq[token] (scales at sorted position p) with rows n and I + n of the
// block's expert in W13, in the canonical order of moe_gemm_math.hpp; a1[token*k + slot][n] =
// bf16(SwiGLU(gate, up)). Two engines, the same bits:
//   exact  a CTA takes one sort block and 64 output columns (32 where I % 64 != 0): warp w owns 16
//          of them (a gate tile of W13 rows and the matching up tile, the MMA's A), walks the
//          block 16 rows (two groups of 8 tokens, the MMA's B) at a time up to the padding, and forms
//          the block sums with one m16n8k32 fp8 MMA per tile, group and 32-K block, promoted on
//          the CUDA cores in K order; gate and up of an element sit at the same fragment position,
//          so SwiGLU runs in registers. Code: moe_gemm_exact.hpp (shared with the CPU simulation).
//          On AMD, where FUSEBENCH_MOE_MFMA=1 asks for it and the device has integer MFMA, the
//          exact engine is moe_gemm_mfma.hip (waves of 64 lanes, the same bits); otherwise these
//          warp kernels with scalar integer block sums.
//   plain  one thread per output column, each row of the sort block in turn, scalar integer sums.
// No split-K, no atomics: deterministic. The K loop is software-pipelined in registers (stages of
// 4 blocks at decode, moe_gemm_exact.hpp); no shared-memory staging yet (README: "Speed").
#include "kernels/common/gpu_check.hpp"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_gemm/moe_gemm_decode.hpp"
#include "kernels/moe_gemm/moe_gemm_exact.hpp"
#include "kernels/moe_gemm/moe_gemm_mfma.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"

namespace fb {
namespace {

constexpr int kPlainThreads = 128;   // plain: columns per CTA
constexpr int kMaxBlock = 128;       // B


// At most 4 warps; 4 CTAs per SM (128 registers: ptxas fills them with the pipelined K loop, no
// spills) so 16 warps stream weights at decode.
template <bool kOai, bool kNarrow>
__global__ __launch_bounds__(128, 4) void moe_stage1_exact_kernel(Stage1Args a) {
  const std::int64_t valid = moe_valid_entries(a.num_valid_ids[0], a.max_entries);
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * a.block;
  if (first >= valid) return;  // the whole CTA: blocks past the sorted entries
  __shared__ std::int32_t entries[kMaxBlock];
  for (int r = threadIdx.x; r < a.block; r += blockDim.x)  // rows past the count read as padding
    entries[r] = first + r < valid ? a.sorted_token_ids[first + r] : kPadEntry;
  __syncthreads();

  const int warps = static_cast<int>(blockDim.x / 32), warp = static_cast<int>(threadIdx.x / 32);
  constexpr int kCols = kNarrow ? kStage1NarrowCols : kStage1Cols;
  moe_stage1_exact_warp<kOai, kNarrow>(a, entries, first, a.sorted_expert_ids[blockIdx.y],
                                       (static_cast<std::int64_t>(blockIdx.x) * warps + warp) * kCols,
                                       static_cast<int>(threadIdx.x & 31));
}

template <bool kOai>
__global__ __launch_bounds__(kPlainThreads) void moe_stage1_plain_kernel(Stage1Args a) {
  const std::int64_t valid = moe_valid_entries(a.num_valid_ids[0], a.max_entries);
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * a.block;
  if (first >= valid) return;
  const std::int64_t I = a.inter, row_bytes = a.hidden / 2, nb = a.hidden / 32, pad = (nb + 7) / 8 * 8;
  const std::int64_t n = static_cast<std::int64_t>(blockIdx.x) * kPlainThreads + threadIdx.x;
  if (n >= I) return;
  const std::int64_t e = a.sorted_expert_ids[blockIdx.y];
  const std::uint8_t* wg = a.w13 + (e * 2 * I + n) * row_bytes;
  const std::uint8_t* wu = a.w13 + (e * 2 * I + I + n) * row_bytes;
  const std::uint8_t* sg = a.w13_scales + (e * 2 * I + n) * nb;
  const std::uint8_t* su = a.w13_scales + (e * 2 * I + I + n) * nb;
  for (std::int64_t r = 0; r < a.block && first + r < valid; ++r) {
    const std::int32_t entry = a.sorted_token_ids[first + r];
    const std::int64_t tok = moe_entry_token(entry);
    if (tok >= a.tokens) continue;  // sentinel
    const std::uint8_t* x = a.xq + tok * row_bytes;
    float gate = 0.0f, up = 0.0f;
    for (std::int64_t y = 0; y < nb; ++y) {
      const std::uint8_t sa = a.x_scales[mx_scale_addr(first + r, y, pad)];
      gate = mx_block_promote(gate, mx_block_sum_quarters(x + 16 * y, wg + 16 * y), sa, sg[y]);
      up = mx_block_promote(up, mx_block_sum_quarters(x + 16 * y, wu + 16 * y), sa, su[y]);
    }
    a.a1[(tok * a.topk + moe_entry_slot(entry)) * I + n] = bf16_from_float(moe_swiglu(kOai, gate, up));
  }
}

}  // namespace

void moe_stage1_launch(const MoeGemmParams& p, const MoeStage1Buffers& b, void* stream) {
  if (moe_wgmma_takes(p, true)) {  // prefill on sm_90a: exact's bits, or fast's form (moe_gemm_wgmma.hip)
    moe_stage1_wgmma_launch(p, b, stream);
    return;
  }
  if (moe_decode_takes(p, true)) {  // decode on sm_90a: exact's bits (moe_gemm_decode.hip)
    moe_stage1_decode_launch(p, b, stream);
    return;
  }
  if (moe_mfma_takes(p, true)) {  // AMD, FUSEBENCH_MOE_MFMA=1: exact's bits (moe_gemm_mfma.hip)
    moe_stage1_mfma_launch(p, b, stream);
    return;
  }
  const Stage1Args a{b.sorted_token_ids, b.sorted_expert_ids, b.num_valid_ids, b.xq, b.x_scales, b.w13,
                     b.w13_scales,       b.a1,              p.tokens,        p.topk, p.block, p.hidden, p.inter,
                     p.max_entries()};
  const auto s = static_cast<hipStream_t>(stream);
  const auto blocks = static_cast<unsigned>(p.max_blocks());
  // The exact engine's 32-bit activation offsets cover every m31 shape; past them, plain (same bits).
  // fast runs the exact kernels where the wgmma engine does not take it (moe_gemm.hpp).
  if (p.engine != MoeGemmEngine::plain && moe_exact_fits(p.tokens, p.hidden / 2)) {
    // Wide warps own 16 output columns (gate and up tiles), narrow ones 8 (one mixed tile):
    // moe_stage1_narrow, where the wide grid would leave the SMs few warps.
    const bool narrow = moe_stage1_narrow(p.tokens, p.topk, p.experts, p.inter, device_multiprocessors());
    const int cols = narrow ? kStage1NarrowCols : kStage1Cols;
    const int warps = moe_exact_warps(p.inter, cols);
    const dim3 grid(static_cast<unsigned>(p.inter / (cols * warps)), blocks);
    const auto threads = static_cast<unsigned>(32 * warps);
    if (narrow && p.oai)
      moe_stage1_exact_kernel<true, true><<<grid, threads, 0, s>>>(a);
    else if (narrow)
      moe_stage1_exact_kernel<false, true><<<grid, threads, 0, s>>>(a);
    else if (p.oai)
      moe_stage1_exact_kernel<true, false><<<grid, threads, 0, s>>>(a);
    else
      moe_stage1_exact_kernel<false, false><<<grid, threads, 0, s>>>(a);
    gpu_check_launch("moe_stage1_exact_kernel");
    return;
  }
  const dim3 grid(static_cast<unsigned>((p.inter + kPlainThreads - 1) / kPlainThreads), blocks);
  if (p.oai)
    moe_stage1_plain_kernel<true><<<grid, kPlainThreads, 0, s>>>(a);
  else
    moe_stage1_plain_kernel<false><<<grid, kPlainThreads, 0, s>>>(a);
  gpu_check_launch("moe_stage1_plain_kernel");
}

}  // namespace fb
