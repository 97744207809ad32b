// Order statistics of timing samples.
#include <gtest/gtest.h>

#include "core/timing_stats.hpp"

namespace fb {
namespace {

TEST(TimingStats, QuantilesAndRelativeIqr) {
  const TimingStats s = summarize_samples({5, 1, 4, 2, 3});
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.min_us, 1);
  EXPECT_DOUBLE_EQ(s.q1_us, 2);
  EXPECT_DOUBLE_EQ(s.median_us, 3);
  EXPECT_DOUBLE_EQ(s.q3_us, 4);
  EXPECT_DOUBLE_EQ(s.max_us, 5);
  EXPECT_DOUBLE_EQ(s.rel_iqr, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(summarize_samples({1, 2, 3, 4}).median_us, 2.5);
  EXPECT_EQ(summarize_samples({}).samples, 0);
}

}  // namespace
}  // namespace fb
