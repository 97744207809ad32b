// Device pieces of the MoE GEMMs: the matrix-unit block sums of a warp's 16-row tile, and the
// fragment loads they share. Arithmetic: moe_gemm_math.hpp.
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

#include "kernels/common/hip_compat.hpp"
#include "kernels/moe_gemm/moe_gemm_fragments.hpp"

namespace fb {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define FB_MOE_INT8_MMA 1
#else
#define FB_MOE_INT8_MMA 0
#endif

// Warps per CTA of the exact kernels: each takes a 16-column slice of the output (two n8 MMA
// tiles, or two gate and two up tiles in stage 1) over every 16-row slice of its sort block.
// Four where the columns divide by 64, else two (columns are a multiple of 32).
inline int moe_exact_warps(std::int64_t cols) { return cols % 64 == 0 ? 4 : 2; }

#if FB_MOE_INT8_MMA
__device__ inline void mx_mma_block_sums(const MxAFragment& fa, const MxBFragment& fb, int (&c)[4]) {
  const int zero = 0;
  asm(  // no side effects: the compiler may move it and the loads around it
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(fa.a[0]), "r"(fa.a[1]), "r"(fa.a[2]), "r"(fa.a[3]), "r"(fb.b[0]), "r"(fb.b[1]), "r"(zero));
}
#endif

// S_q of kTiles 16 x 8 tiles that share their A rows (`group`, `group + 8` at a_lo / a_hi, this
// block; nullptr: zero) and whose B column j of tile t starts at w[t] + j * w_stride. Lane (group,
// quad) gets c[t][0..3] as in the header comment. Every lane of the warp must call it.
template <int kTiles>
__device__ inline void mx_warp_block_sums(const std::uint8_t* a_lo, const std::uint8_t* a_hi,
                                          const std::uint8_t* const (&w)[kTiles], std::int64_t w_stride, int group,
                                          int quad, int (&c)[kTiles][4]) {
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

}  // namespace fb
