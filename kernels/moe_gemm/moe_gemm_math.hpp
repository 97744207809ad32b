// The arithmetic of the MoE MXFP4 GEMMs, shared by every kernel and the CPU emulation (FB_HD), so
// both compute each bit the same way. Canonical order of one MXFP4 x MXFP4 dot product:
//   acc = +0
//   for each 32-element K block b, ascending:
//     S_b = sum over the block of e2m1(a) * e2m1(w)            exact (an integer in quarter units)
//     acc = acc + (S_b * 2^(sa - 127)) * 2^(sw - 127)          sa: activation scale, sw: weight scale
// e2m1 values are multiples of 1/2 up to 6, so in half units they are the integers h in
// {0, 1, 2, 3, 4, 6, 8, 12} with a sign; a product is h_a * h_w / 4 and a block sum is
// S_q / 4 with S_q = sum h_a h_w an integer, |S_q| <= 32 * 144 = 4608. Any engine that forms S_q
// in integers (int8 tensor cores, dp4a, a scalar loop) forms it exactly, whatever its order.
// float(S_q) is exact (< 2^24), * 0.25f and * 2^(sa-127) are exact (the result is a multiple of
// 2^(sa-129) >= 2^-129 with 13 significant bits: no rounding) unless it reaches 2^128 (only for
// sa >= 245), where it is +-inf; the weight scale's multiply may round (fp32 subnormal results) or
// overflow; then one rounding per block for the add. Every step is one IEEE operation, so
// overflow, underflow and NaN come out the same everywhere. A scale byte 0xFF is NaN and makes the
// sum NaN.
#pragma once

#include <cstdint>

#include "kernels/swiglu_fp8/swiglu_fp8_math.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e2m1.hpp"
#include "reference/codecs/e8m0.hpp"

namespace fb {

// One e2m1 code as a signed integer in half units: 0, 1, 2, 3, 4, 6, 8, 12 (exactly 2 * value).
FB_HD int e2m1_halves(std::uint32_t code) {
  const int m = static_cast<int>(code & 0x7u);
  const int h = m < 4 ? m : (m < 6 ? 2 * m - 4 : 4 * m - 16);
  return (code & 0x8u) ? -h : h;
}

// Byte permute (CUDA __byte_perm, PTX prmt.b32 without a mode, selectors 0..7 only): byte n of the
// result is byte ((sel >> 4n) & 7) of the 8 bytes {lo, hi}.
FB_HD std::uint32_t byte_perm(std::uint32_t lo, std::uint32_t hi, std::uint32_t sel) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(lo, hi, sel);
#else
  const std::uint64_t v = (static_cast<std::uint64_t>(hi) << 32) | lo;
  std::uint32_t r = 0;
  for (int n = 0; n < 4; ++n) r |= static_cast<std::uint32_t>((v >> (8 * ((sel >> (4 * n)) & 7u))) & 0xFFu) << (8 * n);
  return r;
#endif
}

// Eight e2m1 codes (a 32-bit word, element 0 in the low nibble) as eight int8 in two words
// (elements 0-3 in `lo`, 4-7 in `hi`, element j in byte j % 4): the int8 MMA operands, each byte
// 2 * value in [-12, 12]. Three byte permutes per half (checked against e2m1_halves on every
// 16-bit half): the magnitude code (3 bits) indexes the table {0, 1, 2, 3, 4, 6, 8, 12} and its
// negation; the sign bit (bit 3 of a nibble, moved to bit 2 by one shift) then picks byte j of the
// first (selector j) or of the second (selector j + 4).
inline constexpr std::uint32_t kHalvesLo = 0x03020100u, kHalvesHi = 0x0C080604u;        // 0, 1, 2, 3 | 4, 6, 8, 12
inline constexpr std::uint32_t kNegHalvesLo = 0xFDFEFF00u, kNegHalvesHi = 0xF4F8FAFCu;  // their negations
FB_HD void e2m1x8_to_s8x8(std::uint32_t w, std::uint32_t& lo, std::uint32_t& hi) {
  const std::uint32_t index = w & 0x77777777u;
  const std::uint32_t pick = ((w >> 1) & 0x44444444u) | 0x32103210u;
  lo = byte_perm(byte_perm(kHalvesLo, kHalvesHi, index), byte_perm(kNegHalvesLo, kNegHalvesHi, index), pick);
  const std::uint32_t index_hi = index >> 16, pick_hi = pick >> 16;
  hi = byte_perm(byte_perm(kHalvesLo, kHalvesHi, index_hi), byte_perm(kNegHalvesLo, kNegHalvesHi, index_hi), pick_hi);
}

