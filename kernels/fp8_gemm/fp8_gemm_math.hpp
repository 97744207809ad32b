// The arithmetic of the per-token x per-channel fp8 GEMM, shared by the kernels and the emulation.
//
// Canonical order of acc[m][n] = sum_k A[m][k] * B[n][k] (depends on K alone; K % 16 == 0):
//   1. K is cut into chunks of 16 consecutive k; chunk c belongs to partial j = c % 16;
//   2. partial j starts at +0 and adds, for its chunks in increasing c, the chunk's 16 products in
//      increasing k: one fp32 add per product. A product of two e4m3 values is exact in fp32 (4 x 4
//      significant bits, exponents within 2^-18 .. 2^18), so a fused multiply-add would round the
//      same: the order of the adds is the whole contract;
//   3. the 16 partials are combined by a halving tree p[j] = p[j] + p[j + h], h = 8, 4, 2, 1.
// Epilogue: C = bf16_rne(fl32(fl32(acc * b_scale[n]) * a_scale[m])), left to right as the CK epilogue.
// A 16-lane group maps it one partial per lane (the small-M kernel); one thread can hold all 16
// (the plain kernel, the emulation). Longest chain of adds per output: K / 16 + 4 (the fp64 bound).
#pragma once

#include <cstdint>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/fp8.hpp"

namespace fb {

inline constexpr int kFp8GemmChunk = 16;     // consecutive k per chunk (one 16-byte load)
inline constexpr int kFp8GemmPartials = 16;  // partials of the canonical order
inline constexpr int kFp8GemmBlockK = 128;   // the matrix-unit kernel's promotion block

template <class Format>
FB_HD float fp8_value(std::uint8_t code) {
  return fp8_decode<Format>(code);
}

// Two fp8 bytes (lo: the low byte) to fp32, exactly. sm_89+ e4m3fn: the hardware converter to
// f16x2 (every e4m3 value is exact in f16), then f16 -> f32; elsewhere the software decoder.
template <class Format>
FB_HD void fp8x2_to_float(std::uint16_t two, float& lo, float& hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if constexpr (Format::kFlavour == Fp8Flavour::e4m3fn) {
    unsigned h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(two));
    asm("cvt.f32.f16 %0, %1;" : "=f"(lo) : "h"(static_cast<unsigned short>(h2 & 0xFFFFu)));
    asm("cvt.f32.f16 %0, %1;" : "=f"(hi) : "h"(static_cast<unsigned short>(h2 >> 16)));
    return;
  }
#endif
  lo = fp8_decode<Format>(static_cast<std::uint8_t>(two & 0xFFu));
  hi = fp8_decode<Format>(static_cast<std::uint8_t>(two >> 8));
}

// One chunk of the canonical order: p += a[i] * b[i] for i = 0..15 in order (a, b decoded).
FB_HD float fp8_gemm_chunk_add(float p, const float* a, const float* b) {
  for (int i = 0; i < kFp8GemmChunk; ++i) p = p + a[i] * b[i];
  return p;
}

// Step 3 over 16 partials held by one thread (overwrites them).
FB_HD float fp8_gemm_tree16(float* p) {
  for (int h = kFp8GemmPartials / 2; h > 0; h /= 2)
    for (int j = 0; j < h; ++j) p[j] = p[j] + p[j + h];
  return p[0];
}

// The epilogue: (acc * b_scale) * a_scale in fp32, rounded once to bf16.
FB_HD std::uint16_t fp8_gemm_epilogue(float acc, float b_scale, float a_scale) {
  const float y = acc * b_scale;
  return bf16_from_float(y * a_scale);
}

}  // namespace fb
