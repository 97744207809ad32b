// Sampling policy and order statistics for timings.
//
// Samples are taken in batches until the relative inter-quartile range (q3 - q1) / median falls to
// the noise target with at least `min_samples`, or a cap (samples or wall time) is reached; the
// report records which, so an unconverged timing is never mistaken for a stable one.
#pragma once

#include <vector>

#include "core/results.hpp"

namespace fb {

struct SamplingPolicy {
  int warmup_count = 5;         // at least this many warm-up runs...
  double warmup_ms = 25.0;      // ...and at least this much wall time
  int min_samples = 20;
  int max_samples = 2000;
  double noise_target = 0.02;   // rel-IQR to stop at
  double time_cap_ms = 3000.0;  // wall time per role and mode
  int batch = 10;               // samples between convergence checks
};

// Summary of samples in microseconds (sorted copy; the input is left as is).
TimingStats summarize_samples(const std::vector<double>& samples_us);

// Linear-interpolated quantile of sorted data, q in [0, 1].
double quantile_sorted(const std::vector<double>& sorted, double q);

}  // namespace fb
