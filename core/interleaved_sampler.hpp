// Samples several variants ("arms") interleaved, so drift (clocks, temperature, a neighbour's load)
// falls on all of them alike: round r times every arm once, in an order rotated by r
// (A B C, B C A, C A B, ...). It stops when every arm's rel-IQR has reached the noise target with
// at least min_samples each, or at a cap (samples per arm, or wall time for the whole set), and
// says which, so an unconverged timing is never mistaken for a stable one.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/timing_stats.hpp"

namespace fb {

class InterleavedSampler {
 public:
  InterleavedSampler(const SamplingPolicy& policy, std::size_t arms);

  // The arms in the order round `round` visits them.
  std::vector<std::size_t> order(int round) const;
  void add(std::size_t arm, double sample_us);
  // Checked after each full round: why to stop now, or nothing to go on. `elapsed_ms` is the wall
  // time since sampling began.
  std::optional<std::string> stop_reason(double elapsed_ms) const;
  // The arm's order statistics, with converged and stop_reason filled from `reason`.
  TimingStats stats(std::size_t arm, const std::string& reason) const;
  const std::vector<double>& samples(std::size_t arm) const { return samples_.at(arm); }
  std::size_t arms() const { return samples_.size(); }

 private:
  bool arm_converged(std::size_t arm) const;
  SamplingPolicy policy_;
  std::vector<std::vector<double>> samples_;
};

}  // namespace fb
