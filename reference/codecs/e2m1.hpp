// fp4 e2m1 <-> fp32, bit-exact (docs/numeric-contract.md#number-formats).
//
// Codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 is the sign; there is no inf or NaN. Two codes
// share a byte, element 2j in the low nibble. A negative value that rounds to zero is 0x8.
//
// The encoder rounds |x| to the nearest code: `rne` rounds ties to the even code and saturates at 6;
// `half_away` rounds ties away from zero (and also saturates at 6). A NaN gives +-0 by its sign bit
// (no finite MX scale can produce one). Defined by thresholds (tests/reference/e2m1_codec_test.cpp
// keeps that definition and compares every fp32 input); computed with a few integer operations.
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

enum class Fp4Rounding : std::uint8_t { rne, half_away };

// Magnitude |x| as fp32 bits, NaN mapped to +0 (a NaN passes no threshold). On NVIDIA one FMNMX
// with an |x| operand (max returns the non-NaN operand, every NaN alike); elsewhere an integer test,
// which does not depend on how a maximum treats signalling NaNs.
FB_HD std::uint32_t e2m1_magnitude_bits(float x) {
#if defined(__CUDA_ARCH__)
  return float_bits(fmaxf(fabsf(x), 0.0f));
#else
  const std::uint32_t m = float_bits(x) & 0x7FFFFFFFu;
  return m > 0x7F800000u ? 0u : m;
#endif
}

FB_HD std::uint8_t e2m1_from_float(float x, Fp4Rounding rounding) {
  // Same codes as counting the thresholds (rne: a > 0.25, a >= 0.75, a > 1.25, a >= 1.75, a > 2.5,
  // a >= 3.5, a > 5; half_away: all >=), in a few integer steps (checked on all 2^32 inputs):
  //   a >= 1: the code is 2 * (exponent - 127) + the kept mantissa bit + 2, i.e. the bits rounded
  //           to a multiple of 2^22 (one mantissa bit), shifted, minus 252, saturated at 7 (inf too);
  //   a < 1:  codes 0, 1, 2 step by 0.5, so the code is 2a rounded to an integer.
  const std::uint32_t u = float_bits(x);
  const std::uint32_t sign = (u >> 28) & 0x8u;
  const std::uint32_t m = e2m1_magnitude_bits(x);
  const float a = bits_float(m);
  std::uint32_t big, small;
  if (rounding == Fp4Rounding::rne) {
    // Round half to even at bit 22; the bias folds the -252 in (m >= 0x3F800000 = 254 << 22 here).
    big = (m + (0x1FFFFFu - (252u << 22)) + ((m >> 22) & 1u)) >> 22;
    // 2a + 2^23 rounds 2a to an integer (ties to even) in one rounding: 2a is exact.
    small = float_bits(fma32(a, 2.0f, 8388608.0f)) - 0x4B000000u;
  } else {
    big = (m + (0x200000u - (252u << 22))) >> 22;
    small = static_cast<std::uint32_t>(m >= 0x3E800000u) + static_cast<std::uint32_t>(m >= 0x3F400000u);
  }
  const std::uint32_t code = m >= 0x3F800000u ? (big < 7u ? big : 7u) : small;
  return static_cast<std::uint8_t>(code | sign);
}

FB_HD float e2m1_to_float(std::uint8_t nibble) {
  // Magnitudes in half units: 0, 1, 2, 3, 4, 6, 8, 12.
  const std::uint32_t m = nibble & 0x7u;
  const std::uint32_t halves = m < 4u ? m : (m < 6u ? 4u + (m - 4u) * 2u : 8u + (m - 6u) * 4u);
  const float v = static_cast<float>(halves) * 0.5f;
  return (nibble & 0x8u) ? -v : v;
}

// Pack element 2j (low nibble) and 2j+1 (high nibble).
FB_HD std::uint8_t e2m1_pack(std::uint8_t even, std::uint8_t odd) {
  return static_cast<std::uint8_t>((even & 0xFu) | ((odd & 0xFu) << 4));
}

}  // namespace fb
