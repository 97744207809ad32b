// The exact engine of the MoE GEMMs, one warp's work: the matrix-unit block sums of its 16-row
// tiles and the per-block promotion, for stage 1 and the stage-2 GEMM. FB_HD, so the CPU tests run
// the same code (its scalar block sums instead of the MMA) over the whole grid and compare it with
// the emulation: every index the kernels compute is checked without a GPU. Arithmetic:
// moe_gemm_math.hpp.
//
// Matrix unit (NVIDIA sm_89 and later): mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32. Its K
// of 32 is exactly one MX block, so one instruction with a zero accumulator gives the block sums of
// a 16 x 8 tile. Each e2m1 code becomes the e4m3 byte of its value times 2^-6 (bit operations,
// exact), so a product is h_a h_w / 4 times 2^-12 (h = 2 * value, an integer in [-12, 12]) and the
// block sum is S_q * 2^-14 with |S_q| <= 4608: a multiple of 2^-14 below 2^-1.8, 13 significant
// bits. The products are exact in any fp8 multiplier, and any accumulation that keeps 13 bits below
// the largest partial sum's exponent adds them exactly, in any order (Hopper's fp8 MMA keeps about
// 14 in fp32; MoeGemmGpu.MatrixUnitBlockSumsAreExact checks adversarial blocks on the hardware, and
// every verify compares the kernels with the emulation bitwise). Fragments (lane = 4 * group +
// quad; PTX ISA, "Matrix Fragments for mma.m16n8k32", the same for 8-bit types), in the MMA's
// logical k:
//   A 16 x 32 row-major  a0: row group, k 4q..4q+3     a1: row group + 8, k 4q..
//                        a2: row group, k 16+4q..      a3: row group + 8, k 16+4q..
//   B 32 x 8 column      b0: column group, k 4q..      b1: column group, k 16+4q..
//   C 16 x 8             c0: (group, 2q)  c1: (group, 2q+1)  c2: (group+8, 2q)  c3: (group+8, 2q+1)
// A block sum does not depend on the order of its 32 terms, so the kernels feed the MMA a
// permutation of k, the same for A and B: lane quad q loads bytes 4q..4q+3 of the block's 16 (one
// aligned 32-bit load; elements 8q..8q+7) and gives the even elements 8q, 8q+2, 8q+4, 8q+6 to
// logical k 4q..4q+3 (a0, a1, b0) and the odd ones to 16+4q.. (a2, a3, b1). A warp's loads of one
// row block are then 16 contiguous bytes. (tests: MoeGemmMath.FragmentPermutationGivesTheBlockSums
// simulates the MMA on these fragments; MoeGemmGpu.MatrixUnitBlockSumsAreExact runs it.)
// The kernels put 16 weight rows (16 output columns) in A and 8 sorted rows (tokens) in B, so a
// decode sort block of a few tokens wastes at most 8 - n columns of an MMA, not 16 - n rows.
// Elsewhere (AMD, older NVIDIA) each lane computes its sums with the scalar integer loop: the same
// values. (AMD's matrix-unit form is its own engine, moe_gemm_mfma_wave.hpp: waves of 64 lanes.)
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "kernels/moe_gemm/moe_gemm_fragments.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"

namespace fb {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define FB_MOE_FP8_MMA 1
#else
#define FB_MOE_FP8_MMA 0
#endif

// Warps per CTA of the exact kernels: 4, 2 or 1, the most that divide the output's column slices
// (a warp owns `per_warp` output columns: 16 in stage 1 (gate and up tiles), 32 in stage 2).
FB_HD int moe_exact_warps(std::int64_t cols, std::int64_t per_warp) {
  const std::int64_t slices = cols / per_warp;
  return slices % 4 == 0 ? 4 : (slices % 2 == 0 ? 2 : 1);
}

#if FB_MOE_FP8_MMA
// C = A B (fp32; each sum is S_q * kMxMmaSumScale, exactly).
__device__ inline void mx_mma_block_sums(const MxAFragment& fa, const MxBFragment& fb, float (&c)[4]) {
  // mma.sync.aligned must be reached by all 32 lanes converged on this very instruction. The
  // callers branch per lane just before it (the L2 prefetch of lane quad 0, the padding columns'
  // null B operand), and a non-volatile asm may be duplicated into such branches by the compiler:
  // a warp split across two copies of the MMA is undefined behaviour and can hang. Reconverge
  // first (cheap: one bar.warp.sync per MMA), and keep the asm volatile so it is not moved.
  __syncwarp();
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
      : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
      : "r"(fa.a[0]), "r"(fa.a[1]), "r"(fa.a[2]), "r"(fa.a[3]), "r"(fb.b[0]), "r"(fb.b[1]), "f"(0.0f));
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
  e2m1x8_to_e4m3x8(word, f.b[0], f.b[1]);  // code 0 is e4m3 +0: zero operands
  return f;
}

