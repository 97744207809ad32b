// What a run found, per case and point: the outcome, every check, fingerprints and timings.
// Runners fill it; the writers in reports/ turn it into JSON, JUnit, markdown and the console table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/axes.hpp"
#include "core/check_result.hpp"
#include "core/kernel_case.hpp"

namespace fb {

// pass: every check held. fail: a check did not. error: the run could not finish (device error,
// exception). skipped: not run, with a reason. mistrusted: a check "passed" on evidence that cannot
// be trusted (poison survived in an output, or an output is one repeated value for varied inputs).
enum class Outcome { pass, fail, error, skipped, mistrusted };
const char* outcome_name(Outcome o);

struct TimingStats {
  std::int64_t samples = 0;
  double min_us = 0, q1_us = 0, median_us = 0, q3_us = 0, max_us = 0, mean_us = 0;
  double rel_iqr = 0;          // (q3 - q1) / median
  bool converged = false;      // reached the noise target before a cap
  std::string stop_reason;     // "noise target", "time cap", "sample cap"
  double wall_ms = 0;
};

// One variant timed in one mode. Times are per call of the variant: a graph replay of R captured
// calls is divided by R.
struct VariantTiming {
  std::string variant;
  std::string mode;            // "cold" | "hot" | "graph"
  int calls_per_sample = 1;    // R for graph mode
  int launches = 1;            // kernel launches one call makes
  TimingStats stats;
  std::vector<double> samples_us;  // every sample, in the order taken (compare's rank test)
  Work work;
  double gb_per_s = 0;         // work bytes / median
  double copy_fraction = 0;    // gb_per_s / measured copy bandwidth (0 when not measured)
  double tflop_per_s = 0;      // work flops / median (0 when the case declares none)
  double matrix_fraction = 0;  // tflop_per_s / measured dense matrix rate (0 when not measured)
};

// reference median / variant median for one pair claim and mode: above 1, the variant is faster.
struct PairRatio {
  std::string variant, reference, mode;
  double ratio = 0;
};

struct CaseResult {
  std::string case_name, family, fusion;
  std::string claim;           // the pair claims, one line: "fused~chain bitwise"
  Point point;
  Backend backend = Backend::cpu;
  std::uint64_t run_seed = 0;
  std::uint64_t input_seed = 0;
  std::string distribution;
  std::vector<std::string> output_shapes;
  std::vector<std::string> variants;                              // in the case's order
  std::vector<std::pair<std::string, std::string>> skipped_variants;  // variant -> reason
  std::vector<std::pair<std::string, std::string>> launch_configs;   // variant -> form (CaseInstance::launch_config)
  CheckSubset subset;          // what the CPU checks (emulation, fp64) covered
  double check_cost = 0;       // the case's estimate for a whole point, CPU operations
  Outcome outcome = Outcome::pass;
  std::string reason;          // why it is not a pass (first failing check, error, skip reason)
  std::vector<CheckResult> checks;
  std::vector<std::pair<std::string, std::string>> fingerprints;  // "fused/q" -> "fnv1a64:0123..."
  std::vector<VariantTiming> timings;
  std::vector<PairRatio> ratios;
  std::string repro;
  double wall_ms = 0;
};

}  // namespace fb
