// Each branch of the verdict: FASTER, SLOWER, SAME and the three kinds of AMBIGUOUS.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "reports/compare_verdict.hpp"

namespace fb {
namespace {

std::vector<double> ramp(double start, int n, double step = 1.0) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(start + i * step);
  return v;
}

TEST(CompareVerdict, SignificantAndPastTheEffectIsFasterOrSlower) {
  const TimingVerdict slower = judge_timing(ramp(100, 12), ramp(110, 12), {});
  EXPECT_EQ(slower.verdict, Verdict::slower) << slower.reason;
  EXPECT_NEAR(slower.ratio, 115.5 / 105.5, 1e-12);
  EXPECT_LT(slower.p, 0.05);
  const TimingVerdict faster = judge_timing(ramp(110, 12), ramp(100, 12), {});
  EXPECT_EQ(faster.verdict, Verdict::faster) << faster.reason;
}

TEST(CompareVerdict, NotSignificantAndInsideTheEffectIsSame) {
  const TimingVerdict v = judge_timing(ramp(100, 12), ramp(100.5, 12), {});
  EXPECT_EQ(v.verdict, Verdict::same) << v.reason;
  EXPECT_GE(v.p, 0.05);
}

TEST(CompareVerdict, TooFewSamplesIsAmbiguousWithoutATest) {
  const TimingVerdict v = judge_timing(ramp(100, 12), ramp(200, 7), {});
  EXPECT_EQ(v.verdict, Verdict::ambiguous);
  EXPECT_DOUBLE_EQ(v.p, 1.0);
  EXPECT_NE(v.reason.find("too few samples"), std::string::npos) << v.reason;
  VerdictThresholds t;
  t.min_samples = 7;
  EXPECT_EQ(judge_timing(ramp(100, 12), ramp(200, 7), t).verdict, Verdict::slower);
}

TEST(CompareVerdict, SignificantButSmallerThanTheEffectIsAmbiguous) {
  // 400 samples each, shifted 1 %: the test sees it, the 2 % effect does not count it.
  const TimingVerdict v = judge_timing(ramp(100, 400, 0.001), ramp(101, 400, 0.001), {});
  EXPECT_LT(v.p, 0.05);
  EXPECT_EQ(v.verdict, Verdict::ambiguous) << v.reason;
  VerdictThresholds t;
  t.min_effect = 0.005;
  EXPECT_EQ(judge_timing(ramp(100, 400, 0.001), ramp(101, 400, 0.001), t).verdict, Verdict::slower);
}

TEST(CompareVerdict, LargeButNotSignificantIsAmbiguous) {
  // Medians 10 % apart, but the samples overlap widely.
  const std::vector<double> base = {50, 150, 60, 140, 70, 130, 80, 120, 100, 90};
  std::vector<double> head;
  for (double x : base) head.push_back(x + 10);
  const TimingVerdict v = judge_timing(base, head, {});
  EXPECT_GE(v.p, 0.05);
  EXPECT_GT(v.ratio, 1.02);
  EXPECT_EQ(v.verdict, Verdict::ambiguous) << v.reason;
}

TEST(CompareVerdict, TheEffectIsSymmetricOnALogScale) {
  // 1.02x slower counts at 2 %; 1 / 1.02 faster counts too; 0.985 does not.
  VerdictThresholds t;
  t.min_effect = 0.02;
  EXPECT_EQ(judge_timing(ramp(100, 50, 0.001), ramp(102.1, 50, 0.001), t).verdict, Verdict::slower);
  EXPECT_EQ(judge_timing(ramp(100, 50, 0.001), ramp(100 / 1.021, 50, 0.001), t).verdict, Verdict::faster);
  EXPECT_EQ(judge_timing(ramp(100, 50, 0.001), ramp(98.5, 50, 0.001), t).verdict, Verdict::ambiguous);
}

TEST(CompareVerdict, ThresholdsOutOfRangeAreBadInput) {
  EXPECT_THROW(check_thresholds({0.0, 0.02, 8}), InputError);
  EXPECT_THROW(check_thresholds({1.0, 0.02, 8}), InputError);
  EXPECT_THROW(check_thresholds({0.05, -0.1, 8}), InputError);
  EXPECT_THROW(check_thresholds({0.05, 0.02, 1}), InputError);
  EXPECT_NO_THROW(check_thresholds({}));
}

}  // namespace
}  // namespace fb
