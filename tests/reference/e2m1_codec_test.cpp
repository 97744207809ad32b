// e2m1 (fp4) codec: all 16 codes, the tie table of docs/numeric-contract.md#test-vectors for both
// rounding options, every bf16 input against an fp64 rounding written from the definition, and every fp32
// input (NaNs included) against the threshold-counting definition the fast encoder replaced.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e2m1.hpp"

namespace fb {
namespace {

constexpr double kValues[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};

// Nearest e2m1 magnitude code of |x|, ties to even code or away from zero, saturating at 6.
std::uint8_t reference_code(double x, Fp4Rounding rounding) {
  const double a = std::fabs(x);
  if (a >= 6.0) return static_cast<std::uint8_t>(7 | (std::signbit(x) ? 0x8 : 0));  // saturate (inf too)
  int best = 0;
  for (int c = 1; c < 8; ++c) {
    const double d = std::fabs(a - kValues[c]), db = std::fabs(a - kValues[best]);
    if (d < db) best = c;
    else if (d == db) best = rounding == Fp4Rounding::rne ? (c % 2 == 0 ? c : best) : c;
  }
  return static_cast<std::uint8_t>(best | (std::signbit(x) ? 0x8 : 0));
}

// The encoder's definition: the number of rounding thresholds |x| passes (a NaN passes none).
std::uint8_t threshold_code(float x, Fp4Rounding rounding) {
  const std::uint32_t u = float_bits(x);
  const float a = bits_float(u & 0x7FFFFFFFu);
  const int code = rounding == Fp4Rounding::rne
                       ? (a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) + (a > 2.5f) + (a >= 3.5f) + (a > 5.0f)
                       : (a >= 0.25f) + (a >= 0.75f) + (a >= 1.25f) + (a >= 1.75f) + (a >= 2.5f) + (a >= 3.5f) +
                             (a >= 5.0f);
  return static_cast<std::uint8_t>(code | ((u >> 28) & 0x8u));
}

TEST(E2m1Codec, EveryFp32InputMatchesTheThresholdDefinition) {
  for (Fp4Rounding rounding : {Fp4Rounding::rne, Fp4Rounding::half_away}) {
    std::int64_t mismatches = 0, first = -1;
#pragma omp parallel for schedule(static) reduction(+ : mismatches)
    for (std::int64_t i = 0; i < (std::int64_t{1} << 32); ++i) {
      const float x = bits_float(static_cast<std::uint32_t>(i));
      if (e2m1_from_float(x, rounding) != threshold_code(x, rounding)) {
        ++mismatches;
#pragma omp critical
        if (first < 0 || i < first) first = i;
      }
    }
    EXPECT_EQ(mismatches, 0) << "rounding " << static_cast<int>(rounding) << ", first at bits 0x" << std::hex << first;
  }
}

TEST(E2m1Codec, EveryCodeDecodesAndReencodes) {
  for (int c = 0; c < 16; ++c) {
    const float v = e2m1_to_float(static_cast<std::uint8_t>(c));
    EXPECT_EQ(std::fabs(v), kValues[c & 7]);
    EXPECT_EQ(e2m1_from_float(v, Fp4Rounding::rne), c);
    EXPECT_EQ(e2m1_from_float(v, Fp4Rounding::half_away), c);
  }
}

TEST(E2m1Codec, TiesFollowTheRoundingOption) {
  const struct {
    float in;
    std::uint8_t rne, away;
  } ties[] = {{0.25f, 0, 1}, {0.75f, 2, 2}, {1.25f, 2, 3}, {1.75f, 4, 4}, {2.5f, 4, 5}, {3.5f, 6, 6},
              {5.0f, 6, 7},  {7.0f, 7, 7},  {-0.25f, 8, 9}, {-5.0f, 14, 15}, {1e30f, 7, 7}, {-INFINITY, 15, 15}};
  for (const auto& t : ties) {
    EXPECT_EQ(e2m1_from_float(t.in, Fp4Rounding::rne), t.rne) << t.in;
    EXPECT_EQ(e2m1_from_float(t.in, Fp4Rounding::half_away), t.away) << t.in;
  }
  EXPECT_EQ(e2m1_from_float(-0.1f, Fp4Rounding::rne), 0x8);  // negative rounds to -0
}

TEST(E2m1Codec, EveryBf16InputMatchesTheDefinition) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const float x = bf16_to_float(static_cast<std::uint16_t>(b));
    if (std::isnan(x)) continue;
    ASSERT_EQ(e2m1_from_float(x, Fp4Rounding::rne), reference_code(x, Fp4Rounding::rne)) << x;
    ASSERT_EQ(e2m1_from_float(x, Fp4Rounding::half_away), reference_code(x, Fp4Rounding::half_away)) << x;
  }
}

TEST(E2m1Codec, PacksElementTwoJInTheLowNibble) { EXPECT_EQ(e2m1_pack(0x3, 0xA), 0xA3); }

}  // namespace
}  // namespace fb
