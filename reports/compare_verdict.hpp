// The verdict on one timing across two runs: FASTER, SLOWER, SAME or AMBIGUOUS, from both runs'
// samples (a two-sided Mann-Whitney U test) and a minimum effect on the median ratio.
//
//   p < alpha and the ratio past the effect       -> FASTER / SLOWER
//   p >= alpha and the ratio inside the effect    -> SAME
//   anything else                                 -> AMBIGUOUS: too few samples on a side, a
//     significant difference smaller than the effect, or a large difference the samples cannot
//     tell from noise
// "Past the effect": head median / base median > 1 + min_effect (slower) or < 1 / (1 + min_effect)
// (faster), so a 2 % effect reads the same in both directions on a log scale.
#pragma once

#include <string>
#include <vector>

namespace fb {

enum class Verdict { faster, slower, same, ambiguous };
const char* verdict_name(Verdict v);  // "FASTER" | "SLOWER" | "SAME" | "AMBIGUOUS"

struct VerdictThresholds {
  double alpha = 0.05;      // significance level of the two-sided test
  double min_effect = 0.02; // smallest median change that counts, as a fraction
  int min_samples = 8;      // fewer samples on either side: AMBIGUOUS (the normal approximation needs ~8)
};

struct TimingVerdict {
  Verdict verdict = Verdict::ambiguous;
  double base_median_us = 0, head_median_us = 0;
  double ratio = 0;         // head median / base median (> 1: head is slower)
  double u = 0, p = 1;      // the test on the samples (p = 1 when it was not run)
  long long n_base = 0, n_head = 0;
  std::string reason;       // why, in a few words
};

// base/head: every sample of one timing in each run (microseconds, finite, > 0). The medians
// are recomputed from the samples.
TimingVerdict judge_timing(const std::vector<double>& base_us, const std::vector<double>& head_us,
                           const VerdictThresholds& thresholds);

// InputError naming the option when a threshold is outside its range.
void check_thresholds(const VerdictThresholds& thresholds);

}  // namespace fb
