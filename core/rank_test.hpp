// The two-sided Mann-Whitney U test (Wilcoxon rank-sum) of two independent samples, as compare
// uses to judge two runs' timings: no assumption on the shape of the distributions, robust to
// the long right tail of GPU timings.
#pragma once

#include <vector>

namespace fb {

struct RankTestResult {
  double u = 0;        // U of the first sample: pairs (a, b) with a > b, plus half the ties
  double z = 0;        // standardized U, continuity-corrected (0 when every value ties)
  double p = 1;        // two-sided p-value of the normal approximation with tie correction
  long long n_a = 0, n_b = 0;
};

// Normal approximation: mean n_a n_b / 2, variance n_a n_b / 12 ((n + 1) - sum(t^3 - t) / (n (n - 1)))
// over the tie groups t of the pooled sample, a 0.5 continuity correction. Samples must be
// non-empty and finite (the caller decides what too few samples means).
RankTestResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace fb
