// Input generation is a pure function of (seed, stream, index): the same bytes on every machine and
// thread count, different streams and seeds differ, and the distributions have the stated moments.
#include <gtest/gtest.h>

#include <cmath>

#include "core/inputs.hpp"
#include "core/errors.hpp"
#include "core/fingerprint.hpp"

namespace fb {
namespace {

TEST(Inputs, SameSeedSameBytesDifferentSeedDifferentBytes) {
  HostTensor a({"x", DType::bf16, {{"M", 64}, {"K", 256}}}), b = a, c = a;
  fill_tensor(a, Distribution::normal, 7, 0);
  fill_tensor(b, Distribution::normal, 7, 0);
  fill_tensor(c, Distribution::normal, 8, 0);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_NE(a.bytes, c.bytes);
}

TEST(Inputs, GoldenFingerprintPinsTheGenerator) {
  // A changed generator changes every report's inputs: this pin makes that a visible decision.
  HostTensor t({"x", DType::bf16, {{"M", 4}, {"K", 64}}});
  fill_tensor(t, Distribution::normal, 1, 0);
  EXPECT_EQ(fingerprint_text(t.bytes), "fnv1a64:" + std::string("d2ba426d7133a7d6"));
}

TEST(Inputs, NormalHasUnitVarianceAndUniformIsBounded) {
  const int n = 1 << 16;
  double sum = 0, sq = 0;
  for (int i = 0; i < n; ++i) {
    const double v = draw(Distribution::normal, 3, 1, static_cast<std::uint64_t>(i), i);
    sum += v;
    sq += v * v;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  EXPECT_NEAR(sq / n, 1.0, 0.03);
  for (int i = 0; i < 4096; ++i) {
    const double u = draw(Distribution::uniform, 3, 1, static_cast<std::uint64_t>(i), i);
    EXPECT_GE(u, -1.0);
    EXPECT_LT(u, 1.0);
  }
}

TEST(Inputs, OutlierColumnsAreScaled) {
  int big = 0;
  for (int c = 0; c < 6400; ++c) big += std::fabs(draw(Distribution::outliers, 5, 0, c, c)) > 8.0 ? 1 : 0;
  EXPECT_GT(big, 20);   // about 1 column in 64 is 32x wider
  EXPECT_LT(big, 200);
}

TEST(Inputs, UnknownDistributionIsAnInputError) { EXPECT_THROW(distribution_from_name("cauchy"), InputError); }

}  // namespace
}  // namespace fb