// S_q of one 16 x 8 tile: weight rows `group` and `group + 8` (block at w_lo / w_hi, fragment fa)
// times sorted rows (columns) `group` (col_g: the lane's B operand) and 2*quad, 2*quad + 1 (col_0,
// col_1: its C positions); nullptr columns are padding. Lane (group, quad) gets c0 = (w_lo, col_0),
// c1 = (w_lo, col_1), c2 = (w_hi, col_0), c3 = (w_hi, col_1). Every lane of the warp must call it.
FB_HD void mx_tile_block_sums(const MxAFragment& fa, const std::uint8_t* w_lo, const std::uint8_t* w_hi,
                              const std::uint8_t* col_g, const std::uint8_t* col_0, const std::uint8_t* col_1, int quad,
                              int (&c)[4]) {
#if FB_MOE_FP8_MMA
  (void)w_lo, (void)w_hi, (void)col_0, (void)col_1;
  float f[4];
  mx_mma_block_sums(fa, mx_b_fragment_or_zero(col_g, quad), f);
  for (int i = 0; i < 4; ++i) {  // S_q, or INT_MIN where the sum is not an exact multiple of 2^-14
    const float q = f[i] * (1.0f / kMxMmaSumScale);  // exact: a power of two
    c[i] = q == truncf(q) && fabsf(q) <= 4608.0f ? static_cast<int>(q) : -2147483647 - 1;
  }
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

// The software-pipelined K loop of the exact GEMM. At decode a CTA's 4 warps are nearly all an SM
// holds (about 4 warps per SM at T = 3), so one block's chain (loads, conversion, MMA, promotion)
// is not hidden by other warps; and the `__syncwarp` + volatile MMA of each block is a barrier that
// no load moves across. So the loop is pipelined in source: a stage is kU consecutive blocks, and
// every operand of a stage (weight words of both rows of each tile, weight scale bytes, the live
// groups' activation words and activation scale bytes) is in registers, or in flight, before the
// stage's first MMA: each block's slot is refilled with the next stage's block as soon as its words
// are converted, before its MMA. So the next stage's loads are issued behind no MMA they do not
// need, and kU blocks' conversion and promotion chains are independent work for the scheduler.
// (A full second stage of registers, ping-pong, spilled at 128 registers under ptxas' schedule.)
// The arithmetic is untouched: the same block sums, promoted block by block in ascending K into
// the same accumulators.

// Blocks per stage (the pipeline's U) where the chunk holds one token (decode: odd C columns
// skipped), and where odd columns or two groups are live (more registers a block). Chosen from
// ptxas' numbers (sm_90a, CUDA 13.0): stage 1 within 128 registers (its __launch_bounds__(128, 4)),
// stage 2 within 96 (5 CTAs of 4 warps per SM: at T = 3 its 576 CTAs fit one wave of 132 x 5),
// both without spills; U = 4 for stage 1's odd path spilled, so did U = 2 for stage 2's.
inline constexpr int kStage1Blocks = 4, kStage1BlocksOdd = 2;
inline constexpr int kStage2Blocks = 4, kStage2BlocksOdd = 1;

// kU weight-scale bytes of one row (blocks y0 .. y0 + kU - 1, byte u = block y0 + u) in one load:
// the caller guarantees kU-byte alignment (nb % 4 == 0, an aligned base, y0 % kU == 0).
template <int kU>
FB_HD std::uint32_t mx_load_scale_bytes(const std::uint8_t* p) {
  static_assert(kU == 1 || kU == 2 || kU == 4, "1, 2 or 4 blocks per stage");
  if constexpr (kU == 4) {
    return load_u32(p);
  } else if constexpr (kU == 2) {
#if FB_DEVICE_PASS
    return *reinterpret_cast<const std::uint16_t*>(p);
#else
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
#endif
  } else {
    return *p;
  }
}

// One lane's loop-invariant addresses.
template <int kTiles, int kG>
struct MxLane {
  const std::uint8_t* w[kTiles];   // row `group` of each tile, + 4 quad: the lane's weight word
  const std::uint8_t* ws[kTiles];  // the scale row of row `group`
  std::int64_t w_hi, ws_hi;        // row group + 8 of the tile: hi_rows rows further (mx_warp_gemm)
  const std::uint8_t* x[kG];       // B operand: sorted row `group` of the group, + 4 quad (nullptr: padding)
  const std::uint8_t* xs0[kG];     // scale byte of C column 2 quad at block 0 (nullptr: padding)
  const std::uint8_t* xs1[kG];     // of column 2 quad + 1
  const std::uint8_t* c0[kG];      // the scalar path only (no MMA): rows of the two C columns
  const std::uint8_t* c1[kG];
  int quad;
};

// One stage's operands, block u in slot u. kOdd: some C column 2 quad + 1 is live (false: the
// group holds one token, as at decode, so odd columns are padding for every lane: their scale
// bytes and promotions are skipped; their sums are never stored).
template <int kTiles, int kG, int kU, bool kOdd>
struct MxStage {
  std::uint32_t w[kU][kTiles][2];          // weight words, rows group and group + 8
  std::uint32_t x[kU][kG];                 // B operand words (0 for padding: code 0 is +0)
  std::uint32_t xs[kU][kG][kOdd ? 2 : 1];  // activation scale bytes of the C columns (127 for padding)
};

// The weight scale bytes of one stage: byte u of each row's word is block y0 + u.
template <int kTiles>
struct MxScaleWords {
  std::uint32_t w[kTiles][2];
};

template <int kTiles, int kG, int kU>
FB_HD void mx_scale_words_load(MxScaleWords<kTiles>& ws, const MxLane<kTiles, kG>& L, std::int64_t y0) {
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    ws.w[t][0] = mx_load_scale_bytes<kU>(L.ws[t] + y0);
    ws.w[t][1] = mx_load_scale_bytes<kU>(L.ws[t] + L.ws_hi + y0);
  }
}

