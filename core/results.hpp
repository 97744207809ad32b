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
#include "core/kernel_case.hpp"

namespace fb {

// pass: every check held. fail: a check did not. error: the run could not finish (device error,
// exception). skipped: not run, with a reason. mistrusted: a check "passed" on evidence that cannot
// be trusted (poison survived in an output, or an output is one repeated value for varied inputs).
enum class Outcome { pass, fail, error, skipped, mistrusted };
const char* outcome_name(Outcome o);

struct CheckResult {
  std::string id;       // "check/chain/bitwise", "check/fp64/fused", "check/emu/chain", "check/repeat/fused"
  std::string subject;  // the output (or derived quantity) compared
  bool passed = false;
  bool mistrusted = false;
  std::string message;  // one line
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
};

struct TimingStats {
  std::int64_t samples = 0;
  double min_us = 0, q1_us = 0, median_us = 0, q3_us = 0, max_us = 0, mean_us = 0;
  double rel_iqr = 0;          // (q3 - q1) / median
  bool converged = false;      // reached the noise target before a cap
  std::string stop_reason;     // "noise target", "time cap", "sample cap"
  double wall_ms = 0;
};

struct RoleTiming {
  std::string role;            // "fused" | "chain"
  std::string mode;            // "cold" | "hot"
  TimingStats stats;
  Traffic traffic;
  double gb_per_s = 0;         // traffic / median
  double copy_fraction = 0;    // gb_per_s / measured copy bandwidth (0 when not measured)
};

struct CaseResult {
  std::string case_name, family, fusion, claim;
  Point point;
  Backend backend = Backend::cpu;
  std::uint64_t run_seed = 0;
  std::uint64_t input_seed = 0;
  std::string distribution;
  std::vector<std::string> output_shapes;
  Outcome outcome = Outcome::pass;
  std::string reason;          // why it is not a pass (first failing check, error, skip reason)
  std::vector<CheckResult> checks;
  std::vector<std::pair<std::string, std::string>> fingerprints;  // "fused/q" -> "fnv1a64:0123..."
  std::vector<RoleTiming> timings;
  std::optional<double> speedup_vs_chain;  // chain median / fused median (per mode, first mode)
  std::string repro;
  double wall_ms = 0;
};

}  // namespace fb
