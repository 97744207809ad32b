// MoE stage 2 and the shared-expert fold (F6). Launches:
//   1. GEMM: for each sorted position p < num_valid_ids[0] with a real token, y[token*k + slot][d]
//      = fl32(w_p * dot(a2q[token*k + slot] (scales at p), W2[e][d])), the dot product in the
//      canonical order of moe_gemm_math.hpp. Engines as in stage 1 (exact: m16n8k32 fp8 block
//      sums, a warp = 32 output columns (two 16-row tiles of W2) over the block's tokens, up to 4
//      warps per CTA; plain: one thread per column).
//   2. reduce: out[t][d] = bf16(sum), sum = +0 then + y[t*k + s][d] for s = 0 .. k-1 in order;
//      fold adds f32(shared[t][d]) to the sum before the one rounding.
//   3. chain only: out = bf16(f32(out) + f32(shared)).
// Every pair is routed (validated routing, no expert mask), so every y row read is written.
#include "kernels/common/gpu_check.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_gemm/moe_gemm_decode.hpp"
#include "kernels/moe_gemm/moe_gemm_exact.hpp"
#include "kernels/moe_gemm/moe_gemm_mfma.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"

namespace fb {
namespace {

constexpr int kPlainThreads = 128;
constexpr int kReduceThreads = 256;
constexpr int kMaxBlock = 128;


// At most 4 warps; 5 CTAs per SM (96 registers, no spills): at T = 3 the 576 CTAs (48 column
// slices x 12 sort blocks) are one wave on 132 SMs; at 128 registers they would be 1.1 waves.
__global__ __launch_bounds__(128, 5) void moe_stage2_exact_kernel(Stage2Args a) {
  const std::int64_t valid = moe_valid_entries(a.num_valid_ids[0], a.max_entries);
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * a.block;
  if (first >= valid) return;
  __shared__ std::int32_t entries[kMaxBlock];
  __shared__ float weights[kMaxBlock];
  for (int r = threadIdx.x; r < a.block; r += blockDim.x) {
    const bool live = first + r < valid;  // rows past the count read as padding
    entries[r] = live ? a.sorted_token_ids[first + r] : kPadEntry;
    weights[r] = live ? a.sorted_weights[first + r] : 0.0f;
  }
  __syncthreads();

  const int warps = static_cast<int>(blockDim.x / 32), warp = static_cast<int>(threadIdx.x / 32);
  moe_stage2_exact_warp(a, entries, weights, first, a.sorted_expert_ids[blockIdx.y],
                        (static_cast<std::int64_t>(blockIdx.x) * warps + warp) * 32, static_cast<int>(threadIdx.x & 31));
}

__global__ __launch_bounds__(kPlainThreads) void moe_stage2_plain_kernel(Stage2Args a) {
  const std::int64_t valid = moe_valid_entries(a.num_valid_ids[0], a.max_entries);
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * a.block;
  if (first >= valid) return;
  const std::int64_t K = a.hidden, row_bytes = a.inter / 2, nb = a.inter / 32, pad = (nb + 7) / 8 * 8;
  const std::int64_t d = static_cast<std::int64_t>(blockIdx.x) * kPlainThreads + threadIdx.x;
  if (d >= K) return;
  const std::int64_t e = a.sorted_expert_ids[blockIdx.y];
  const std::uint8_t* w = a.w2 + (e * K + d) * row_bytes;
  const std::uint8_t* sw = a.w2_scales + (e * K + d) * nb;
  for (std::int64_t r = 0; r < a.block && first + r < valid; ++r) {
    const std::int32_t entry = a.sorted_token_ids[first + r];
    const std::int64_t tok = moe_entry_token(entry);
    if (tok >= a.tokens) continue;
    const std::int64_t row = tok * a.topk + moe_entry_slot(entry);
    const std::uint8_t* x = a.a2q + row * row_bytes;
    float acc = 0.0f;
    for (std::int64_t y = 0; y < nb; ++y)
      acc = mx_block_promote(acc, mx_block_sum_quarters(x + 16 * y, w + 16 * y),
                             a.a2_scales[mx_scale_addr(first + r, y, pad)], sw[y]);
    a.y[row * K + d] = a.sorted_weights[first + r] * acc;
  }
}

template <MoeSharedMode kMode>
__global__ __launch_bounds__(kReduceThreads) void moe_stage2_reduce_kernel(const float* y, const std::uint16_t* shared,
                                                                            std::uint16_t* out, std::int64_t tokens,
                                                                            std::int64_t topk, std::int64_t hidden) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x;
  if (i < tokens * hidden) out[i] = moe_reduce_element<kMode>(y, shared, topk, hidden, i);
}

__global__ __launch_bounds__(kReduceThreads) void moe_shared_add_kernel(const std::uint16_t* shared, std::uint16_t* out,
                                                                         std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kReduceThreads + threadIdx.x;
  if (i < n) out[i] = moe_finish_chain(out[i], shared[i]);
}

unsigned grid_1d(std::int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace

void moe_stage2_launch(const MoeGemmParams& p, const MoeStage2Buffers& b, void* stream) {
  const Stage2Args a{b.sorted_token_ids, b.sorted_weights, b.sorted_expert_ids, b.num_valid_ids, b.a2q,
                     b.a2_scales,        b.w2,             b.w2_scales,         b.y,             p.tokens,
                     p.topk,             p.block,          p.hidden,            p.inter,
                     p.max_entries()};
  const auto s = static_cast<hipStream_t>(stream);
  const auto blocks = static_cast<unsigned>(p.max_blocks());
  if (moe_wgmma_takes(p, false)) {  // prefill on sm_90a: exact's bits, or fast's form (moe_gemm_wgmma.hip)
    moe_stage2_wgmma_gemm_launch(p, b, stream);
  } else if (moe_decode_takes(p, false)) {  // decode on sm_90a: exact's bits (moe_gemm_decode.hip)
    moe_stage2_decode_gemm_launch(p, b, stream);
  } else if (moe_mfma_takes(p, false)) {  // AMD, FUSEBENCH_MOE_MFMA=1: exact's bits (moe_gemm_mfma.hip)
    moe_stage2_mfma_gemm_launch(p, b, stream);
  } else if (p.engine != MoeGemmEngine::plain && moe_exact_fits(p.pairs(), p.inter / 2)) {  // else plain: same bits
    const int warps = moe_exact_warps(p.hidden, 32);  // 32 output columns (two tiles) each
    const dim3 grid(static_cast<unsigned>(p.hidden / (32 * warps)), blocks);
    moe_stage2_exact_kernel<<<grid, static_cast<unsigned>(32 * warps), 0, s>>>(a);
    gpu_check_launch("moe_stage2_exact_kernel");
  } else {
    const dim3 grid(grid_1d(p.hidden, kPlainThreads), blocks);
    moe_stage2_plain_kernel<<<grid, kPlainThreads, 0, s>>>(a);
    gpu_check_launch("moe_stage2_plain_kernel");
  }
  const std::int64_t n = p.tokens * p.hidden;
  if (p.shared == MoeSharedMode::fold)
    moe_stage2_reduce_kernel<MoeSharedMode::fold>
        <<<grid_1d(n, kReduceThreads), kReduceThreads, 0, s>>>(b.y, b.shared, b.out, p.tokens, p.topk, p.hidden);
  else
    moe_stage2_reduce_kernel<MoeSharedMode::none>
        <<<grid_1d(n, kReduceThreads), kReduceThreads, 0, s>>>(b.y, b.shared, b.out, p.tokens, p.topk, p.hidden);
  gpu_check_launch("moe_stage2_reduce_kernel");
  if (p.shared == MoeSharedMode::chain) {
    moe_shared_add_kernel<<<grid_1d(n, kReduceThreads), kReduceThreads, 0, s>>>(b.shared, b.out, n);
    gpu_check_launch("moe_shared_add_kernel");
  }
}

}  // namespace fb
