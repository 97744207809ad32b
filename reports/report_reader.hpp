// Reading the reports compare and merge take: verify and bench reports (schema 2.x, no
// report_kind) and ablation reports (report_kind "ablation"). Every field they read is checked;
// a failure is one line naming the file and the JSON path (InputError, exit 2).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fb {

// Reads and checks a report file (InputError on a missing file, malformed JSON, unknown schema or
// report kind, or a field compare/merge reads that is missing or of the wrong type).
nlohmann::ordered_json load_report(const std::string& path);

// "ablation" for ablation reports, "cases" for verify and bench reports.
std::string report_kind(const nlohmann::ordered_json& report);
bool is_ablation(const nlohmann::ordered_json& report);

// "2.0.1" -> "2.0": reports of one major.minor are comparable (a patch adds only optional fields
// that compare merely shows, such as 2.0.1's run.knobs and 2.0.2's launch_configs).
std::string schema_major_minor(const std::string& version);

struct NamedReport {
  std::string path;
  nlohmann::ordered_json json;
};

// Reports that may be compared or merged: one schema major.minor, one report kind, one scenario
// (by name: the path may differ between machines). InputError naming both files otherwise.
void check_comparable(const std::vector<NamedReport>& reports);

// Every sample of a timing ("samples_us"), empty when the report kept none.
std::vector<double> samples_of(const nlohmann::ordered_json& timing);

// A case's point as the console and markdown show it: "M=3 K=6144 ...", in the report's order.
std::string report_point_text(const nlohmann::ordered_json& point);

}  // namespace fb
