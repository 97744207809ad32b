#include "core/rank_test.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace fb {

RankTestResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  RankTestResult r;
  r.n_a = static_cast<long long>(a.size());
  r.n_b = static_cast<long long>(b.size());
  if (a.empty() || b.empty()) return r;
  // Pool with a tag (0: a, 1: b), sort, give each tie group its mean rank.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(a.size() + b.size());
  for (double v : a) pooled.emplace_back(v, 0);
  for (double v : b) pooled.emplace_back(v, 1);
  std::sort(pooled.begin(), pooled.end());
  const double n = static_cast<double>(pooled.size());
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;  // ranks i+1..j
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second == 0) rank_sum_a += mean_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  const double na = static_cast<double>(r.n_a), nb = static_cast<double>(r.n_b);
  r.u = rank_sum_a - na * (na + 1) / 2.0;
  const double mean = na * nb / 2.0;
  const double variance = na * nb / 12.0 * ((n + 1) - (n > 1 ? tie_term / (n * (n - 1)) : 0.0));
  if (!(variance > 0)) return r;  // every value ties: no evidence of a difference, p = 1
  const double deviation = std::max(0.0, std::fabs(r.u - mean) - 0.5);
  r.z = (r.u > mean ? 1 : -1) * deviation / std::sqrt(variance);
  r.p = std::min(1.0, std::erfc(std::fabs(r.z) / std::sqrt(2.0)));
  return r;
}

}  // namespace fb
