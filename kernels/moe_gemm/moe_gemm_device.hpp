// Device pieces of the MoE GEMMs: the matrix-unit block sums of a 16 x 8 tile, and the loads the
// kernels share. Arithmetic: moe_gemm_math.hpp.
//
// Matrix unit (NVIDIA sm_80 and later): mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32. Its K of
// 32 is exactly one MX block, so one instruction with a zero accumulator gives the block sums S_q
// of a 16 x 8 tile. Each e2m1 code becomes the int8 2 * value (an integer in [-12, 12]): integer
// multiply-adds into int32 are exact whatever the hardware's order (|S_q| <= 4608). Fragments
// (lane = 4 * group + quad; PTX ISA, "Matrix Fragments for mma.m16n8k32"):
//   A 16 x 32 row-major  a0: row group, k 4q..4q+3     a1: row group + 8, k 4q..
//                        a2: row group, k 16+4q..      a3: row group + 8, k 16+4q..
//   B 32 x 8 column      b0: column group, k 4q..      b1: column group, k 16+4q..
//   C 16 x 8             c0: (group, 2q)  c1: (group, 2q+1)  c2: (group+8, 2q)  c3: (group+8, 2q+1)
// In e2m1x2 bytes, elements 4q..4q+3 of a block are bytes 2q and 2q+1; 16+4q.. are bytes 8+2q, 9+2q.
// Elsewhere (AMD until an MFMA path lands, older NVIDIA) each lane computes its four sums with the
// scalar integer loop: the same integers.
#pragma once

#include "kernels/common/hip_compat.hpp"
#include "kernels/moe_gemm/moe_gemm_math.hpp"

namespace fb {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define FB_MOE_INT8_MMA 1
#else
#define FB_MOE_INT8_MMA 0
#endif

// Two bytes at p (any alignment the caller guarantees: even offsets) as the low 16 bits.
__device__ inline std::uint32_t load_u16(const std::uint8_t* p) {
  return *reinterpret_cast<const std::uint16_t*>(p);
}

// S_q of the 16 x 8 tile whose A rows `group` and `group + 8` start (this block) at a_lo / a_hi
// (nullptr: a sentinel row, all zero) and whose B column j starts at w + j * w_stride. Lane
// (group, quad) gets c0..c3 as in the header comment. Every lane of the warp must call it.
__device__ inline void mx_tile_block_sums(const std::uint8_t* a_lo, const std::uint8_t* a_hi, const std::uint8_t* w,
                                          std::int64_t w_stride, int group, int quad, int (&c)[4]) {
#if FB_MOE_INT8_MMA
  const std::uint32_t a0 = a_lo ? e2m1x4_to_s8x4(load_u16(a_lo + 2 * quad)) : 0u;
  const std::uint32_t a1 = a_hi ? e2m1x4_to_s8x4(load_u16(a_hi + 2 * quad)) : 0u;
  const std::uint32_t a2 = a_lo ? e2m1x4_to_s8x4(load_u16(a_lo + 8 + 2 * quad)) : 0u;
  const std::uint32_t a3 = a_hi ? e2m1x4_to_s8x4(load_u16(a_hi + 8 + 2 * quad)) : 0u;
  const std::uint8_t* col = w + group * w_stride;
  const std::uint32_t b0 = e2m1x4_to_s8x4(load_u16(col + 2 * quad));
  const std::uint32_t b1 = e2m1x4_to_s8x4(load_u16(col + 8 + 2 * quad));
  const int zero = 0;
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(zero));
#else
  for (int i = 0; i < 4; ++i) {
    const std::uint8_t* a = i < 2 ? a_lo : a_hi;
    c[i] = a ? mx_block_sum_quarters(a, w + (2 * quad + (i & 1)) * w_stride) : 0;
  }
#endif
}

}  // namespace fb
