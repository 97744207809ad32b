// MoE stage 2 and the shared-expert fold (F6). Launches:
//   1. GEMM: for each sorted position p < num_valid_ids[0] with a real token, y[token*k + slot][d]
//      = fl32(w_p * dot(a2q[token*k + slot] (scales at p), W2[e][d])), the dot product in the
//      canonical order of moe_gemm_math.hpp. Engines as in stage 1 (exact: m16n8k32 int8 block
//      sums, a CTA = sort block x 64 (or 32) columns, a warp = 16 columns over the block's row
//      slices; plain: one thread per column).
//   2. reduce: out[t][d] = bf16(sum), sum = +0 then + y[t*k + s][d] for s = 0 .. k-1 in order;
//      fold adds f32(shared[t][d]) to the sum before the one rounding.
//   3. chain only: out = bf16(f32(out) + f32(shared)).
// Every pair is routed (validated routing, no expert mask), so every y row read is written.
#include "kernels/common/gpu_check.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_gemm/moe_gemm_device.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"

namespace fb {
namespace {

constexpr int kPlainThreads = 128;
constexpr int kReduceThreads = 256;
constexpr int kMaxBlock = 128;

struct Stage2Args {
  const std::int32_t* sorted_token_ids;
  const float* sorted_weights;
  const std::int32_t* sorted_expert_ids;
  const std::int32_t* num_valid_ids;
  const std::uint8_t* a2q;
  const std::uint8_t* a2_scales;
  const std::uint8_t* w2;
  const std::uint8_t* w2_scales;
  float* y;
  std::int64_t tokens, topk, block, hidden, inter;
};

__global__ void moe_stage2_exact_kernel(Stage2Args a) {
  const std::int64_t valid = a.num_valid_ids[0];
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * a.block;
  if (first >= valid) return;
  __shared__ std::int32_t entries[kMaxBlock];
  __shared__ float weights[kMaxBlock];
  for (int r = threadIdx.x; r < a.block; r += blockDim.x) {
    entries[r] = a.sorted_token_ids[first + r];
    weights[r] = a.sorted_weights[first + r];
  }
  __syncthreads();

  const int lane = threadIdx.x & 31, col_slice = threadIdx.x >> 5;
  const int group = lane >> 2, quad = lane & 3;
  const std::int64_t e = a.sorted_expert_ids[blockIdx.y];
  const std::int64_t K = a.hidden, row_bytes = a.inter / 2, nb = a.inter / 32, pad = (nb + 7) / 8 * 8;
  const std::int64_t d0 = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x / 32 + col_slice) * 16;
  const std::int64_t w_row[2] = {e * K + d0, e * K + d0 + 8};

  // The sort block's 16-row slices in turn, up to the first that starts with padding (as stage 1).
  for (int slice_first = 0; slice_first < a.block; slice_first += 16) {
    if (moe_entry_token(entries[slice_first]) >= a.tokens) break;
    const int r_lo = slice_first + group, r_hi = r_lo + 8;
    const std::int32_t entry_lo = entries[r_lo], entry_hi = entries[r_hi];
    const std::int64_t tok_lo = moe_entry_token(entry_lo), tok_hi = moe_entry_token(entry_hi);
    const bool live_lo = tok_lo < a.tokens, live_hi = tok_hi < a.tokens;
    const std::int64_t row_lo = tok_lo * a.topk + moe_entry_slot(entry_lo);
    const std::int64_t row_hi = tok_hi * a.topk + moe_entry_slot(entry_hi);
    const std::uint8_t* a_lo = live_lo ? a.a2q + row_lo * row_bytes : nullptr;
    const std::uint8_t* a_hi = live_hi ? a.a2q + row_hi * row_bytes : nullptr;

    float acc[2][4];
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[j][i] = 0.0f;
#pragma unroll 2  // lets the next block's loads issue before this block's MMAs and promotion
    for (std::int64_t y = 0; y < nb; ++y) {
      const float xa_lo = mx_quarter_scale(live_lo ? a.a2_scales[mx_scale_addr(first + r_lo, y, pad)] : std::uint8_t{127});
      const float xa_hi = mx_quarter_scale(live_hi ? a.a2_scales[mx_scale_addr(first + r_hi, y, pad)] : std::uint8_t{127});
      const std::uint8_t* const w[2] = {a.w2 + w_row[0] * row_bytes + 16 * y, a.w2 + w_row[1] * row_bytes + 16 * y};
      int c[2][4];
      mx_warp_block_sums<2>(a_lo ? a_lo + 16 * y : nullptr, a_hi ? a_hi + 16 * y : nullptr, w, row_bytes, group, quad,
                            c);
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const float xw0 = e8m0_to_float(a.w2_scales[(w_row[j] + 2 * quad) * nb + y]);
        const float xw1 = e8m0_to_float(a.w2_scales[(w_row[j] + 2 * quad + 1) * nb + y]);
        acc[j][0] = mx_block_promote_scaled(acc[j][0], c[j][0], xa_lo, xw0);
        acc[j][1] = mx_block_promote_scaled(acc[j][1], c[j][1], xa_lo, xw1);
        acc[j][2] = mx_block_promote_scaled(acc[j][2], c[j][2], xa_hi, xw0);
        acc[j][3] = mx_block_promote_scaled(acc[j][3], c[j][3], xa_hi, xw1);
      }
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const bool hi = i >= 2;
        if (!(hi ? live_hi : live_lo)) continue;
        const std::int64_t d = d0 + 8 * j + 2 * quad + (i & 1);
        a.y[(hi ? row_hi : row_lo) * K + d] = weights[hi ? r_hi : r_lo] * acc[j][i];
      }
    }
  }
}

__global__ __launch_bounds__(kPlainThreads) void moe_stage2_plain_kernel(Stage2Args a) {
  const std::int64_t valid = a.num_valid_ids[0];
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
  if (i >= tokens * hidden) return;
  const std::int64_t t = i / hidden, d = i % hidden;
  float sum = 0.0f;
  for (std::int64_t s = 0; s < topk; ++s) sum = sum + y[(t * topk + s) * hidden + d];
  out[i] = kMode == MoeSharedMode::fold ? moe_finish_fold(sum, shared[i]) : bf16_from_float(sum);
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
                     p.topk,             p.block,          p.hidden,            p.inter};
  const auto s = static_cast<hipStream_t>(stream);
  const auto blocks = static_cast<unsigned>(p.max_blocks());
  if (p.engine == MoeGemmEngine::exact) {
    const int warps = moe_exact_warps(p.hidden);  // one 16-column slice each
    const dim3 grid(static_cast<unsigned>(p.hidden / (16 * warps)), blocks);
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
