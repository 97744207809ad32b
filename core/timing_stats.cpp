#include "core/timing_stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fb {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

TimingStats summarize_samples(const std::vector<double>& samples_us) {
  TimingStats s;
  if (samples_us.empty()) return s;
  std::vector<double> sorted = samples_us;
  std::sort(sorted.begin(), sorted.end());
  s.samples = static_cast<std::int64_t>(sorted.size());
  s.min_us = sorted.front();
  s.max_us = sorted.back();
  s.q1_us = quantile_sorted(sorted, 0.25);
  s.median_us = quantile_sorted(sorted, 0.5);
  s.q3_us = quantile_sorted(sorted, 0.75);
  s.mean_us = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  s.rel_iqr = s.median_us > 0 ? (s.q3_us - s.q1_us) / s.median_us : 0.0;
  return s;
}

}  // namespace fb