// Block y0 + u into slot u; sb = mx_scale_block_part(y0), and mx_scale_block_part(y0 + u) =
// sb + 64 u because y0 % 4 + u < 4 (y0 is a multiple of kU, which divides 4).
template <int kTiles, int kG, int kU, bool kOdd>
FB_HD void mx_block_load(MxStage<kTiles, kG, kU, kOdd>& st, int u, const MxLane<kTiles, kG>& L, std::int64_t y0,
                         std::uint32_t sb) {
  const std::int64_t at = 16 * (y0 + u);
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    st.w[u][t][0] = load_u32(L.w[t] + at);
    st.w[u][t][1] = load_u32(L.w[t] + L.w_hi + at);
  }
#pragma unroll
  for (int g = 0; g < kG; ++g) {
    st.x[u][g] = L.x[g] ? load_u32(L.x[g] + at) : 0u;
    st.xs[u][g][0] = L.xs0[g] ? L.xs0[g][sb + 64 * u] : 127u;
    if constexpr (kOdd) st.xs[u][g][1] = L.xs1[g] ? L.xs1[g][sb + 64 * u] : 127u;
  }
}

#if !FB_DEVICE_PASS
// The CPU simulation checks that the pipeline staged the words its scalar sums read: a wrong
// stage or block offset in the loads then fails the tests instead of passing unseen (the scalar
// sums read memory directly, not the staged words).
inline void mx_check_staged(std::uint32_t staged, const std::uint8_t* p) {
  if (staged != (p ? load_u32(p) : 0u)) {
    std::fprintf(stderr, "mx_warp_gemm: a staged word is not the one its block holds\n");
    std::abort();
  }
}
#endif

