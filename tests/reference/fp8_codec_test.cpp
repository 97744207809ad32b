// fp8 e4m3fn / e4m3fnuz codecs: all 256 codes back to fp32 and forward again, every bf16 input
// through both saturating encoders against an independent fp64 rounding, and the hand-picked
// vectors of docs/numeric-contract.md#test-vectors.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/fp8.hpp"
#include "reference/metrics/ulp.hpp"

namespace fb {
namespace {

TEST(Fp8Codec, E4m3fnEveryCodeRoundTrips) {
  int nan_codes = 0;
  for (int c = 0; c < 256; ++c) {
    const float v = fp8_e4m3fn_to_float(static_cast<std::uint8_t>(c));
    if (std::isnan(v)) {
      ++nan_codes;
      EXPECT_EQ(fp8_e4m3fn_from_float(v), c) << c;  // NaN keeps its sign: 0x7F / 0xFF
      continue;
    }
    EXPECT_EQ(fp8_e4m3fn_from_float(v), c) << c;
  }
  EXPECT_EQ(nan_codes, 2);
  EXPECT_EQ(fp8_e4m3fn_to_float(0x7E), 448.0f);
  EXPECT_EQ(fp8_e4m3fn_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8_e4m3fn_to_float(0x08), std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::signbit(fp8_e4m3fn_to_float(0x80)));
}

TEST(Fp8Codec, E4m3fnuzEveryCodeRoundTripsAndHasNoNegativeZero) {
  for (int c = 0; c < 256; ++c) {
    const float v = fp8_e4m3fnuz_to_float(static_cast<std::uint8_t>(c));
    if (c == 0x80) {
      EXPECT_TRUE(std::isnan(v));
      EXPECT_EQ(fp8_e4m3fnuz_from_float(v), 0x80);
      continue;
    }
    EXPECT_FALSE(std::isnan(v)) << c;
    EXPECT_EQ(fp8_e4m3fnuz_from_float(v), c) << c;
  }
  EXPECT_EQ(fp8_e4m3fnuz_to_float(0x7F), 240.0f);
  EXPECT_EQ(fp8_e4m3fnuz_from_float(-0.0f), 0x00);
  EXPECT_EQ(fp8_e4m3fnuz_from_float(-1e-30f), 0x00);  // negative underflow is +0
}

TEST(Fp8Codec, EveryBf16InputMatchesFp64SaturatingRounding) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const float x = bf16_to_float(static_cast<std::uint16_t>(b));
    if (std::isnan(x)) {
      EXPECT_EQ(fp8_e4m3fn_from_float(x), (b & 0x8000) ? 0xFF : 0x7F);
      EXPECT_EQ(fp8_e4m3fnuz_from_float(x), 0x80);
      continue;
    }
    ASSERT_EQ(fp8_e4m3fn_from_float(x), format_code(UlpFormat::fp8_e4m3fn, x)) << std::hex << b;
    std::uint32_t fnuz = format_code(UlpFormat::fp8_e4m3fnuz, x);
    if (fnuz == 0x80) fnuz = 0;  // the fp64 path gives -0 its sign bit; fnuz folds it to +0
    ASSERT_EQ(fp8_e4m3fnuz_from_float(x), fnuz) << std::hex << b;
  }
}

TEST(Fp8Codec, SaturatesInfinityAndOverflowToMax) {
  const float inf = INFINITY;
  EXPECT_EQ(fp8_e4m3fn_from_float(inf), 0x7E);
  EXPECT_EQ(fp8_e4m3fn_from_float(-inf), 0xFE);
  EXPECT_EQ(fp8_e4m3fn_from_float(1e30f), 0x7E);
  EXPECT_EQ(fp8_e4m3fnuz_from_float(inf), 0x7F);
  EXPECT_EQ(fp8_e4m3fnuz_from_float(-inf), 0xFF);
  EXPECT_EQ(fp8_e4m3fnuz_from_float(248.0f), 0x7F);  // clamp first, so the NaN-overflow tie cannot happen
}

TEST(Fp8Codec, NumberFormatsVectors) {
  const struct {
    std::uint32_t in;
    std::uint8_t fn, fnuz;
  } vectors[] = {
      {0x3F880000, 0x38, 0x40},  // 1.0625: tie to even
      {0x3F880001, 0x39, 0x41},  {0x3A800000, 0x00, 0x01},  // 2^-10: half the fn min subnormal
      {0x3A800001, 0x01, 0x01},  {0x43E80000, 0x7E, 0x7F},  // 464 (saturating)
      {0x3E800000, 0x28, 0x30},  {0x3FA00000, 0x3A, 0x42}, {0x40200000, 0x42, 0x4A},
      {0x40A00000, 0x4A, 0x52},  {0x40F80000, 0x50, 0x58}, {0x3D000000, 0x10, 0x18},
      {0x80000000, 0x80, 0x00},
  };
  for (const auto& v : vectors) {
    EXPECT_EQ(fp8_e4m3fn_from_float(bits_float(v.in)), v.fn) << std::hex << v.in;
    EXPECT_EQ(fp8_e4m3fnuz_from_float(bits_float(v.in)), v.fnuz) << std::hex << v.in;
  }
}

TEST(Fp8Codec, InverseMaxConstantsAreTheRoundedReciprocals) {
  EXPECT_EQ(fp8_inv_max(Fp8Flavour::e4m3fn), static_cast<float>(1.0 / 448.0));
  EXPECT_EQ(fp8_inv_max(Fp8Flavour::e4m3fnuz), static_cast<float>(1.0 / 240.0));
  // A group whose amax is MAX gets scale exactly 1: fl32(MAX * fl32(1/MAX)) == 1 (the edge rows rely on it).
  EXPECT_EQ(448.0f * fp8_inv_max(Fp8Flavour::e4m3fn), 1.0f);
  EXPECT_EQ(240.0f * fp8_inv_max(Fp8Flavour::e4m3fnuz), 1.0f);
}

}  // namespace
}  // namespace fb
