// The share a fusion is worth, from interleaved rounds: round r timed the on and off steps back to
// back (order rotated), so off_r / on_r pairs them under the same clocks and neighbours.
//   share = median over rounds of (off_r / on_r) - 1
//   CI    = seeded percentile bootstrap: resample the rounds with replacement `resamples` times,
//           take each resample's median ratio - 1, and the (1 - level) / 2 and (1 + level) / 2
//           quantiles of those.
// "significant" when the interval excludes 0.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ablation_result.hpp"

namespace fb {

inline constexpr int kBootstrapResamples = 2000;

AblationShare paired_share(const std::vector<double>& on_us, const std::vector<double>& off_us, std::uint64_t seed,
                           double level = 0.95, int resamples = kBootstrapResamples);

double median_of(std::vector<double> v);

}  // namespace fb
