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

// Two bytes (four e2m1 codes, element 0 in the low nibble of the first byte) as four int8 in one
// word, element j in byte j: an int8 MMA operand (each byte in [-12, 12]).
FB_HD std::uint32_t e2m1x4_to_s8x4(std::uint32_t two_bytes) {
  std::uint32_t w = 0;
  for (int j = 0; j < 4; ++j) {
    const int h = e2m1_halves((two_bytes >> (4 * j)) & 0xFu);
    w |= (static_cast<std::uint32_t>(h) & 0xFFu) << (8 * j);
  }
  return w;
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
