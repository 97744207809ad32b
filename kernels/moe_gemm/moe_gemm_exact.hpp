// The exact engine of the MoE GEMMs, one warp's work: the matrix-unit block sums of its 16-row
// tiles and the per-block promotion, for stage 1 and the stage-2 GEMM. FB_HD, so the CPU tests run
// the same code (its scalar block sums instead of the MMA) over the whole grid and compare it with
// the emulation: every index the kernels compute is checked without a GPU. Arithmetic:
// moe_gemm_math.hpp.
//
// Matrix unit (NVIDIA sm_80 and later): mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32. Its K of
// 32 is exactly one MX block, so one instruction with a zero accumulator gives the block sums S_q
// of a 16 x 8 tile. Each e2m1 code becomes the int8 2 * value (an integer in [-12, 12]): integer
// multiply-adds into int32 are exact whatever the hardware's order (|S_q| <= 4608). Fragments
// (lane = 4 * group + quad; PTX ISA, "Matrix Fragments for mma.m16n8k32"), in the MMA's logical k:
//   A 16 x 32 row-major  a0: row group, k 4q..4q+3     a1: row group + 8, k 4q..
//                        a2: row group, k 16+4q..      a3: row group + 8, k 16+4q..
//   B 32 x 8 column      b0: column group, k 4q..      b1: column group, k 16+4q..
//   C 16 x 8             c0: (group, 2q)  c1: (group, 2q+1)  c2: (group+8, 2q)  c3: (group+8, 2q+1)
// A block sum does not depend on the order of its 32 terms, so the kernels feed the MMA a
// permutation of k, the same for A and B: lane quad q loads bytes 4q..4q+3 of the block's 16 (one
// aligned 32-bit load; elements 8q..8q+7) and gives elements 8q..8q+3 to logical k 4q..4q+3 (a0,
// a1, b0) and 8q+4..8q+7 to 16+4q.. (a2, a3, b1). A warp's loads of one row block are then 16
// contiguous bytes. (tests: MoeGemmMath.FragmentPermutationGivesTheBlockSums simulates the MMA on
// these fragments; MoeGemmGpu.MatrixUnitBlockSumsAreExact runs it.)
// Elsewhere (AMD until an MFMA path lands, older NVIDIA) each lane computes its sums with the
// scalar integer loop: the same integers.
#pragma once

#include <cstdint>

#include "kernels/moe_gemm/moe_gemm_fragments.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"

