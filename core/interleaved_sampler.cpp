#include "core/interleaved_sampler.hpp"

#include <algorithm>
#include <stdexcept>

namespace fb {

InterleavedSampler::InterleavedSampler(const SamplingPolicy& policy, std::size_t arms)
    : policy_(policy), samples_(arms) {
  if (arms == 0) throw std::invalid_argument("InterleavedSampler needs at least one arm");
}

std::vector<std::size_t> InterleavedSampler::order(int round) const {
  const std::size_t n = samples_.size();
  std::vector<std::size_t> o(n);
  for (std::size_t i = 0; i < n; ++i) o[i] = (i + static_cast<std::size_t>(round)) % n;
  return o;
}

void InterleavedSampler::add(std::size_t arm, double sample_us) { samples_.at(arm).push_back(sample_us); }

bool InterleavedSampler::arm_converged(std::size_t arm) const {
  const std::vector<double>& s = samples_[arm];
  if (static_cast<int>(s.size()) < policy_.min_samples) return false;
  return summarize_samples(s).rel_iqr <= policy_.noise_target;
}

std::optional<std::string> InterleavedSampler::stop_reason(double elapsed_ms) const {
  bool all_converged = true;
  std::size_t fewest = SIZE_MAX, most = 0;
  for (std::size_t a = 0; a < samples_.size(); ++a) {
    all_converged = all_converged && arm_converged(a);
    fewest = std::min(fewest, samples_[a].size());
    most = std::max(most, samples_[a].size());
  }
  if (all_converged) return std::string("noise target");
  if (static_cast<int>(most) >= policy_.max_samples) return std::string("sample cap");
  const double cap = policy_.time_cap_ms * static_cast<double>(samples_.size());
  if (elapsed_ms >= cap && static_cast<int>(fewest) >= std::min(policy_.min_samples, policy_.max_samples))
    return std::string("time cap");
  return std::nullopt;
}

TimingStats InterleavedSampler::stats(std::size_t arm, const std::string& reason) const {
  TimingStats s = summarize_samples(samples_.at(arm));
  s.converged = arm_converged(arm);
  s.stop_reason = reason;
  return s;
}

}  // namespace fb
