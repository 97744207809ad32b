// The arithmetic of the MoE MXFP4 GEMMs, shared by every kernel and the CPU emulation (FB_HD), so
// both compute each bit the same way. Canonical order of one MXFP4 x MXFP4 dot product:
//   acc = +0
//   for each 32-element K block b, ascending:
//     S_b = sum over the block of e2m1(a) * e2m1(w)            exact (an integer in quarter units)
//     acc = acc + (S_b * 2^(sa - 127)) * 2^(sw - 127)          sa: activation scale, sw: weight scale
// e2m1 values are multiples of 1/2 up to 6, so in half units they are the integers h in
// {0, 1, 2, 3, 4, 6, 8, 12} with a sign; a product is h_a * h_w / 4 and a block sum is
// S_q / 4 with S_q = sum h_a h_w an integer, |S_q| <= 32 * 144 = 4608. Any engine that forms S_q
// in integers (int8 tensor cores, dp4a, a scalar loop), or as S_q * 2^-14 in a float engine that
// keeps 13 bits (the fp8 tensor cores the kernels use), forms it exactly, whatever its order.
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

// Eight e2m1 codes (a 32-bit word, element 0 in the low nibble) as eight fp8 e4m3 bytes in two
// words, the matrix unit's operands: `even` holds elements 0, 2, 4, 6 (the low nibbles; byte j is
// element 2j), `odd` elements 1, 3, 5, 7. The e4m3 byte of code s e1 e0 m is s << 7 | (e1 e0 m) << 2:
// exponent field e1 e0, mantissa m00, so its value is the code's value times 2^-6 exactly, the
// subnormal codes (0, 0.5) included (checked on every code and every 16-bit input). Bit operations
// only (two shifts and two masks a word half): the earlier int8 form (2 * value from two byte
// permute tables and a sign pick, three PRMT per four codes plus the tables ptxas re-materialised
// before each one) was about half of the K loop's instructions (run 55's SASS).
FB_HD void e2m1x8_to_e4m3x8(std::uint32_t w, std::uint32_t& even, std::uint32_t& odd) {
  even = ((w << 2) & 0x1C1C1C1Cu) | ((w << 4) & 0x80808080u);
  odd = ((w >> 2) & 0x1C1C1C1Cu) | (w & 0x80808080u);
}

// The same conversion with every value also times 2^u, u = 1..12: each e4m3 byte is the code's value
// times 2^(u-6), exactly (the largest, 6 * 2^6 = 384, stays below e4m3's 448). The wgmma engine
// carries a token's block scale in its operand this way (moe_gemm_wgmma_plan.hpp). A nonzero code
// moves u up in the exponent field (u * 8 added to its byte); the subnormal 0.5 (byte 0x04, 2^-7)
// becomes the normal 2^(u-7), byte u * 8, so it also drops its 4; zeros stay. Nibble flags: a
// magnitude m (0..7) plus 7 reaches bit 3 iff m >= 1, plus 6 iff m >= 2, with no carry out.
FB_HD void e2m1x8_to_e4m3x8_shifted(std::uint32_t w, std::uint32_t u, std::uint32_t& even, std::uint32_t& odd) {
  e2m1x8_to_e4m3x8(w, even, odd);
  const std::uint32_t mag = w & 0x77777777u;
  const std::uint32_t nonzero = (mag + 0x77777777u) & 0x88888888u;
  const std::uint32_t half = nonzero ^ ((mag + 0x66666666u) & 0x88888888u);  // magnitude exactly 0.5
  // Element 2j's flags sit at bit 8j + 3 (value 8 in byte j), element 2j + 1's at bit 8j + 7.
  even += (nonzero & 0x08080808u) * u - ((half & 0x08080808u) >> 1);
  odd += ((nonzero >> 4) & 0x08080808u) * u - ((half >> 5) & 0x04040404u);
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

// The same promotion from the matrix unit's fp32 block sum f = S_q * 2^-14 (e4m3 operands carry
// each value times 2^-6, so a product carries 2^-12 and S_q / 4 arrives times 2^-12, exactly: see
// moe_gemm_exact.hpp): f * 2^12 is S_q * 0.25 exactly, and the rest is mx_block_promote's
// operations in its order, with the scales decoded once a block. Checked for every (sa, sw) pair.
//
// mx_scale_float is e8m0_to_float without branches, for the kernels' K loops: Nsight Compute
// (run 44p, stage 1 at T = 3) put about half of the exact kernel's stall samples on the codec's two
// early returns (branch resolving and dependent waits, once per scale and block). The same bits:
// 2^(s-127) is s << 23 for s = 1..254; s = 0 (2^-127) and s = 255 (NaN) are those bits with bit 22
// set, and exactly they have (s + 1) & 0xFE == 0. (Checked for all 256 bytes.) The K loops take
// it for every activation and weight scale.
FB_HD float mx_scale_float(std::uint32_t s) {
  return bits_float((s << 23) | (((s + 1u) & 0xFEu) == 0u ? 0x00400000u : 0u));
}
inline constexpr float kMxMmaSumScale = 0x1p-14f;  // the matrix unit's block sum is S_q times this
FB_HD float mx_block_promote_mma(float acc, float mma_sum, float scale_a, float scale_w) {
  return acc + ((mma_sum * 4096.0f) * scale_a) * scale_w;
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
