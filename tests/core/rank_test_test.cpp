// The Mann-Whitney U test against values computed by hand (ranks, U, the tie-corrected variance,
// z with the 0.5 continuity correction, p = erfc(|z| / sqrt 2)).
#include <gtest/gtest.h>

#include <cmath>

#include "core/rank_test.hpp"

namespace fb {
namespace {

TEST(MannWhitneyU, SeparatedSamplesWithoutTies) {
  // a = {1, 2, 3} takes ranks 1..3: R = 6, U = 6 - 3*4/2 = 0. Mean 9/2, variance 9/12 * 7 = 5.25,
  // z = -(4.5 - 0.5) / sqrt(5.25) = -1.745743, p = erfc(1.745743 / sqrt 2) = 0.0808556.
  const RankTestResult r = mann_whitney_u({1, 2, 3}, {4, 5, 6});
  EXPECT_DOUBLE_EQ(r.u, 0.0);
  EXPECT_NEAR(r.z, -4.0 / std::sqrt(5.25), 1e-12);
  EXPECT_NEAR(r.p, 0.0808556, 1e-6);
  // The other way round: U = 9, the same p, z of the other sign.
  const RankTestResult s = mann_whitney_u({4, 5, 6}, {1, 2, 3});
  EXPECT_DOUBLE_EQ(s.u, 9.0);
  EXPECT_NEAR(s.z, -r.z, 1e-12);
  EXPECT_NEAR(s.p, r.p, 1e-15);
}

TEST(MannWhitneyU, TiesTakeTheirMeanRankAndShrinkTheVariance) {
  // Pooled 1a 2a 2a 2b 3a 3b 3b 4b 5b: the 2s share rank 3, the 3s rank 6. R_a = 1 + 3 + 3 + 6 = 13,
  // U = 13 - 4*5/2 = 3. Ties: two groups of 3, sum(t^3 - t) = 48; n = 9: variance
  // 20/12 * (10 - 48/72) = 15.5556; z = -(7 - 0.5) / 3.944053 = -1.648051; p = 0.0993422.
  const RankTestResult r = mann_whitney_u({1, 2, 2, 3}, {2, 3, 3, 4, 5});
  EXPECT_DOUBLE_EQ(r.u, 3.0);
  EXPECT_NEAR(r.z, -6.5 / std::sqrt(20.0 / 12.0 * (10.0 - 48.0 / 72.0)), 1e-12);
  EXPECT_NEAR(r.p, 0.0993422, 1e-6);
}

TEST(MannWhitneyU, OverlappingSamplesOfEight) {
  // 10..17 vs 12..19: 15 pairs with a > b (13..17 over 12..16) plus half of 6 ties, U = 18; variance
  // 64/12 * (17 - 6*6/(16*15)) = 89.8667, z = -(14 - 0.5) / 9.47980 = -1.424080, p = 0.154423.
  const RankTestResult r = mann_whitney_u({10, 11, 12, 13, 14, 15, 16, 17}, {12, 13, 14, 15, 16, 17, 18, 19});
  EXPECT_DOUBLE_EQ(r.u, 18.0);
  EXPECT_NEAR(r.p, 0.154423, 1e-6);
}

TEST(MannWhitneyU, IdenticalOrAllTiedSamplesGiveNoEvidence) {
  EXPECT_DOUBLE_EQ(mann_whitney_u({5, 5, 5}, {5, 5}).p, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_u({5, 5, 5}, {5, 5}).z, 0.0);
  const RankTestResult same = mann_whitney_u({1, 2, 3, 4}, {1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(same.u, 8.0);  // = n_a n_b / 2
  EXPECT_DOUBLE_EQ(same.p, 1.0);
}

TEST(MannWhitneyU, LargeShiftIsHighlySignificant) {
  std::vector<double> a, b;
  for (int i = 0; i < 40; ++i) {
    a.push_back(100 + i * 0.1);
    b.push_back(110 + i * 0.1);
  }
  const RankTestResult r = mann_whitney_u(a, b);
  EXPECT_DOUBLE_EQ(r.u, 0.0);
  EXPECT_LT(r.p, 1e-12);
}

}  // namespace
}  // namespace fb
