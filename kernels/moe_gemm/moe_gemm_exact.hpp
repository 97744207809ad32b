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
// The kernels put 16 weight rows (16 output columns) in A and 8 sorted rows (tokens) in B, so a
// decode sort block of a few tokens wastes at most 8 - n columns of an MMA, not 16 - n rows.
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

// Warps per CTA of the exact kernels: 4, 2 or 1, the most that divide the output's column slices
// (a warp owns `per_warp` output columns: 16 in stage 1 (gate and up tiles), 32 in stage 2).
FB_HD int moe_exact_warps(std::int64_t cols, std::int64_t per_warp) {
  const std::int64_t slices = cols / per_warp;
  return slices % 4 == 0 ? 4 : (slices % 2 == 0 ? 2 : 1);
}

#if FB_MOE_INT8_MMA
__device__ inline void mx_mma_block_sums(const MxAFragment& fa, const MxBFragment& fb, int (&c)[4]) {
  const int zero = 0;
  // mma.sync.aligned must be reached by all 32 lanes converged on this very instruction. The
  // callers branch per lane just before it (the L2 prefetch of lane quad 0, the padding columns'
  // null B operand), and a non-volatile asm may be duplicated into such branches by the compiler:
  // a warp split across two copies of the MMA is undefined behaviour and can hang. Reconverge
  // first (cheap: one bar.warp.sync per MMA), and keep the asm volatile so it is not moved.
  __syncwarp();
  asm volatile(
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

// The B fragment of a sorted row (nullptr: padding, all zero).
// Branch-free (a predicated load and selects): every lane then reaches the MMA on one path.
FB_HD MxBFragment mx_b_fragment_or_zero(const std::uint8_t* col, int quad) {
  const std::uint32_t word = col ? load_u32(col + 4 * quad) : 0u;
  MxBFragment f;
  e2m1x8_to_s8x8(word, f.b[0], f.b[1]);  // code 0 is +0: zero operands
  return f;
}

// S_q of one 16 x 8 tile: weight rows `group` and `group + 8` (block at w_lo / w_hi, fragment fa)
// times sorted rows (columns) `group` (col_g: the lane's B operand) and 2*quad, 2*quad + 1 (col_0,
// col_1: its C positions); nullptr columns are padding. Lane (group, quad) gets c0 = (w_lo, col_0),
// c1 = (w_lo, col_1), c2 = (w_hi, col_0), c3 = (w_hi, col_1). Every lane of the warp must call it.
FB_HD void mx_tile_block_sums(const MxAFragment& fa, const std::uint8_t* w_lo, const std::uint8_t* w_hi,
                              const std::uint8_t* col_g, const std::uint8_t* col_0, const std::uint8_t* col_1, int quad,
                              int (&c)[4]) {
#if FB_MOE_INT8_MMA
  (void)w_lo, (void)w_hi, (void)col_0, (void)col_1;
  mx_mma_block_sums(fa, mx_b_fragment_or_zero(col_g, quad), c);
#else
  (void)fa, (void)col_g, (void)quad;
  c[0] = col_0 ? mx_block_sum_quarters(w_lo, col_0) : 0;
  c[1] = col_1 ? mx_block_sum_quarters(w_lo, col_1) : 0;
  c[2] = col_0 ? mx_block_sum_quarters(w_hi, col_0) : 0;
  c[3] = col_1 ? mx_block_sum_quarters(w_hi, col_1) : 0;
#endif
}

// A warp takes a sort block kGroups groups of 8 rows (the MMA's N) at a time.
inline constexpr int kGroups = 2;
inline constexpr int kChunkRows = 8 * kGroups;
inline constexpr std::uint32_t kPadRow = 0xFFFFFFFFu;  // a padding row's offset

// The exact kernels keep activation byte offsets in 32 bits: rows * row_bytes must stay below
// kPadRow (T < 1.39 M at K = 6144). Larger points run the plain engine (the same bits).
FB_HD bool moe_exact_fits(std::int64_t rows, std::int64_t row_bytes) {
  return rows * row_bytes < static_cast<std::int64_t>(kPadRow);
}

// mx_scale_addr(p, y, pad) split into its row terms and its block terms (the swizzle is a sum).
FB_HD std::uint32_t mx_scale_row_part(std::int64_t p, std::int64_t pad) {
  return static_cast<std::uint32_t>((p / 32) * (32 * pad) + (p % 16) * 4 + (p % 32) / 16);
}
FB_HD std::uint32_t mx_scale_block_part(std::int64_t y) {
  return static_cast<std::uint32_t>((y / 8) * 256 + (y % 4) * 64 + ((y % 8) / 4) * 2);
}

// Where a sorted row's activations live, for one warp's chunks of a sort block.
struct MxChunk {
  const std::uint8_t* act;         // e2m1 rows: xq [T][K/2] (stage 1) or a2q [T*k][I/2] (stage 2)
  const std::uint8_t* act_scales;  // swizzled, at sorted positions
  const std::int32_t* entries;     // the sort block's entries
  std::int64_t first;              // sorted position of the block's first row
  std::int64_t tokens, topk;
  bool by_pair;                    // activation row token*k + slot (stage 2), else token
  std::int64_t row_bytes, pad;     // K/2 (or I/2); K/32 rounded up to 8

  // The byte offset of block row r's activations, or kPadRow for padding.
  FB_HD std::uint32_t offset(int r) const {
    const std::int32_t entry = entries[r];
    const std::int64_t token = moe_entry_token(entry);
    if (token >= tokens) return kPadRow;
    return static_cast<std::uint32_t>((by_pair ? token * topk + moe_entry_slot(entry) : token) * row_bytes);
  }
};

// One warp's share of the exact GEMM, swapped so that the weights fill the MMA's 16 rows and the
// sorted rows its 8 columns (a decode sort block holds a few tokens: 8 columns waste less than 16
// rows would): for kTiles tiles of 16 weight rows (w_rows[t] .. + 15) and the live 8-row groups of
// rows chunk .. chunk + kChunkRows - 1, acc[g][t][i] accumulates the canonical order over every
// 32-K block. Returns the number of live groups (padding fills the tail of a sort block, so they
// are a prefix).
template <int kTiles>
FB_HD int mx_warp_gemm(const MxChunk& ch, int chunk, int block, const std::uint8_t* w, const std::uint8_t* w_scales,
                       const std::int64_t (&w_rows)[kTiles], std::int64_t nb, int lane,
                       float (&acc)[kGroups][kTiles][4]) {
  const int group = lane >> 2, quad = lane & 3;
  int groups = 0;
  while (groups < kGroups && chunk + 8 * groups < block && ch.offset(chunk + 8 * groups) != kPadRow) ++groups;
#pragma unroll
  for (int g = 0; g < kGroups; ++g)
#pragma unroll
    for (int t = 0; t < kTiles; ++t)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[g][t][i] = 0.0f;
  // This lane's weight rows (group and group + 8 of each tile) and scale rows.
  const std::int64_t w_hi = 8 * ch.row_bytes, s_hi = 8 * nb;
  const std::uint8_t* w_lo[kTiles];
  const std::uint8_t* s_lo[kTiles];
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    w_lo[t] = w + (w_rows[t] + group) * ch.row_bytes;
    s_lo[t] = w_scales + (w_rows[t] + group) * nb;
  }
  // Per group: the sorted rows of the lane's B operand (row `group`) and of its two C columns
  // (rows 2*quad, 2*quad + 1), and the scale-address row part of the first (the second is + 4:
  // the two share their 16-row half, as the block and the chunk start at multiples of 16).
  std::uint32_t off_b[kGroups], off_0[kGroups], off_1[kGroups], scale_row[kGroups];
#pragma unroll
  for (int g = 0; g < kGroups; ++g) {
    const bool live = g < groups;
    off_b[g] = live ? ch.offset(chunk + 8 * g + group) : kPadRow;
    off_0[g] = live ? ch.offset(chunk + 8 * g + 2 * quad) : kPadRow;
    off_1[g] = live ? ch.offset(chunk + 8 * g + 2 * quad + 1) : kPadRow;
    scale_row[g] = mx_scale_row_part(ch.first + chunk + 8 * g + 2 * quad, ch.pad);
  }
#pragma unroll 1
  for (std::int64_t y = 0; y < nb; ++y) {
    const std::int64_t at = 16 * y;
    // Every 8 blocks (one 128-byte line of a weight row), lane quad 0 asks for the line 16 blocks
    // ahead when the row has it (the loop is not unrolled: this hides the loads' latency).
    if ((y & 7) == 0 && quad == 0 && y + 16 < nb) {
#pragma unroll
      for (int t = 0; t < kTiles; ++t) {
        prefetch_l2(w_lo[t] + at + 256);
        prefetch_l2(w_lo[t] + w_hi + at + 256);
      }
    }
    MxAFragment fa[kTiles];
    float xw_lo[kTiles], xw_hi[kTiles];
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
#if FB_MOE_INT8_MMA
      fa[t] = mx_a_fragment(w_lo[t] + at, w_lo[t] + w_hi + at, quad);
#else
      fa[t] = MxAFragment{{0u, 0u, 0u, 0u}};
#endif
      xw_lo[t] = e8m0_to_float(s_lo[t][y]);
      xw_hi[t] = e8m0_to_float(s_lo[t][s_hi + y]);
    }
    const std::uint32_t scale_block = mx_scale_block_part(y);
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      if (g >= groups) break;  // warp-uniform
      // 2^(sa-129) of the lane's two C columns (padding: its sums are 0 and never stored).
      const float xa_0 = mx_quarter_scale(off_0[g] != kPadRow ? ch.act_scales[scale_row[g] + scale_block] : std::uint8_t{127});
      const float xa_1 =
          mx_quarter_scale(off_1[g] != kPadRow ? ch.act_scales[scale_row[g] + 4 + scale_block] : std::uint8_t{127});
      const std::uint8_t* cb = off_b[g] != kPadRow ? ch.act + off_b[g] + at : nullptr;
      const std::uint8_t* c0 = off_0[g] != kPadRow ? ch.act + off_0[g] + at : nullptr;
      const std::uint8_t* c1 = off_1[g] != kPadRow ? ch.act + off_1[g] + at : nullptr;
#pragma unroll
      for (int t = 0; t < kTiles; ++t) {
        int c[4];
        mx_tile_block_sums(fa[t], w_lo[t] + at, w_lo[t] + w_hi + at, cb, c0, c1, quad, c);
        acc[g][t][0] = mx_block_promote_scaled(acc[g][t][0], c[0], xa_0, xw_lo[t]);
        acc[g][t][1] = mx_block_promote_scaled(acc[g][t][1], c[1], xa_1, xw_lo[t]);
        acc[g][t][2] = mx_block_promote_scaled(acc[g][t][2], c[2], xa_0, xw_hi[t]);
        acc[g][t][3] = mx_block_promote_scaled(acc[g][t][3], c[3], xa_1, xw_hi[t]);
      }
    }
  }
  return groups;
}

