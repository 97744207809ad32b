// The paired share and its bootstrap interval on samples whose answer is known.
#include <gtest/gtest.h>

#include "layer/ablation_stats.hpp"

namespace fb {
namespace {

TEST(AblationStats, ConstantRatioGivesThatShareAndAZeroWidthInterval) {
  const std::vector<double> on{100, 120, 90, 110, 105}, off{110, 132, 99, 121, 115.5};
  const AblationShare s = paired_share(on, off, 7);
  EXPECT_NEAR(s.share, 0.10, 1e-12);
  EXPECT_NEAR(s.ci_low, 0.10, 1e-12);
  EXPECT_NEAR(s.ci_high, 0.10, 1e-12);
  EXPECT_TRUE(s.significant);
  EXPECT_DOUBLE_EQ(s.on_us, 105);
  EXPECT_DOUBLE_EQ(s.off_us, 115.5);
}

TEST(AblationStats, SymmetricNoiseIsNotSignificant) {
  std::vector<double> on, off;
  for (int r = 0; r < 40; ++r) {
    on.push_back(100);
    off.push_back(r % 2 ? 103 : 97);  // ratios 0.97 and 1.03, half each
  }
  const AblationShare s = paired_share(on, off, 1);
  EXPECT_LT(s.ci_low, 0);
  EXPECT_GT(s.ci_high, 0);
  EXPECT_FALSE(s.significant);
  EXPECT_GE(s.ci_low, -0.03 - 1e-12);  // the interval stays within the ratios seen
  EXPECT_LE(s.ci_high, 0.03 + 1e-12);
}

TEST(AblationStats, IntervalBracketsTheShareAndIsSeeded) {
  std::vector<double> on, off;
  for (int r = 0; r < 30; ++r) {
    on.push_back(100 + r % 7);
    off.push_back((100 + r % 7) * (1.05 + 0.01 * ((r * 5) % 11 - 5)));  // ratios 1.00 .. 1.10
  }
  const AblationShare a = paired_share(on, off, 42), b = paired_share(on, off, 42);
  EXPECT_LE(a.ci_low, a.share);
  EXPECT_GE(a.ci_high, a.share);
  EXPECT_GT(a.ci_low, 0);  // every ratio >= 1 and most above: significant
  EXPECT_TRUE(a.significant);
  EXPECT_EQ(a.ci_low, b.ci_low);  // the same seed, the same interval
  EXPECT_EQ(a.ci_high, b.ci_high);
}

TEST(AblationStats, UnpairedSamplesAreAnError) {
  EXPECT_THROW(paired_share({1, 2}, {1}, 1), std::logic_error);
  EXPECT_FALSE(paired_share({}, {}, 1).timed);
}

}  // namespace
}  // namespace fb
