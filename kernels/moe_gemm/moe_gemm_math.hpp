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

// The wgmma engine's conversion (moe_gemm_wgmma.hip), by table: eight e2m1 codes (a 32-bit word,
// element 0 in the low nibble) as eight e4m3 bytes in order (`first`: elements 0-3, `last`: 4-7),
// each the code's value times 2^(u-6), exactly, u = 0..12 (the largest, 6 * 2^6 = 384, stays below
// e4m3's 448). u > 0 carries a token block's scale in its operand (moe_gemm_wgmma_plan.hpp). Byte m
// of the table is the e4m3 magnitude of e2m1 magnitude m (exponent field e1 e0 plus u, mantissa
// m00; for u > 0 the subnormal 0.5, byte 0x04, becomes the normal 2^(u-7), byte u * 8). One byte
// permute a half word looks the magnitudes up; a second, whose selector nibbles carry the codes'
// signs in their top bits, gives 0x00 for a negative code and 0x7F for a positive one, and
// 0x80 - that byte is 0x80 or 0x01 (no borrow): the sign bit. Eleven operations a word, one table a
// block; run 60's profile put the engine's producer at 729 instructions a stage with a branch
// between two bit-operation conversions (7 and 23 operations a word).
struct E2m1E4m3Table {
  std::uint32_t lo, hi;  // bytes 0-3 and 4-7
};
FB_HD E2m1E4m3Table e2m1_e4m3_table(std::uint32_t u) {
  const std::uint32_t up = 8u * u;
  return {up * 0x01010000u + 0x0C080000u + ((u ? up : 4u) << 8), up * 0x01010101u + 0x1C181410u};
}
// PTX prmt.b32 (generic mode): result byte i is byte (sel nibble i & 7) of {hi:lo}, or, where that
// nibble's top bit is set, the selected byte's sign bit repeated eight times.
FB_HD std::uint32_t byte_permute(std::uint32_t lo, std::uint32_t hi, std::uint32_t sel) {
#if defined(__CUDA_ARCH__)
  std::uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(lo), "r"(hi), "r"(sel));
  return d;
#else
  const std::uint64_t bytes = lo | (static_cast<std::uint64_t>(hi) << 32);
  std::uint32_t d = 0;
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t n = (sel >> (4 * i)) & 0xFu;
    std::uint32_t b = static_cast<std::uint32_t>(bytes >> (8 * (n & 7u))) & 0xFFu;
    if (n & 8u) b = (b & 0x80u) ? 0xFFu : 0u;
    d |= b << (8 * i);
  }
  return d;
#endif
}
FB_HD void e2m1x8_to_e4m3x8_by_table(std::uint32_t w, const E2m1E4m3Table& t, std::uint32_t& first,
                                     std::uint32_t& last) {
  const std::uint32_t mag = w & 0x77777777u;
  const std::uint32_t pos_first = byte_permute(0x7F7F7F7Fu, 0x7F7F7F7Fu, w);
  const std::uint32_t pos_last = byte_permute(0x7F7F7F7Fu, 0x7F7F7F7Fu, w >> 16);
  first = byte_permute(t.lo, t.hi, mag) | ((0x80808080u - pos_first) & 0x80808080u);
  last = byte_permute(t.lo, t.hi, mag >> 16) | ((0x80808080u - pos_last) & 0x80808080u);
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
