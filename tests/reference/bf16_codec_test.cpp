// bf16 codec: every bf16 code round-trips; fp32 -> bf16 rounds to nearest even (the tie vectors of
// docs/numeric-contract.md#test-vectors) and keeps NaN quiet with its sign. The all-fp32 sweep
// against CUDA's host conversion is in tests/oracle.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/codecs/bf16.hpp"
#include "reference/metrics/ulp.hpp"

namespace fb {
namespace {

TEST(Bf16Codec, EveryCodeDecodesAndReencodesToItself) {
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    const auto code = static_cast<std::uint16_t>(c);
    const float v = bf16_to_float(code);
    if (std::isnan(v)) {
      EXPECT_EQ(bf16_from_float(v), code | 0x40u) << std::hex << c;  // quieted, sign and payload kept
      continue;
    }
    EXPECT_EQ(bf16_from_float(v), code) << std::hex << c;
  }
}

TEST(Bf16Codec, TiesRoundToEven) {
  const struct {
    std::uint32_t in;
    std::uint16_t out;
  } vectors[] = {{0x3F808000, 0x3F80}, {0x3F818000, 0x3F82}, {0x3F808001, 0x3F81}, {0x7F7F8000, 0x7F80},
                 {0x7F7FFFFF, 0x7F80}, {0x00008000, 0x0000}, {0x00018000, 0x0002}, {0x80008000, 0x8000}};
  for (const auto& v : vectors) EXPECT_EQ(bf16_from_float(bits_float(v.in)), v.out) << std::hex << v.in;
}

TEST(Bf16Codec, NanStaysNanWithItsSign) {
  EXPECT_EQ(bf16_from_float(bits_float(0x7F800001u)), 0x7FC0u);  // signalling NaN with a tiny payload: not inf
  EXPECT_EQ(bf16_from_float(bits_float(0xFF800001u)), 0xFFC0u);
  EXPECT_EQ(bf16_from_float(bits_float(0x7FC00000u)), 0x7FC0u);
}

TEST(Bf16Codec, EncoderIsCorrectlyRoundedOnAStrideOfFp32) {
  // Independent check: the fp64 rounding of metrics/ulp.cpp (frexp + nearbyint) on every 97th pattern.
  for (std::uint64_t u = 0; u < (1ull << 32); u += 97) {
    const float x = bits_float(static_cast<std::uint32_t>(u));
    if (std::isnan(x)) continue;
    ASSERT_EQ(bf16_from_float(x), format_code(UlpFormat::bf16, x)) << std::hex << u;
  }
}

}  // namespace
}  // namespace fb
