// e8m0 scale bytes (docs/numeric-contract.md#number-formats): byte s means 2^(s-127); 0xFF is
// NaN; byte 0 is 2^-127, an fp32 subnormal (never zero).
//
// Three rules pick the MX block scale from the block's amax (32 elements along K):
//   roundup (default)  amax floored at 1e-10; y = fl32(amax * fl32(1/6)); s = biased exponent of y,
//                      plus one if y's mantissa is non-zero; NaN or inf amax gives 0xFF.
//   even               add 0x200000 to amax's bits, mask 0xFF800000, s = max(E - 2, 0), 254 when E = 255.
//   floor (OCP v1.0)   s = biased exponent of fl32(amax / 4).
// Elements are then quantized from x * 2^(127 - s), an exact power-of-two multiply.
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

enum class MxScaleRule : std::uint8_t { roundup, even, floor };

// 1e-10 as an fp32 (the amax floor of the fp8 and MX roundup rules).
inline constexpr std::uint32_t kAmaxFloorBits = 0x2EDBE6FFu;
// fl32(1/6).
inline constexpr std::uint32_t kInvSixBits = 0x3E2AAAABu;

// The power of two at or above |y|, as an e8m0 byte, saturated to the byte range:
//   |y| <= 2^-127 (zero and the smallest subnormals)  0    (2^-127, the smallest scale)
//   2^-127 < |y| <= 2^127                              the exponent of |y| rounded up (exact)
//   |y| > 2^127, finite                                254  (2^127, the largest scale)
//   |y| infinite or NaN                                0xFF (NaN: no scale can hold the block)
// The sign is ignored. On every finite fp32 this is the CUDA toolkit's
// __nv_cvt_float_to_e8m0(y, __NV_SATFINITE, cudaRoundPosInf); on inf the toolkit's saturating form
// gives 254 and its non-saturating form 0xFF, and the contract wants the NaN scale (0xFF), so an
// infinite amax cannot pass as a finite block. Both callers (the MX roundup rule and fp8 quant's
// e8m0 scales) floor amax at 1e-10 and multiply it by fl32(1/6) or a smaller fl32(1/MAX), so a
// finite y lies in [2^-43, 2^126): neither saturation ever reaches them.
FB_HD std::uint8_t e8m0_round_up(float y) {
  const std::uint32_t u = float_bits(y) & 0x7FFFFFFFu;
  if (u >= 0x7F800000u) return 0xFFu;  // inf or NaN
  if (u <= 0x00400000u) return 0u;     // at or below 2^-127
  if (u > 0x7F000000u) return 254u;    // above 2^127
  // Here the exponent field is at most 254 with a zero mantissa, or at most 253 with a non-zero
  // one; the fp32 subnormals in (2^-127, 2^-126) have field 0 and a non-zero mantissa: byte 1.
  return static_cast<std::uint8_t>((u >> 23) + ((u & 0x7FFFFFu) != 0u ? 1u : 0u));
}

// max(amax, 1e-10) on fp32 bit patterns of non-negative values: the integer order is the numeric
// order, and a NaN (larger than every finite pattern) survives.
FB_HD std::uint32_t amax_floor_bits(std::uint32_t amax_bits) {
  return amax_bits > kAmaxFloorBits ? amax_bits : kAmaxFloorBits;
}

FB_HD std::uint8_t e8m0_scale_from_amax(float amax, MxScaleRule rule) {
  const std::uint32_t bits = float_bits(amax) & 0x7FFFFFFFu;
  switch (rule) {
    case MxScaleRule::roundup:
      return e8m0_round_up(bits_float(amax_floor_bits(bits)) * bits_float(kInvSixBits));
    case MxScaleRule::even: {
      const std::uint32_t e = ((bits + 0x200000u) & 0xFF800000u) >> 23;
      if (e == 0xFFu) return 254u;
      return static_cast<std::uint8_t>(e > 2u ? e - 2u : 0u);
    }
    case MxScaleRule::floor:
    default:
      return static_cast<std::uint8_t>((float_bits(bits_float(bits) / 4.0f) >> 23) & 0xFFu);
  }
}

FB_HD float e8m0_to_float(std::uint8_t s) {
  if (s == 0xFFu) return bits_float(0x7FC00000u);
  if (s == 0u) return bits_float(0x00400000u);  // 2^-127
  return bits_float(static_cast<std::uint32_t>(s) << 23);
}

// 2^(127 - s): the exact multiplier that takes a block to its element range. s = 254 gives the
// subnormal 2^-127; s = 255 (NaN scale) gives NaN, so the block's elements carry no value.
FB_HD float e8m0_inverse(std::uint8_t s) {
  if (s == 0xFFu) return bits_float(0x7FC00000u);
  if (s == 254u) return bits_float(0x00400000u);
  return bits_float((254u - static_cast<std::uint32_t>(s)) << 23);
}

}  // namespace fb
