// e8m0 scales: all 256 codes, the three scale rules against exact definitions over every bf16 amax
// and a stride of fp32, the MX block vectors of number-formats.md section 6.2, and the inverse.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e2m1.hpp"
#include "reference/codecs/e8m0.hpp"

namespace fb {
namespace {

TEST(E8m0Codec, EveryCodeDecodes) {
  EXPECT_EQ(float_bits(e8m0_to_float(0)), 0x00400000u);  // 2^-127, a subnormal, never zero
  EXPECT_TRUE(std::isnan(e8m0_to_float(255)));
  for (int s = 1; s < 255; ++s) EXPECT_EQ(e8m0_to_float(static_cast<std::uint8_t>(s)), std::ldexp(1.0f, s - 127));
}

TEST(E8m0Codec, InverseIsTheExactReciprocalPowerOfTwo) {
  for (int s = 0; s < 255; ++s) {
    const float inv = e8m0_inverse(static_cast<std::uint8_t>(s));
    EXPECT_EQ(static_cast<double>(inv), std::ldexp(1.0, 127 - s)) << s;
  }
  EXPECT_TRUE(std::isnan(e8m0_inverse(255)));
}

// Definitions in fp64 from semantics section 2.
int roundup_reference(double amax) {
  const double y = static_cast<float>(static_cast<float>(std::max(amax, 1e-10)) * bits_float(kInvSixBits));
  if (!std::isfinite(y)) return 255;
  int e;
  const double m = std::frexp(y, &e);  // y = m 2^e, m in [0.5, 1)
  return (e - 1 + 127) + (m != 0.5 ? 1 : 0);
}
int floor_reference(double amax) {
  if (!std::isfinite(amax)) return 255;
  const double q = amax / 4.0;
  if (q < std::ldexp(1.0, -126)) return 0;
  return std::ilogb(q) + 127;
}
int even_reference(double amax) {
  // Round amax half-up to 2 significant bits (the 0x200000 add), take its exponent, minus 2.
  if (!std::isfinite(amax)) return 254;
  if (amax < std::ldexp(1.0, -126)) {
    // Subnormal amax: the add can carry into exponent 1 only when the fraction passes 0x600000.
    return 0;
  }
  int e = std::ilogb(amax);
  const double m = amax / std::ldexp(1.0, e);  // [1, 2)
  if (m >= 1.75) ++e;
  const int biased = e + 127;
  if (biased >= 255) return 254;
  return std::max(biased - 2, 0);
}

TEST(E8m0Codec, RulesMatchTheirDefinitionsOnEveryBf16Amax) {
  for (std::uint32_t b = 0; b < 0x8000; ++b) {  // non-negative bf16, infinities and NaN included
    const float amax = bf16_to_float(static_cast<std::uint16_t>(b));
    if (std::isnan(amax)) {
      EXPECT_EQ(e8m0_scale_from_amax(amax, MxScaleRule::roundup), 255);
      EXPECT_EQ(e8m0_scale_from_amax(amax, MxScaleRule::floor), 255);
      EXPECT_EQ(e8m0_scale_from_amax(amax, MxScaleRule::even), 254);
      continue;
    }
    ASSERT_EQ(e8m0_scale_from_amax(amax, MxScaleRule::roundup), roundup_reference(amax)) << amax;
    ASSERT_EQ(e8m0_scale_from_amax(amax, MxScaleRule::floor), floor_reference(amax)) << amax;
    if (amax >= std::ldexp(1.0f, -126)) ASSERT_EQ(e8m0_scale_from_amax(amax, MxScaleRule::even), even_reference(amax)) << amax;
  }
}

TEST(E8m0Codec, RoundupNeverClipsTheBlockMaximum) {
  // The rule's purpose: amax * 2^(127 - s) <= 6, so the largest element never saturates.
  for (std::uint64_t u = 0x00800000; u < 0x7F800000; u += 4099) {
    const float amax = bits_float(static_cast<std::uint32_t>(u));
    const std::uint8_t s = e8m0_scale_from_amax(amax, MxScaleRule::roundup);
    ASSERT_LE(static_cast<double>(amax) * std::ldexp(1.0, 127 - s), 6.0) << amax;
  }
}

TEST(E8m0Codec, MxBlockVectors) {
  // amax = 6 * 2^k: every rule but 'even' gives 2^k; amax = 7: floor keeps 1 (7 -> 6), roundup 2 (7 -> 3.5 -> 4).
  EXPECT_EQ(e8m0_scale_from_amax(6.0f, MxScaleRule::roundup), 127);
  EXPECT_EQ(e8m0_scale_from_amax(6.0f, MxScaleRule::floor), 127);
  EXPECT_EQ(e8m0_scale_from_amax(6.0f, MxScaleRule::even), 127);
  EXPECT_EQ(e8m0_scale_from_amax(7.0f, MxScaleRule::floor), 127);
  EXPECT_EQ(e8m0_scale_from_amax(7.0f, MxScaleRule::roundup), 128);
  EXPECT_EQ(e8m0_scale_from_amax(7.0f, MxScaleRule::even), 128);
  EXPECT_EQ(e2m1_from_float(7.0f * e8m0_inverse(128), Fp4Rounding::rne), 6);  // 3.5 -> 4 (code 6)
  EXPECT_EQ(e8m0_scale_from_amax(6.5f, MxScaleRule::even), 127);
  EXPECT_EQ(e8m0_scale_from_amax(6.5f, MxScaleRule::roundup), 128);
  EXPECT_EQ(e8m0_scale_from_amax(0.0f, MxScaleRule::floor), 0);
  EXPECT_EQ(e8m0_scale_from_amax(0.0f, MxScaleRule::even), 0);
  EXPECT_EQ(e8m0_scale_from_amax(INFINITY, MxScaleRule::roundup), 255);
  EXPECT_EQ(e8m0_scale_from_amax(INFINITY, MxScaleRule::even), 254);
}

}  // namespace
}  // namespace fb