// Blocks y0 .. y0 + kU - 1 (loaded in `st`, weight scales in `ws`), in ascending K. As each
// block's words are converted, its slot is refilled with block u of the stage at y_next and the
// load is issued before the block's MMA, so the loads of the next stage are in flight behind the
// MMAs of this one (the software pipeline's second buffer is the slot just consumed; a full second
// stage of registers does not fit 128 with the ptxas schedule). `ws_next` gets y_next's scale words.
// Both scales through the branch-free mx_scale_float (stage 2 took the codec for its weight scales
// until run 56: with the int8 tables in registers ptxas spilled at its 96).
template <int kTiles, int kG, int kU, bool kOdd>
FB_HD void mx_stage_compute(MxStage<kTiles, kG, kU, kOdd>& st, const MxScaleWords<kTiles>& ws,
                            MxScaleWords<kTiles>& ws_next, const MxLane<kTiles, kG>& L, std::int64_t y0,
                            std::int64_t y_next, float (&acc)[kGroups][kTiles][4]) {
  mx_scale_words_load<kTiles, kG, kU>(ws_next, L, y_next);
  const std::uint32_t sb_next = mx_scale_block_part(y_next);
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    float d[kG][kTiles][4];  // block sums, S_q * kMxMmaSumScale
#if FB_MOE_FP8_MMA
    MxAFragment fa[kTiles];
    MxBFragment fb[kG];
#pragma unroll
    for (int t = 0; t < kTiles; ++t) fa[t] = mx_a_fragment_from_words(st.w[u][t][0], st.w[u][t][1]);
#pragma unroll
    for (int g = 0; g < kG; ++g) fb[g] = mx_b_fragment_from_word(st.x[u][g]);
#else
    const std::int64_t at = 16 * (y0 + u);
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
      const std::uint8_t* lo = L.w[t] - 4 * L.quad + at;
      const std::uint8_t* hi = lo + L.w_hi;
#if !FB_DEVICE_PASS
      mx_check_staged(st.w[u][t][0], lo + 4 * L.quad);
      mx_check_staged(st.w[u][t][1], hi + 4 * L.quad);
#endif
#pragma unroll
      for (int g = 0; g < kG; ++g) {
#if !FB_DEVICE_PASS
        if (t == 0) mx_check_staged(st.x[u][g], L.x[g] ? L.x[g] + at : nullptr);
#endif
        const std::uint8_t* c0 = L.c0[g] ? L.c0[g] + at : nullptr;
        const std::uint8_t* c1 = L.c1[g] ? L.c1[g] + at : nullptr;
        d[g][t][0] = static_cast<float>(c0 ? mx_block_sum_quarters(lo, c0) : 0) * kMxMmaSumScale;
        d[g][t][1] = static_cast<float>(c1 ? mx_block_sum_quarters(lo, c1) : 0) * kMxMmaSumScale;
        d[g][t][2] = static_cast<float>(c0 ? mx_block_sum_quarters(hi, c0) : 0) * kMxMmaSumScale;
        d[g][t][3] = static_cast<float>(c1 ? mx_block_sum_quarters(hi, c1) : 0) * kMxMmaSumScale;
      }
    }
#endif
    // The scale bytes of block u leave the slot before it is refilled.
    std::uint32_t xs[kG][kOdd ? 2 : 1];
#pragma unroll
    for (int g = 0; g < kG; ++g)
#pragma unroll
      for (int c = 0; c < (kOdd ? 2 : 1); ++c) xs[g][c] = st.xs[u][g][c];
    mx_block_load(st, u, L, y_next, sb_next);  // the next stage's block u, before this block's MMA
#if FB_MOE_FP8_MMA
#pragma unroll
    for (int g = 0; g < kG; ++g)
#pragma unroll
      for (int t = 0; t < kTiles; ++t) mx_mma_block_sums(fa[t], fb[g], d[g][t]);
#endif
    float xw[kTiles][2];
#pragma unroll
    for (int t = 0; t < kTiles; ++t)
#pragma unroll
      for (int h = 0; h < 2; ++h) xw[t][h] = mx_scale_float((ws.w[t][h] >> (8 * u)) & 0xFFu);
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      // 2^(sa-127) of the lane's two C columns (padding: scale 127, its sums are 0 and never stored).
      const float xa_0 = mx_scale_float(xs[g][0]);
