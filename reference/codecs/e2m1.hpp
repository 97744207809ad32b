// fp4 e2m1 <-> fp32, bit-exact (semantics section 2).
//
// Codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 is the sign; there is no inf or NaN. Two codes
// share a byte, element 2j in the low nibble. A negative value that rounds to zero is 0x8.
//
// The encoder counts how many rounding thresholds |x| passes. `rne` rounds ties to the even code and
// saturates at 6; `half_away` rounds ties away from zero (and also saturates at 6). A NaN passes no
// threshold: it gives +-0 by its sign bit (no finite MX scale can produce one).
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

enum class Fp4Rounding : std::uint8_t { rne, half_away };

FB_HD std::uint8_t e2m1_from_float(float x, Fp4Rounding rounding) {
  const std::uint32_t u = float_bits(x);
  const std::uint8_t sign = static_cast<std::uint8_t>((u >> 28) & 0x8u);
  const float a = bits_float(u & 0x7FFFFFFFu);
  std::uint8_t code;
  if (rounding == Fp4Rounding::rne) {
    // Ties: 0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2, 3.5->4, 5->4 (to the even code).
    code = static_cast<std::uint8_t>((a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) + (a > 2.5f) +
                                     (a >= 3.5f) + (a > 5.0f));
  } else {
    code = static_cast<std::uint8_t>((a >= 0.25f) + (a >= 0.75f) + (a >= 1.25f) + (a >= 1.75f) + (a >= 2.5f) +
                                     (a >= 3.5f) + (a >= 5.0f));
  }
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
