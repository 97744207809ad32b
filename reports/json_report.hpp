// The versioned JSON report (schema: reports/schema/report.schema.json, semver in schema_version).
// Metric keys are hierarchical: "err/ulp/max", "time/median_us", "check/chain/bitwise".
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/run_metadata.hpp"

namespace fb {

nlohmann::ordered_json case_json(const CaseResult& r);
nlohmann::ordered_json report_json(const RunMetadata& meta, const std::vector<CaseResult>& results);
void write_json_report(const std::string& path, const RunMetadata& meta, const std::vector<CaseResult>& results);

}  // namespace fb