#pragma unroll
      for (int t = 0; t < kTiles; ++t) {
        acc[g][t][0] = mx_block_promote_mma(acc[g][t][0], d[g][t][0], xa_0, xw[t][0]);
        acc[g][t][2] = mx_block_promote_mma(acc[g][t][2], d[g][t][2], xa_0, xw[t][1]);
      }
      if constexpr (kOdd) {
        const float xa_1 = mx_scale_float(xs[g][1]);
#pragma unroll
        for (int t = 0; t < kTiles; ++t) {
          acc[g][t][1] = mx_block_promote_mma(acc[g][t][1], d[g][t][1], xa_1, xw[t][0]);
          acc[g][t][3] = mx_block_promote_mma(acc[g][t][3], d[g][t][3], xa_1, xw[t][1]);
        }
      }
    }
  }
  (void)y0;
}

// Every 8 blocks, ask for the weight line 16 blocks ahead (one 128-byte line of a row holds 8
// blocks), when the row has it: the lane's own row (`pf`, one of the warp's 32), so every lane
// issues one prefetch and there is no per-lane branch in front of the MMAs.
FB_HD void mx_prefetch_ahead(const std::uint8_t* pf, std::int64_t y0, std::int64_t nb) {
  if (pf && (y0 & 7) == 0 && y0 + 16 < nb) prefetch_l2(pf + 16 * y0 + 256);
}

// The whole K loop in stages of kU blocks (nb % kU == 0). Past the last stage the "next" loads
// re-read the current one (in bounds, never used): no branch.
template <int kTiles, int kG, int kU, bool kOdd, bool kLead>
FB_HD void mx_k_loop(const MxLane<kTiles, kG>& L, const std::uint8_t* pf, std::int64_t nb,
                     float (&acc)[kGroups][kTiles][4]) {
  const std::int64_t stages = nb / kU;
  if (stages == 0) return;
  // kLead: line 1 of the lane's row now (the loop asks for line 2 at block 0, line 3 at block 8,
  // ...): a short K (stage 2: 24 blocks) otherwise meets its second line at full DRAM latency.
  // Stage 1 (192 blocks) goes without: there it tipped ptxas into spills.
  if (kLead && pf && nb > 8) prefetch_l2(pf + 128);
  MxStage<kTiles, kG, kU, kOdd> st;
  MxScaleWords<kTiles> ws;
  mx_scale_words_load<kTiles, kG, kU>(ws, L, 0);
#pragma unroll
  for (int u = 0; u < kU; ++u) mx_block_load(st, u, L, 0, 0u);
#pragma unroll 1
  for (std::int64_t s = 0; s < stages; ++s) {
    const std::int64_t y0 = s * kU;
    mx_prefetch_ahead(pf, y0, nb);
    MxScaleWords<kTiles> ws_next;
    mx_stage_compute<kTiles, kG, kU, kOdd>(st, ws, ws_next, L, y0, s + 1 < stages ? y0 + kU : y0, acc);
    ws = ws_next;  // kTiles * 2 register moves a stage
  }
}

