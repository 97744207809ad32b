// Comparison of two reports of one scenario (runs, commits or GPU sets).
// Verify/bench reports: cases paired by (case, point, backend); outcome, claim and check changes
// (verification changes, each a regression); outputs whose bytes changed (fingerprints); per
// (variant, mode) a verdict on the time from both runs' samples (reports/compare_verdict.hpp) and
// the head / base median ratio, with the geometric mean over each case's first variant.
// Ablation reports: points paired by id; per configuration (all_on, <fusion>_off, all_off) a time
// verdict; per fusion its check (pass -> fail is a regression) and its share in both runs.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "reports/compare_verdict.hpp"
#include "reports/report_reader.hpp"

namespace fb {

// 1.1: findings of kind "launch" (a variant launched another form) and their count, launches_changed.
inline constexpr const char* kComparisonSchemaVersion = "1.1";

struct CompareOptions {
  double max_slowdown = 0.0;          // also a regression: a case's headline median (its first variant timed on both sides) grows past this ratio (0: off)
  bool fail_on_bit_change = false;    // also a regression: any output fingerprint changed
  VerdictThresholds thresholds;
};

struct Comparison {
  std::string text;                   // console table
  std::string markdown;               // a pull-request comment
  nlohmann::ordered_json json;        // reports/schema/comparison.schema.json
  bool regression = false;            // a SLOWER verdict, a verification change, a vanished case, a gate
  bool ambiguous = false;             // some AMBIGUOUS verdict (compare exits 4 when nothing regressed)
};

// InputError when the reports cannot be compared (schema major.minor, report kind, scenario).
Comparison compare_reports(const nlohmann::ordered_json& base, const nlohmann::ordered_json& head,
                           const CompareOptions& options);

}  // namespace fb
