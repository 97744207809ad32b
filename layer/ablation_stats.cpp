#include "layer/ablation_stats.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/inputs.hpp"
#include "core/timing_stats.hpp"

namespace fb {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, 0.5);
}

AblationShare paired_share(const std::vector<double>& on_us, const std::vector<double>& off_us, std::uint64_t seed,
                           double level, int resamples) {
  if (on_us.size() != off_us.size()) throw std::logic_error("paired_share: unequal round counts");
  AblationShare s;
  const std::size_t n = on_us.size();
  if (n == 0) return s;
  std::vector<double> ratio(n);
  for (std::size_t r = 0; r < n; ++r) ratio[r] = off_us[r] / on_us[r];
  s.on_us = median_of(on_us);
  s.off_us = median_of(off_us);
  s.share = median_of(ratio) - 1.0;
  std::vector<double> medians(static_cast<std::size_t>(resamples));
  std::vector<double> pick(n);
  for (int b = 0; b < resamples; ++b) {
    for (std::size_t i = 0; i < n; ++i) {
      const double u = uniform01(seed, 0xB007u + static_cast<std::uint64_t>(b), i);
      pick[i] = ratio[std::min(n - 1, static_cast<std::size_t>(u * static_cast<double>(n)))];
    }
    medians[static_cast<std::size_t>(b)] = median_of(pick) - 1.0;
  }
  std::sort(medians.begin(), medians.end());
  s.ci_low = quantile_sorted(medians, (1.0 - level) / 2.0);
  s.ci_high = quantile_sorted(medians, (1.0 + level) / 2.0);
  s.significant = s.ci_low > 0.0 || s.ci_high < 0.0;
  s.timed = true;
  return s;
}

}  // namespace fb
