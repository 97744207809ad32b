// MoE stage 1: for each sorted position p < num_valid_ids[0] with a real token, gate and up are the
// MXFP4 dot products of xq[token] (scales at sorted position p) with rows n and I + n of the
// block's expert in W13, in the canonical order of moe_gemm_math.hpp; a1[token*k + slot][n] =
// bf16(SwiGLU(gate, up)). Two engines, the same bits:
//   exact  a CTA takes one sort block and 64 output columns (32 where I % 64 != 0): warp w owns a
//          16-column slice, walks the block's 16-row slices up to the padding, and forms the block
//          sums of its 16 x 16 gate and 16 x 16 up tiles with four m16n8k32 int8 MMAs per 32-K
//          block, promoted on the CUDA cores in K order. SwiGLU pairs gate and up of the same
//          fragment position in registers.
//   plain  one thread per output column, each row of the sort block in turn, scalar integer sums.
// No split-K, no atomics: deterministic. A first, correct version: no shared-memory staging or
// pipelining yet (README: "Speed").
#include "kernels/common/gpu_check.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_gemm/moe_gemm_device.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"

namespace fb {
namespace {

constexpr int kPlainThreads = 128;   // plain: columns per CTA
constexpr int kMaxBlock = 128;       // B

struct Stage1Args {
  const std::int32_t* sorted_token_ids;
  const std::int32_t* sorted_expert_ids;
  const std::int32_t* num_valid_ids;
  const std::uint8_t* xq;
  const std::uint8_t* x_scales;
  const std::uint8_t* w13;
  const std::uint8_t* w13_scales;
  std::uint16_t* a1;
  std::int64_t tokens, topk, block, hidden, inter;
};

template <bool kOai>
__global__ void moe_stage1_exact_kernel(Stage1Args a) {
  const std::int64_t valid = a.num_valid_ids[0];
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * a.block;
  if (first >= valid) return;  // the whole CTA: blocks past the sorted entries
  __shared__ std::int32_t entries[kMaxBlock];
  for (int r = threadIdx.x; r < a.block; r += blockDim.x) entries[r] = a.sorted_token_ids[first + r];
  __syncthreads();

  const int lane = threadIdx.x & 31, col_slice = threadIdx.x >> 5;
  const int group = lane >> 2, quad = lane & 3;
  const std::int64_t e = a.sorted_expert_ids[blockIdx.y];
  const std::int64_t I = a.inter, row_bytes = a.hidden / 2, nb = a.hidden / 32, pad = (nb + 7) / 8 * 8;
  const std::int64_t n0 = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x / 32 + col_slice) * 16;
  // Weight rows of the four n8 tiles: gate n0.., n0+8.., up I+n0.., I+n0+8..
  const std::int64_t w_row[4] = {e * 2 * I + n0, e * 2 * I + n0 + 8, e * 2 * I + I + n0, e * 2 * I + I + n0 + 8};

  // The warp walks the sort block's 16-row slices. Padding (sentinel entries) fills the tail of an
  // expert's run, so the first slice that starts with one ends the walk (warp-uniform: no MMA is
  // left half done); at decode most sort blocks hold a few tokens and take one slice.
  for (int slice_first = 0; slice_first < a.block; slice_first += 16) {
    if (moe_entry_token(entries[slice_first]) >= a.tokens) break;
    const int r_lo = slice_first + group, r_hi = r_lo + 8;
    const std::int64_t tok_lo = moe_entry_token(entries[r_lo]), tok_hi = moe_entry_token(entries[r_hi]);
    const bool live_lo = tok_lo < a.tokens, live_hi = tok_hi < a.tokens;
    const std::uint8_t* a_lo = live_lo ? a.xq + tok_lo * row_bytes : nullptr;
    const std::uint8_t* a_hi = live_hi ? a.xq + tok_hi * row_bytes : nullptr;

    float acc[4][4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[j][i] = 0.0f;
#pragma unroll 2  // lets the next block's loads issue before this block's MMAs and promotion
    for (std::int64_t y = 0; y < nb; ++y) {
      // 2^(sa-129) of the lane's two rows (sentinel rows: their sums are 0 and never stored).
      const float xa_lo = mx_quarter_scale(live_lo ? a.x_scales[mx_scale_addr(first + r_lo, y, pad)] : std::uint8_t{127});
      const float xa_hi = mx_quarter_scale(live_hi ? a.x_scales[mx_scale_addr(first + r_hi, y, pad)] : std::uint8_t{127});
      const std::uint8_t* const w[4] = {a.w13 + w_row[0] * row_bytes + 16 * y, a.w13 + w_row[1] * row_bytes + 16 * y,
                                        a.w13 + w_row[2] * row_bytes + 16 * y, a.w13 + w_row[3] * row_bytes + 16 * y};
      int c[4][4];
      mx_warp_block_sums<4>(a_lo ? a_lo + 16 * y : nullptr, a_hi ? a_hi + 16 * y : nullptr, w, row_bytes, group, quad,
                            c);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float xw0 = e8m0_to_float(a.w13_scales[(w_row[j] + 2 * quad) * nb + y]);
        const float xw1 = e8m0_to_float(a.w13_scales[(w_row[j] + 2 * quad + 1) * nb + y]);
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
        if (!(i < 2 ? live_lo : live_hi)) continue;
        const std::int32_t entry = entries[i < 2 ? r_lo : r_hi];
        const std::int64_t row = moe_entry_token(entry) * a.topk + moe_entry_slot(entry);
        const std::int64_t n = n0 + 8 * j + 2 * quad + (i & 1);
        a.a1[row * I + n] = bf16_from_float(moe_swiglu(kOai, acc[j][i], acc[j + 2][i]));
      }
    }
  }
}

template <bool kOai>
__global__ __launch_bounds__(kPlainThreads) void moe_stage1_plain_kernel(Stage1Args a) {
  const std::int64_t valid = a.num_valid_ids[0];
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
  const Stage1Args a{b.sorted_token_ids, b.sorted_expert_ids, b.num_valid_ids, b.xq, b.x_scales, b.w13,
                     b.w13_scales,       b.a1,              p.tokens,        p.topk, p.block, p.hidden, p.inter};
  const auto s = static_cast<hipStream_t>(stream);
  const auto blocks = static_cast<unsigned>(p.max_blocks());
  if (p.engine == MoeGemmEngine::exact) {
    const int warps = moe_exact_warps(p.inter);  // one 16-column slice each
    const dim3 grid(static_cast<unsigned>(p.inter / (16 * warps)), blocks);
    const auto threads = static_cast<unsigned>(32 * warps);
    if (p.oai)
      moe_stage1_exact_kernel<true><<<grid, threads, 0, s>>>(a);
    else
      moe_stage1_exact_kernel<false><<<grid, threads, 0, s>>>(a);
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
