#include "reports/compare_verdict.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/rank_test.hpp"
#include "core/timing_stats.hpp"

namespace fb {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::faster: return "FASTER";
    case Verdict::slower: return "SLOWER";
    case Verdict::same: return "SAME";
    case Verdict::ambiguous: return "AMBIGUOUS";
  }
  return "?";
}

namespace {
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : quantile_sorted(v, 0.5);
}
}  // namespace

TimingVerdict judge_timing(const std::vector<double>& base_us, const std::vector<double>& head_us,
                           const VerdictThresholds& t) {
  TimingVerdict v;
  v.n_base = static_cast<long long>(base_us.size());
  v.n_head = static_cast<long long>(head_us.size());
  v.base_median_us = median_of(base_us);
  v.head_median_us = median_of(head_us);
  v.ratio = v.base_median_us > 0 ? v.head_median_us / v.base_median_us : 0.0;
  if (v.n_base < t.min_samples || v.n_head < t.min_samples) {
    v.reason = fmt::format("too few samples ({} base, {} head; {} needed)", v.n_base, v.n_head, t.min_samples);
    return v;
  }
  const RankTestResult test = mann_whitney_u(base_us, head_us);
  v.u = test.u;
  v.p = test.p;
  const bool significant = test.p < t.alpha;
  const bool slower = v.ratio > 1 + t.min_effect, faster = v.ratio < 1 / (1 + t.min_effect);
  if (significant && (slower || faster)) {
    v.verdict = slower ? Verdict::slower : Verdict::faster;
    v.reason = fmt::format("p {:.2g} < {:g}, median {:+.1f} %", test.p, t.alpha, (v.ratio - 1) * 100);
  } else if (!significant && !slower && !faster) {
    v.verdict = Verdict::same;
    v.reason = fmt::format("p {:.2g}, median {:+.1f} % within {:g} %", test.p, (v.ratio - 1) * 100, t.min_effect * 100);
  } else if (significant) {
    v.reason = fmt::format("significant (p {:.2g}) but {:+.1f} % is within the {:g} % effect", test.p,
                           (v.ratio - 1) * 100, t.min_effect * 100);
  } else {
    v.reason = fmt::format("median {:+.1f} % but not significant (p {:.2g} >= {:g}): more samples needed",
                           (v.ratio - 1) * 100, test.p, t.alpha);
  }
  return v;
}

void check_thresholds(const VerdictThresholds& t) {
  if (!(t.alpha > 0 && t.alpha < 1)) throw InputError(fmt::format("--alpha: must be in (0, 1), got {}", t.alpha));
  if (!(t.min_effect >= 0 && t.min_effect < 10))
    throw InputError(fmt::format("--min-effect: must be a fraction in [0, 10), e.g. 0.02 for 2 %, got {}", t.min_effect));
  if (t.min_samples < 2 || t.min_samples > 1000000)
    throw InputError(fmt::format("--min-samples: must be in [2, 1000000], got {}", t.min_samples));
}

}  // namespace fb
