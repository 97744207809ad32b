// Metrics: rounding into a format from fp64, ulp distance, error statistics (p99, NaN never passes)
// and the bitwise comparison's first mismatch.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reference/codecs/bf16.hpp"
#include "reference/metrics/bitwise_compare.hpp"
#include "reference/metrics/error_stats.hpp"
#include "reference/metrics/ulp.hpp"

namespace fb {
namespace {

TEST(Metrics, RoundToFormatRoundsOnceToNearestEven) {
  EXPECT_EQ(round_to_format(1.0625, UlpFormat::fp8_e4m3fn), 1.0);     // tie to even
  EXPECT_EQ(round_to_format(1.1875, UlpFormat::fp8_e4m3fn), 1.25);
  EXPECT_EQ(round_to_format(500.0, UlpFormat::fp8_e4m3fn), 448.0);    // saturating
  EXPECT_EQ(round_to_format(1e300, UlpFormat::f32), INFINITY);
  EXPECT_EQ(round_to_format(1.0 + 0x1.0p-24, UlpFormat::f32), 1.0);   // tie to even in fp32
  EXPECT_EQ(round_to_format(std::ldexp(1.5, -10), UlpFormat::fp8_e4m3fn), std::ldexp(1.0, -9));
  EXPECT_EQ(round_to_format(-0.3, UlpFormat::bf16), static_cast<double>(bf16_to_float(bf16_from_float(-0.3f))));
}

TEST(Metrics, UlpDistanceCountsRepresentableValuesAcrossZero) {
  EXPECT_EQ(ulp_distance(UlpFormat::fp8_e4m3fn, 0x38, 1.0), 0);
  EXPECT_EQ(ulp_distance(UlpFormat::fp8_e4m3fn, 0x39, 1.0), 1);
  EXPECT_EQ(ulp_distance(UlpFormat::fp8_e4m3fn, 0x81, std::ldexp(1.0, -9)), 2);  // -min_sub to +min_sub
  EXPECT_EQ(ulp_distance(UlpFormat::fp8_e4m3fn, 0x80, 0.0), 0);                   // -0 and +0 are one value
  EXPECT_EQ(ulp_distance(UlpFormat::f32, float_bits(1.0f), 1.0 + 0x1.0p-23), 1);
  EXPECT_EQ(ulp_distance(UlpFormat::f32, float_bits(1.0f), 1.0 + 0x1.0p-22), 2);
  EXPECT_EQ(ulp_distance(UlpFormat::bf16, 0x3F81, 1.0), 1);
}

TEST(Metrics, ErrorStatsCountNanAndComputeP99) {
  ErrorAccumulator acc;
  for (int i = 0; i < 100; ++i) acc.add(i, 1.0, 1.0, i < 98 ? 0 : 3);  // 98 exact, 2 at 3 ulp
  ErrorStats s = acc.finish();
  EXPECT_EQ(s.ulp_max, 3);
  EXPECT_EQ(s.ulp_p99, 3);  // 99 % needs the 99th element
  EXPECT_EQ(s.nan, 0);
  acc.add(100, NAN, 1.0, -1);
  acc.add(101, 1.0, NAN, -1);
  s = acc.finish();
  EXPECT_EQ(s.nan, 2);
  EXPECT_EQ(s.elements, 102);
}

TEST(Metrics, ErrorStatsRelativeL2AndMax) {
  ErrorAccumulator acc;
  acc.add(0, 1.5, 1.0);
  acc.add(1, 0.0, 0.0);
  acc.add(2, -2.0, -2.0);
  const ErrorStats s = acc.finish();
  EXPECT_DOUBLE_EQ(s.abs_max, 0.5);
  EXPECT_DOUBLE_EQ(s.rel_max, 0.5);
  EXPECT_DOUBLE_EQ(s.rel_l2, std::sqrt(0.25 / 5.0));
  EXPECT_EQ(s.worst_index, 0);
}

TEST(Metrics, BitwiseCompareReportsFirstMismatchWithCoordinates) {
  std::vector<std::uint8_t> a(2 * 3 * 4, 0x38), b = a;
  b[1 * 12 + 2 * 4 + 3] = 0x39;  // [1][2][3]
  b[1 * 12 + 2 * 4 + 1] = 0x3A;  // [1][2][1] comes first
  const std::vector<std::int64_t> extents{2, 3, 4};
  const BitwiseResult r = compare_bitwise(DType::fp8_e4m3fn, a, b, extents);
  EXPECT_FALSE(r.equal);
  EXPECT_EQ(r.mismatches, 2);
  ASSERT_TRUE(r.first.has_value());
  EXPECT_EQ(r.first->index, 21);
  EXPECT_EQ(r.first->coords, (std::vector<std::int64_t>{1, 2, 1}));
  EXPECT_EQ(r.first->got, "0x38 (1)");
  EXPECT_EQ(r.first->want, "0x3a (1.25)");
}

TEST(Metrics, NanNeverMatchesEvenWithIdenticalBytes) {
  const std::vector<std::uint8_t> a{0x00, 0x7F, 0x10}, b = a;  // 0x7F is NaN in e4m3fn
  const std::vector<std::int64_t> extents{3};
  const BitwiseResult r = compare_bitwise(DType::fp8_e4m3fn, a, b, extents);
  EXPECT_FALSE(r.equal);
  EXPECT_EQ(r.nan, 1);
  EXPECT_EQ(r.first->index, 1);
  // In e4m3fnuz, 0x7F is 240 and matches; 0x80 is the NaN.
  EXPECT_TRUE(compare_bitwise(DType::fp8_e4m3fnuz, a, b, extents).equal);
}

TEST(Metrics, BitwiseCompareHonoursTheRegion) {
  std::vector<std::uint8_t> a(16, 1), b(16, 1);
  b[10] = 2;
  const std::vector<std::int64_t> extents{16};
  const std::vector<ElementRange> region{{0, 8}};
  EXPECT_TRUE(compare_bitwise(DType::u8, a, b, extents, region).equal);
  EXPECT_FALSE(compare_bitwise(DType::u8, a, b, extents).equal);
}

}  // namespace
}  // namespace fb