// One warp's share of the exact GEMM, swapped so that the weights fill the MMA's 16 rows and the
// sorted rows its 8 columns (a decode sort block holds a few tokens: 8 columns waste less than 16
// rows would): for kTiles tiles of 16 weight rows (w_rows[t] .. + 15) and the live 8-row groups of
// rows chunk .. chunk + kChunkRows - 1, acc[g][t][i] accumulates the canonical order over every
// 32-K block. Returns the number of live groups (padding fills the tail of a sort block, so they
// are a prefix). Stages of kStage blocks (one token in the chunk) or kStageOdd (more) where the
// weight scale rows allow one load for a stage's bytes (nb % 4 == 0 and a 4-byte aligned base, as
// on every m31 shape); otherwise stages of one block (the same loop). kLead: see mx_k_loop.
// hi_rows: how far a tile's second 8 rows (the MMA's rows 8..15) lie from its first: 8 (16
// consecutive weight rows), or I in stage 1's narrow mapping (gate rows n.. and up rows I + n..).
template <int kTiles, int kStage, int kStageOdd, bool kLead>
FB_HD int mx_warp_gemm(const MxChunk& ch, int chunk, int block, const std::uint8_t* w, const std::uint8_t* w_scales,
                       const std::int64_t (&w_rows)[kTiles], std::int64_t nb, int lane,
                       float (&acc)[kGroups][kTiles][4], std::int64_t hi_rows = 8) {
  static_assert(kTiles == 1 || kTiles == 2, "the prefetch spreads 2 kTiles rows over the 4 quads");
  const int group = lane >> 2, quad = lane & 3;
  int groups = 0;
  while (groups < kGroups && chunk + 8 * groups < block && ch.offset(chunk + 8 * groups) != kPadRow) ++groups;
#pragma unroll
  for (int g = 0; g < kGroups; ++g)
#pragma unroll
    for (int t = 0; t < kTiles; ++t)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[g][t][i] = 0.0f;
  if (groups == 0) return 0;
  // Row 1 of the chunk live: some odd C column holds a token (rows are a prefix of the block).
  const bool odd = groups > 1 || (chunk + 1 < block && ch.offset(chunk + 1) != kPadRow);
  const bool packed = nb % 4 == 0 && (reinterpret_cast<std::uintptr_t>(w_scales) & 3u) == 0;
  // This lane's prefetch row: tile quad / 2, row group + hi_rows (quad % 2). Static indices only
  // (an index by quad would put w_rows in local memory).
  const std::int64_t tile_step = w_rows[kTiles - 1] - w_rows[0];
  const std::uint8_t* pf =
      kTiles == 1 && quad >= 2 ? nullptr
                               : w + (w_rows[0] + ((quad & 2) ? tile_step : 0) + group + hi_rows * (quad & 1)) * ch.row_bytes;

  const auto run = [&](auto groups_tag, auto stage_tag, auto odd_tag) {
    constexpr int kG = decltype(groups_tag)::value, kU = decltype(stage_tag)::value;
    constexpr bool kOdd = decltype(odd_tag)::value;
    MxLane<kTiles, kG> L;
    L.quad = quad;
    L.w_hi = hi_rows * ch.row_bytes;
    L.ws_hi = hi_rows * nb;
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
      L.w[t] = w + (w_rows[t] + group) * ch.row_bytes + 4 * quad;
      L.ws[t] = w_scales + (w_rows[t] + group) * nb;
    }
    // Per group: the sorted rows of the lane's B operand (row `group`) and of its two C columns
    // (rows 2 quad, 2 quad + 1); the second column's scale row is the first's + 4 (the two share
    // their 16-row half, as the block and the chunk start at multiples of 16).
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      const bool live = g < groups;  // (kG = 2 with one live group: the unpacked path)
      const std::uint32_t off_b = live ? ch.offset(chunk + 8 * g + group) : kPadRow;
      const std::uint32_t off_0 = live ? ch.offset(chunk + 8 * g + 2 * quad) : kPadRow;
      const std::uint32_t off_1 = live ? ch.offset(chunk + 8 * g + 2 * quad + 1) : kPadRow;
      const std::uint8_t* xs = ch.act_scales + mx_scale_row_part(ch.first + chunk + 8 * g + 2 * quad, ch.pad);
      L.x[g] = off_b != kPadRow ? ch.act + off_b + 4 * quad : nullptr;
      L.xs0[g] = off_0 != kPadRow ? xs : nullptr;
      L.xs1[g] = off_1 != kPadRow ? xs + 4 : nullptr;
      L.c0[g] = off_0 != kPadRow ? ch.act + off_0 : nullptr;
      L.c1[g] = off_1 != kPadRow ? ch.act + off_1 : nullptr;
    }
    mx_k_loop<kTiles, kG, kU, kOdd, kLead>(L, pf, nb, acc);
  };
  using G1 = std::integral_constant<int, 1>;
  using G2 = std::integral_constant<int, 2>;
  using U1 = std::integral_constant<int, 1>;
  using Odd = std::true_type;
  using UOdd = std::integral_constant<int, kStageOdd>;
  if (!packed)  // stages of one block; a single dead group costs its MMAs (odd shapes only)
    run(G2{}, U1{}, Odd{});
  else if (groups == 2)
    run(G2{}, UOdd{}, Odd{});
  else if (odd)
    run(G1{}, UOdd{}, Odd{});
  else
    run(G1{}, std::integral_constant<int, kStage>{}, std::false_type{});
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