// num_valid_ids[0] as the kernels use it: clamped to what the shape allows, so a corrupt or
// unwritten count (a poisoned buffer reads 0x5A5A5A5A or -1) can neither send a CTA past the
// sorted arrays nor make any loop run longer than the shape's sort blocks.
inline constexpr std::int32_t kPadEntry = 0x00FFFFFF;  // token 2^24 - 1 >= T: a padding entry
FB_HD std::int64_t moe_valid_entries(std::int32_t raw, std::int64_t max_entries) {
  const std::int64_t v = raw;
  return v < 0 ? 0 : (v > max_entries ? max_entries : v);
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
  std::int64_t max_entries;  // the sorted arrays' length (T*k + E*B - k)
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
  std::int64_t max_entries;  // the sorted arrays' length (T*k + E*B - k)
};

// One warp of the stage-1 exact kernel: sort block starting at sorted position `first` (its
// entries at `entries`, expert e), output columns n0 .. n0+15 of gate (W13 rows n0..) and up (rows
// I+n0..), lane `lane`. Chunks of kChunkRows rows up to the block's padding.
template <bool kOai>
FB_HD void moe_stage1_exact_warp(const Stage1Args& a, const std::int32_t* entries, std::int64_t first, std::int64_t e,
                                 std::int64_t n0, int lane) {
  const int group = lane >> 2, quad = lane & 3;
  const std::int64_t I = a.inter, nb = a.hidden / 32;
  const MxChunk ch{a.xq, a.x_scales, entries, first, a.tokens, a.topk, false, a.hidden / 2, (nb + 7) / 8 * 8};
  const std::int64_t w_rows[2] = {e * 2 * I + n0, e * 2 * I + I + n0};  // gate, up
  for (int chunk = 0; chunk < a.block; chunk += kChunkRows) {
    float acc[kGroups][2][4];
    const int groups = mx_warp_gemm<2>(ch, chunk, static_cast<int>(a.block), a.w13, a.w13_scales, w_rows, nb, lane, acc);
    if (groups == 0) break;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      if (g >= groups) break;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const std::int32_t entry = entries[chunk + 8 * g + 2 * quad + (i & 1)];
        if (moe_entry_token(entry) >= a.tokens) continue;  // padding
        const std::int64_t row = moe_entry_token(entry) * a.topk + moe_entry_slot(entry);
        const std::int64_t n = n0 + group + (i >= 2 ? 8 : 0);
        a.a1[row * I + n] = bf16_from_float(moe_swiglu(kOai, acc[g][0][i], acc[g][1][i]));
      }
    }
    if (groups < kGroups) break;  // the rest of the block is padding
  }
}

