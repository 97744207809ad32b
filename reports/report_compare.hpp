// Comparison of two JSON reports (runs, commits or GPU sets): cases matched by case, point and
// backend; outcome changes; outputs whose bytes changed (fingerprints); time ratios per role and
// mode (head / base) with their geometric mean.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fb {

struct CompareOptions {
  double max_slowdown = 0.0;          // fail when a fused median grows past this ratio (0: off)
  bool fail_on_bit_change = false;    // fail when any output fingerprint changed
};

struct Comparison {
  std::string text;                   // human table
  nlohmann::ordered_json json;
  bool regression = false;            // an outcome got worse, or a gate above tripped
};

Comparison compare_reports(const nlohmann::ordered_json& base, const nlohmann::ordered_json& head,
                           const CompareOptions& options);

// Reads and checks a report file (InputError on a missing file, malformed JSON or unknown schema).
nlohmann::ordered_json load_report(const std::string& path);

}  // namespace fb
