// e8m0 scales: all 256 codes, the round-up conversion and the three scale rules against exact
// definitions (every bf16, a stride of fp32, the edges of the byte range), the MX block vectors of
// docs/numeric-contract.md#test-vectors, and the inverse.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e2m1.hpp"
#include "reference/codecs/e8m0.hpp"
#include "reference/codecs/fp8.hpp"

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

// Definitions in fp64 from docs/numeric-contract.md#number-formats.
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

// The power of two at or above |y|, saturated to [2^-127, 2^127], from its definition in fp64:
// the smallest byte s with 2^(s - 127) >= |y|.
int round_up_reference(double y) {
  if (std::isnan(y) || std::isinf(y)) return 255;
  const double a = std::fabs(y);
  for (int s = 0; s < 254; ++s)
    if (std::ldexp(1.0, s - 127) >= a) return s;
  return 254;
}

TEST(E8m0Codec, RoundUpIsThePowerOfTwoAtOrAbove) {
  struct Vector {
    std::uint32_t bits;
    int byte;
  };
  const Vector vectors[] = {
      {0x00000000u, 0},    // +0: the smallest scale
      {0x80000000u, 0},    // -0
      {0x00000001u, 0},    // 2^-149
      {0x003FFFFFu, 0},    // just below 2^-127
      {0x00400000u, 0},    // 2^-127 exactly
      {0x00400001u, 1},    // just above 2^-127: 2^-126
      {0x00600000u, 1},    // 1.5 * 2^-127
      {0x007FFFFFu, 1},    // the largest subnormal
      {0x00800000u, 1},    // 2^-126
      {0x00800001u, 2},    // 2^-126 + ulp
      {0x3F800000u, 127},  // 1
      {0x3F800001u, 128},  // 1 + ulp
      {0x3FC00000u, 128},  // 1.5
      {0x4039999Au, 129},  // 2.9
      {0xC0800000u, 129},  // -4: the sign is ignored
      {0x7E800000u, 253},  // 2^126
      {0x7E800001u, 254},  // 2^126 + ulp
      {0x7F000000u, 254},  // 2^127 exactly
      {0x7F000001u, 254},  // above 2^127: saturates
      {0x7F400000u, 254},  // 1.5 * 2^127
      {0x7F7FFFFFu, 254},  // FLT_MAX
      {0xFF7FFFFFu, 254},  // -FLT_MAX
      {0x7F800000u, 255},  // +inf: the NaN scale
      {0xFF800000u, 255},  // -inf
      {0x7FC00000u, 255},  // NaN
      {0xFFC00001u, 255},  // -NaN
  };
  for (const Vector& v : vectors) EXPECT_EQ(e8m0_round_up(bits_float(v.bits)), v.byte) << std::hex << v.bits;
}

TEST(E8m0Codec, RoundUpMatchesItsDefinitionOnEveryBf16AndAStrideOfFp32) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const float y = bf16_to_float(static_cast<std::uint16_t>(b));
    ASSERT_EQ(e8m0_round_up(y), round_up_reference(y)) << std::hex << b;
  }
  for (std::uint64_t u = 0; u < (1ull << 32); u += 65537) {  // odd stride: every mantissa bit moves
    const float y = bits_float(static_cast<std::uint32_t>(u));
    ASSERT_EQ(e8m0_round_up(y), round_up_reference(y)) << std::hex << u;
  }
  // Every fp32 around the two saturation edges and the subnormal step.
  for (std::uint32_t centre : {0x00400000u, 0x00800000u, 0x7F000000u}) {
    for (std::uint32_t u = centre - 4096u; u <= centre + 4096u; ++u) {
      ASSERT_EQ(e8m0_round_up(bits_float(u)), round_up_reference(bits_float(u))) << std::hex << u;
    }
  }
}

TEST(E8m0Codec, RoundUpCallersNeverReachTheSaturatedRange) {
  // Both callers form y = fl32(max(amax, 1e-10) * fl32(1/MAX)) with MAX in {6, 240, 448}; the
  // product is monotonic in amax, so its extremes bound every finite y: it stays inside
  // (2^-127, 2^127], where the saturating round-up and the older exponent rule agree.
  for (const float inv_max : {bits_float(kInvSixBits), fp8_inv_max(Fp8Flavour::e4m3fnuz), fp8_inv_max(Fp8Flavour::e4m3fn)}) {
    const float lowest = bits_float(kAmaxFloorBits) * inv_max;
    const float highest = bits_float(0x7F7FFFFFu) * inv_max;
    EXPECT_GT(lowest, std::ldexp(1.0f, -127));
    EXPECT_LE(highest, std::ldexp(1.0f, 127));
  }
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
