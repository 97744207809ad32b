// The ablation report (`fusebench ablate`): JSON (schema reports/schema/ablation.schema.json), the
// markdown table laid out like the original change's (rows = fusions, columns = points), a
// self-contained SVG bar chart of the shares with their intervals, and the console summary.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/ablation_result.hpp"
#include "reports/run_metadata.hpp"

namespace fb {

inline constexpr const char* kAblationSchemaVersion = "2.0";

struct AblationReport {
  RunMetadata meta;
  AblationMethodology methodology;
  AblationModel model;
  std::vector<AblationPointResult> points;
};

nlohmann::ordered_json ablation_json(const AblationReport& report);
void write_ablation_json(const std::string& path, const AblationReport& report);

// A share as the table prints it: "+5.2 % [3.1, 7.0]", "n.s. (+0.3 % [-0.5, 1.1])".
std::string share_cell(const AblationShare& s);
std::string point_heading(const AblationPointResult& p);  // "decode 1 req (M=3)", "prefill 32K"
std::string ablation_markdown(const AblationReport& report);
void write_ablation_markdown(const std::string& path, const AblationReport& report);

// Every bar is a <rect class="bar"> with data-fusion, data-point and data-value (the share in
// percent); its height is |value| times the chart's scale (data-px-per-percent on the <svg>).
std::string ablation_svg(const AblationReport& report);
void write_ablation_svg(const std::string& path, const AblationReport& report);

std::string ablation_console(const AblationReport& report);

}  // namespace fb
