// `compare --merge` / `fusebench merge --stats`: several reports of one scenario from different
// GPU sets or machines, summarized per point: the mean of the reports' medians and their spread
// (standard deviation, min, max), like the original change's "mean of two GPU sets". For ablation
// reports also the mean share per (fusion, point) with its spread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/report_reader.hpp"

namespace fb {

inline constexpr const char* kMergeStatsSchemaVersion = "1.0";

struct MergeStats {
  nlohmann::ordered_json json;
  std::string markdown;
};

// Mean, sample standard deviation (n - 1; 0 for one value), min and max of the values.
struct Spread {
  int n = 0;
  double mean = 0, sd = 0, min = 0, max = 0;
};
Spread spread_of(const std::vector<double>& values);

// InputError when the reports are not of one scenario, kind and schema (check_comparable), or
// fewer than two are given.
MergeStats merge_statistics(const std::vector<NamedReport>& reports);

}  // namespace fb
