// The interleaved sampler: rotated order, and each stop rule (noise target, sample cap, time cap)
// fires when it should and only then.
#include <gtest/gtest.h>

#include "core/interleaved_sampler.hpp"

namespace fb {
namespace {

SamplingPolicy policy() {
  SamplingPolicy p;
  p.min_samples = 10;
  p.max_samples = 50;
  p.noise_target = 0.05;
  p.time_cap_ms = 100.0;
  return p;
}

TEST(InterleavedSampler, OrderRotatesEveryRound) {
  InterleavedSampler s(policy(), 3);
  EXPECT_EQ(s.order(0), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(s.order(1), (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(s.order(2), (std::vector<std::size_t>{2, 0, 1}));
  EXPECT_EQ(s.order(3), s.order(0));
}

TEST(InterleavedSampler, StopsAtTheNoiseTargetOnlyWhenEveryArmIsQuiet) {
  InterleavedSampler s(policy(), 2);
  for (int i = 0; i < 9; ++i) {
    s.add(0, 10.0);
    s.add(1, 20.0);
  }
  EXPECT_FALSE(s.stop_reason(1.0)) << "below min_samples";
  s.add(0, 10.0);
  s.add(1, 20.0);
  ASSERT_TRUE(s.stop_reason(1.0));
  EXPECT_EQ(*s.stop_reason(1.0), "noise target");
  EXPECT_TRUE(s.stats(0, "noise target").converged);
  EXPECT_DOUBLE_EQ(s.stats(1, "noise target").median_us, 20.0);
  // One noisy arm keeps sampling going.
  InterleavedSampler noisy(policy(), 2);
  for (int i = 0; i < 20; ++i) {
    noisy.add(0, 10.0);
    noisy.add(1, i % 2 ? 10.0 : 30.0);
  }
  EXPECT_FALSE(noisy.stop_reason(1.0));
  EXPECT_FALSE(noisy.stats(1, "").converged);
}

TEST(InterleavedSampler, SampleCapAndTimeCap) {
  InterleavedSampler s(policy(), 2);
  for (int i = 0; i < 50; ++i) {
    s.add(0, i % 2 ? 10.0 : 30.0);
    s.add(1, i % 2 ? 10.0 : 30.0);
  }
  ASSERT_TRUE(s.stop_reason(1.0));
  EXPECT_EQ(*s.stop_reason(1.0), "sample cap");
  InterleavedSampler t(policy(), 2);
  for (int i = 0; i < 10; ++i) {
    t.add(0, i % 2 ? 10.0 : 30.0);
    t.add(1, i % 2 ? 10.0 : 30.0);
  }
  EXPECT_FALSE(t.stop_reason(150.0)) << "the time cap is per arm: 2 arms may take 200 ms";
  ASSERT_TRUE(t.stop_reason(200.0));
  EXPECT_EQ(*t.stop_reason(200.0), "time cap");
  EXPECT_FALSE(t.stats(0, "time cap").converged);
  EXPECT_EQ(t.stats(0, "time cap").stop_reason, "time cap");
}

TEST(InterleavedSampler, TimeCapWaitsForMinimumSamples) {
  InterleavedSampler s(policy(), 1);
  for (int i = 0; i < 5; ++i) s.add(0, i % 2 ? 10.0 : 30.0);
  EXPECT_FALSE(s.stop_reason(1e6));
}

TEST(InterleavedSampler, NeedsAnArm) { EXPECT_THROW(InterleavedSampler(policy(), 0), std::invalid_argument); }

}  // namespace
}  // namespace fb