// The low half alone: four codes (two bytes) as four int8.
FB_HD std::uint32_t e2m1x4_to_s8x4(std::uint32_t two_bytes) {
  std::uint32_t lo, hi;
  e2m1x8_to_s8x8(two_bytes & 0xFFFFu, lo, hi);
  return lo;
}

// S_q of one 32-element block: 16 bytes of each operand, in a fixed order (the value is an exact
// integer whatever the order).
FB_HD int mx_block_sum_quarters(const std::uint8_t* a, const std::uint8_t* w) {
  int s = 0;
  for (int i = 0; i < 16; ++i) {
    s += e2m1_halves(a[i] & 0xFu) * e2m1_halves(w[i] & 0xFu);
    s += e2m1_halves(a[i] >> 4) * e2m1_halves(w[i] >> 4);
  }
  return s;
}

// One block's promotion: acc + (S_b * 2^(sa-127)) * 2^(sw-127), with S_b = S_q / 4.
FB_HD float mx_block_promote(float acc, int quarters, std::uint8_t sa, std::uint8_t sw) {
  const float block = static_cast<float>(quarters) * 0.25f;
  return acc + (block * e8m0_to_float(sa)) * e8m0_to_float(sw);
}

// The same promotion with the activation scale's 2^(sa-129) formed first (once per row and block
// in the kernels): float(S_q) * 2^(sa-129) has the same exact value as (S_q * 0.25) * 2^(sa-127)
// (2^(sa-129) >= 2^-129 is an fp32 subnormal or normal, never rounded), so it rounds (overflows)
// the same way, and the rest is the same operations. Checked for every (sa, sw) pair.
//
// mx_scale_float is e8m0_to_float without branches, for the kernels' K loops: Nsight Compute
// (run 44p, stage 1 at T = 3) put about half of the exact kernel's stall samples on the codec's two
// early returns (branch resolving and dependent waits, once per scale and block). The same bits:
// 2^(s-127) is s << 23 for s = 1..254; s = 0 (2^-127) and s = 255 (NaN) are those bits with bit 22
// set, and exactly they have (s + 1) & 0xFE == 0. (Checked for all 256 bytes.) The K loop takes
// it for the activation scales and, in stage 1, the weight scales; stage 2 (96 registers) keeps
// the codec for its weight scales, where ptxas spilled with it (the same values either way;
// kCodecScales in moe_gemm_exact.hpp).
FB_HD float mx_scale_float(std::uint32_t s) {
  return bits_float((s << 23) | (((s + 1u) & 0xFEu) == 0u ? 0x00400000u : 0u));
}
FB_HD float mx_quarter_scale(std::uint8_t sa) { return e8m0_to_float(sa) * 0.25f; }
FB_HD float mx_block_promote_scaled(float acc, int quarters, float quarter_scale_a, float scale_w) {
  return acc + (static_cast<float>(quarters) * quarter_scale_a) * scale_w;
}

// The stage-1 activation of one (gate, up) pair, as the landed SwiGLU (F2) computes it.
FB_HD float moe_swiglu(bool oai, float gate, float up) {
  return oai ? swiglu_oai_value(gate, up) : silu_mul_value(gate, up);
}

// The end of a token's stage-2 sum (the sum itself: acc = +0, then acc + w_s * y_s over the slots
// in order). none: bf16(sum); fold: bf16(sum + shared); chain: bf16(bf16(sum) + shared).
FB_HD std::uint16_t moe_finish_fold(float sum, std::uint16_t shared) {
  return bf16_from_float(sum + bf16_to_float(shared));
}
FB_HD std::uint16_t moe_finish_chain(std::uint16_t routed, std::uint16_t shared) {
  return bf16_from_float(bf16_to_float(routed) + bf16_to_float(shared));
}

}  // namespace fb
