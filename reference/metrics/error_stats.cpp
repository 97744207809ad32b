#include "reference/metrics/error_stats.hpp"

#include <algorithm>
#include <cmath>

namespace fb {

void ErrorAccumulator::add(std::int64_t index, double got, double ref, std::int64_t ulp) {
  ++stats_.elements;
  if (std::isnan(got) || std::isnan(ref)) {
    ++stats_.nan;
    return;
  }
  if (std::isinf(got) || std::isinf(ref)) {
    if (got != ref) ++stats_.inf;
    return;
  }
  const double err = std::fabs(got - ref);
  stats_.abs_max = std::max(stats_.abs_max, err);
  if (ref != 0.0) stats_.rel_max = std::max(stats_.rel_max, err / std::fabs(ref));
  sum_sq_error_ += err * err;
  sum_sq_ref_ += ref * ref;
  double key = err;
  if (ulp >= 0) {
    stats_.has_ulp = true;
    stats_.ulp_max = std::max(stats_.ulp_max, ulp);
    ++ulp_histogram_[static_cast<std::size_t>(std::min<std::int64_t>(ulp, kUlpBuckets))];
    key = static_cast<double>(ulp) + err * 1e-300;  // ulp first, abs error breaks ties
  }
  if (key > worst_key_) {
    worst_key_ = key;
    stats_.worst_index = index;
  }
}

void ErrorAccumulator::merge(const ErrorAccumulator& other) {
  stats_.elements += other.stats_.elements;
  stats_.nan += other.stats_.nan;
  stats_.inf += other.stats_.inf;
  stats_.abs_max = std::max(stats_.abs_max, other.stats_.abs_max);
  stats_.rel_max = std::max(stats_.rel_max, other.stats_.rel_max);
  stats_.has_ulp = stats_.has_ulp || other.stats_.has_ulp;
  stats_.ulp_max = std::max(stats_.ulp_max, other.stats_.ulp_max);
  sum_sq_error_ += other.sum_sq_error_;
  sum_sq_ref_ += other.sum_sq_ref_;
  for (std::size_t i = 0; i < ulp_histogram_.size(); ++i) ulp_histogram_[i] += other.ulp_histogram_[i];
  if (other.worst_key_ > worst_key_) {
    worst_key_ = other.worst_key_;
    stats_.worst_index = other.stats_.worst_index;
  }
}

ErrorStats ErrorAccumulator::finish() const {
  ErrorStats s = stats_;
  const std::int64_t finite = s.elements - s.nan - s.inf;
  s.rmse = finite > 0 ? std::sqrt(sum_sq_error_ / static_cast<double>(finite)) : 0.0;
  s.rel_l2 = sum_sq_ref_ > 0.0 ? std::sqrt(sum_sq_error_ / sum_sq_ref_) : (sum_sq_error_ > 0.0 ? INFINITY : 0.0);
  if (s.has_ulp) {
    std::int64_t total = 0;
    for (auto c : ulp_histogram_) total += c;
    // p99: the smallest distance that at least 99 % of the elements do not exceed. Past the last
    // exact bucket the true maximum stands in (an upper bound).
    const std::int64_t need = (total * 99 + 99) / 100;
    std::int64_t seen = 0;
    s.ulp_p99 = s.ulp_max;
    for (int u = 0; u < kUlpBuckets; ++u) {
      seen += ulp_histogram_[static_cast<std::size_t>(u)];
      if (seen >= need) {
        s.ulp_p99 = u;
        break;
      }
    }
  }
  return s;
}

}  // namespace fb