// One warp of the stage-2 exact GEMM: output columns d0 .. d0+31 (two tiles of W2 rows), Y = w_p * y.
FB_HD void moe_stage2_exact_warp(const Stage2Args& a, const std::int32_t* entries, const float* weights,
                                 std::int64_t first, std::int64_t e, std::int64_t d0, int lane) {
  const int group = lane >> 2, quad = lane & 3;
  const std::int64_t K = a.hidden, nb = a.inter / 32;
  const MxChunk ch{a.a2q, a.a2_scales, entries, first, a.tokens, a.topk, true, a.inter / 2, (nb + 7) / 8 * 8};
  const std::int64_t w_rows[2] = {e * K + d0, e * K + d0 + 16};
  for (int chunk = 0; chunk < a.block; chunk += kChunkRows) {
    float acc[kGroups][2][4];
    const int groups = mx_warp_gemm<2>(ch, chunk, static_cast<int>(a.block), a.w2, a.w2_scales, w_rows, nb, lane, acc);
    if (groups == 0) break;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      if (g >= groups) break;
#pragma unroll
      for (int t = 0; t < 2; ++t)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int r = chunk + 8 * g + 2 * quad + (i & 1);
          const std::int32_t entry = entries[r];
          if (moe_entry_token(entry) >= a.tokens) continue;  // padding
          const std::int64_t row = moe_entry_token(entry) * a.topk + moe_entry_slot(entry);
          const std::int64_t d = d0 + 16 * t + group + (i >= 2 ? 8 : 0);
          a.y[row * K + d] = weights[r] * acc[g][t][i];
        }
    }
    if (groups < kGroups) break;
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