namespace fb {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define FB_MOE_INT8_MMA 1
#else
#define FB_MOE_INT8_MMA 0
#endif

// Warps per CTA of the exact kernels: each takes a 16-column slice of the output (two n8 MMA
// tiles, or two gate and two up tiles in stage 1) over every 16-row slice of its sort block.
// Four where the columns divide by 64, else two (columns are a multiple of 32).
FB_HD int moe_exact_warps(std::int64_t cols) { return cols % 64 == 0 ? 4 : 2; }

#if FB_MOE_INT8_MMA
__device__ inline void mx_mma_block_sums(const MxAFragment& fa, const MxBFragment& fb, int (&c)[4]) {
  const int zero = 0;
  asm(  // no side effects: the compiler may move it and the loads around it
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(fa.a[0]), "r"(fa.a[1]), "r"(fa.a[2]), "r"(fa.a[3]), "r"(fb.b[0]), "r"(fb.b[1]), "r"(zero));
}
#endif

// A hint to bring the 128-byte line at p into L2 (NVIDIA; nothing elsewhere). The exact kernels
// stream each weight row once at decode: a prefetch two lines (16 blocks) ahead keeps DRAM busy
// without holding registers. Results do not depend on it.
FB_HD void prefetch_l2(const void* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

// Every 8 blocks (one 128-byte line of a weight row), lane quad 0 of each column asks for the line
// 16 blocks ahead when the row has it.
template <int kTiles>
FB_HD void prefetch_weight_lines(const std::uint8_t* const (&w)[kTiles], std::int64_t w_stride, int group, int quad,
                                 std::int64_t y, std::int64_t blocks) {
  if ((y & 7) != 0 || quad != 0 || y + 16 >= blocks) return;
#pragma unroll
  for (int t = 0; t < kTiles; ++t) prefetch_l2(w[t] + group * w_stride + 16 * 16);
}

// S_q of kTiles 16 x 8 tiles that share their A rows (`group`, `group + 8` at a_lo / a_hi, this
// block; nullptr: zero) and whose B column j of tile t starts at w[t] + j * w_stride. Lane (group,
// quad) gets c[t][0..3] as in the header comment. Every lane of the warp must call it.
template <int kTiles>
FB_HD void mx_warp_block_sums(const std::uint8_t* a_lo, const std::uint8_t* a_hi, const std::uint8_t* const (&w)[kTiles],
                              std::int64_t w_stride, int group, int quad, int (&c)[kTiles][4]) {
#if FB_MOE_INT8_MMA
  const MxAFragment fa = mx_a_fragment(a_lo, a_hi, quad);
#pragma unroll
  for (int t = 0; t < kTiles; ++t) mx_mma_block_sums(fa, mx_b_fragment(w[t] + group * w_stride, quad), c[t]);
#else
#pragma unroll
  for (int t = 0; t < kTiles; ++t)
    for (int i = 0; i < 4; ++i) {
      const std::uint8_t* a = i < 2 ? a_lo : a_hi;
      c[t][i] = a ? mx_block_sum_quarters(a, w[t] + (2 * quad + (i & 1)) * w_stride) : 0;
    }
#endif
}

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

// One warp of the stage-1 exact kernel: sort block starting at sorted position `first` (its
// entries at `entries`, expert e), output columns n0 .. n0+15 of gate and up, lane `lane`.
template <bool kOai>
FB_HD void moe_stage1_exact_warp(const Stage1Args& a, const std::int32_t* entries, std::int64_t first, std::int64_t e,
                                 std::int64_t n0, int lane) {
  const int group = lane >> 2, quad = lane & 3;
  const std::int64_t I = a.inter, row_bytes = a.hidden / 2, nb = a.hidden / 32, pad = (nb + 7) / 8 * 8;
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
      prefetch_weight_lines<4>(w, row_bytes, group, quad, y, nb);
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

// One warp of the stage-2 exact GEMM: as stage 1, output columns d0 .. d0+15, Y = w_p * y.
FB_HD void moe_stage2_exact_warp(const Stage2Args& a, const std::int32_t* entries, const float* weights,
                                 std::int64_t first, std::int64_t e, std::int64_t d0, int lane) {
  const int group = lane >> 2, quad = lane & 3;
  const std::int64_t K = a.hidden, row_bytes = a.inter / 2, nb = a.inter / 32, pad = (nb + 7) / 8 * 8;
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
      prefetch_weight_lines<2>(w, row_bytes, group, quad, y, nb);
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

// The reduction of one output element (stage 2, F6): sum = +0, + Y[t*k + s][d] for s in order;
// none or chain: bf16(sum); fold: bf16(sum + shared).
template <MoeSharedMode kMode>
FB_HD std::uint16_t moe_reduce_element(const float* y, const std::uint16_t* shared, std::int64_t topk,
                                       std::int64_t hidden, std::int64_t i) {
  const std::int64_t t = i / hidden, d = i % hidden;
  float sum = 0.0f;
  for (std::int64_t s = 0; s < topk; ++s) sum = sum + y[(t * topk + s) * hidden + d];
  return kMode == MoeSharedMode::fold ? moe_finish_fold(sum, shared[i]) : bf16_from_float(sum);
}

// The exact engine's grid run on the CPU (scalar block sums in place of the MMA), for the tests:
// the same indexing as the kernels, lane by lane. Stage 2 includes the reduction (and the chain's
// shared add); `y` must hold T*k*K floats.
void moe_stage1_exact_simulate(const MoeGemmParams& p, const MoeStage1Buffers& b);
void moe_stage2_exact_simulate(const MoeGemmParams& p, const MoeStage2Buffers& b);

}  // namespace fb