// Stage 1's two mappings of a warp (the same bits: a block sum is exact whichever rows share an
// MMA, and each output's promotions stay in K order). Wide: 16 output columns, a gate tile (W13
// rows n0 .. n0 + 15) and the matching up tile. Narrow: 8 columns in one tile whose rows 0-7 are
// gate rows n0 .. n0 + 7 and rows 8-15 the up rows I + n0 .., so c0 / c1 (gate) and c2 / c3 (up)
// of a lane are one output's pair. Narrow gives twice the warps for the same weights, at about 20 %
// more instructions (each warp converts its own activation words): at T = 3 the wide grid left
// about 4 warps per SM, each waiting on its own dependent chain (Nsight, run 44p: 0.38 issues per
// scheduler cycle), so the launcher takes narrow where the wide grid would hold fewer than
// kStage1NarrowBelow warps per SM (moe_stage1_narrow).
inline constexpr int kStage1Cols = 16, kStage1NarrowCols = 8;
inline constexpr int kStage1NarrowBelow = 8;
FB_HD bool moe_stage1_narrow(std::int64_t tokens, std::int64_t topk, std::int64_t experts, std::int64_t inter,
                             int multiprocessors) {
  const std::int64_t sort_blocks = tokens * topk < experts ? tokens * topk : experts;  // at most, with tokens
  return inter % (4 * kStage1NarrowCols) == 0 &&
         sort_blocks * (inter / kStage1Cols) < static_cast<std::int64_t>(kStage1NarrowBelow) * multiprocessors;
}

// One warp of the stage-1 exact kernel: sort block starting at sorted position `first` (its
// entries at `entries`, expert e), output columns n0 .. n0 + 15 (kNarrow: n0 .. n0 + 7) of gate (W13
// rows n0..) and up (rows I+n0..), lane `lane`. Chunks of kChunkRows rows up to the block's padding.
template <bool kOai, bool kNarrow = false>
FB_HD void moe_stage1_exact_warp(const Stage1Args& a, const std::int32_t* entries, std::int64_t first, std::int64_t e,
                                 std::int64_t n0, int lane) {
  constexpr int kTiles = kNarrow ? 1 : 2;
  const int group = lane >> 2, quad = lane & 3;
  const std::int64_t I = a.inter, nb = a.hidden / 32;
  const MxChunk ch{a.xq, a.x_scales, entries, first, a.tokens, a.topk, false, a.hidden / 2, (nb + 7) / 8 * 8};
  std::int64_t w_rows[kTiles];
  w_rows[0] = e * 2 * I + n0;                   // gate (narrow: gate rows, then up rows I further)
  if constexpr (!kNarrow) w_rows[kTiles - 1] = e * 2 * I + I + n0;  // up
  for (int chunk = 0; chunk < a.block; chunk += kChunkRows) {
    float acc[kGroups][kTiles][4];
    const int groups = mx_warp_gemm<kTiles, kStage1Blocks, kStage1BlocksOdd, false>(
        ch, chunk, static_cast<int>(a.block), a.w13, a.w13_scales, w_rows, nb, lane, acc, kNarrow ? I : 8);
    if (groups == 0) break;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      if (g >= groups) break;
#pragma unroll
      for (int i = 0; i < (kNarrow ? 2 : 4); ++i) {
        const std::int32_t entry = entries[chunk + 8 * g + 2 * quad + (i & 1)];
        if (moe_entry_token(entry) >= a.tokens) continue;  // padding
        const std::int64_t row = moe_entry_token(entry) * a.topk + moe_entry_slot(entry);
        const std::int64_t n = n0 + group + (i >= 2 ? 8 : 0);
        const float gate = acc[g][0][i], up = kNarrow ? acc[g][0][i + 2] : acc[g][kTiles - 1][i];
        a.a1[row * I + n] = bf16_from_float(moe_swiglu(kOai, gate, up));
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
    const int groups = mx_warp_gemm<2, kStage2Blocks, kStage2BlocksOdd, true>(ch, chunk, static_cast<int>(a.block), a.w2, a.w2_scales, w_rows, nb, lane, acc);
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
// narrow: stage 1's narrow mapping (moe_stage1_exact_warp), which the launcher picks by
// moe_stage1_narrow; the tests run both.
void moe_stage1_exact_simulate(const MoeGemmParams& p, const MoeStage1Buffers& b, bool narrow = false);
void moe_stage2_exact_simulate(const MoeGemmParams& p, const MoeStage2Buffers& b);

}  // namespace fb
