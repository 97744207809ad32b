// Options shared by verify and bench, case selection, report writing and exit codes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/registry.hpp"
#include "core/results.hpp"
#include "core/scenario.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"
#include "reports/run_metadata.hpp"

namespace fb {

struct CommonOptions {
  std::string scenario = "m31-flash-tp4";
  std::string kernel = "*";
  std::string where;
  std::string backend = "auto";
  std::uint64_t seed = 1;
  std::string json_path;
  std::string junit_path;
  std::string markdown_path;
  bool quiet = false;
  double check_budget = VerifyOptions{}.check_budget;
  bool full_check = false;
  std::string fault = "none";  // testing only
};

void add_common_options(CLI::App& command, CommonOptions& options);

struct Selection {
  Scenario scenario;
  std::vector<ScenarioPoint> points;
  std::vector<std::string> notes;  // cases --kernel selected that --where removed, and why
};

// The scenario's points that match --kernel and --where; InputError when nothing matches.
Selection select_points(const CommonOptions& options, const Registry& registry);

VerifyOptions verify_options(const CommonOptions& options);
std::string repro_line(const std::string& command, const CommonOptions& options, const CaseResult& result);
RunMetadata start_metadata(const std::string& command, const CommonOptions& options, const Selection& selection,
                           const Session& session, const std::vector<std::string>& argv);
void finish_metadata(RunMetadata& meta, double wall_s);
void write_reports(const CommonOptions& options, const RunMetadata& meta, const std::vector<CaseResult>& results);
// Fails fast (exit 2) when a report path cannot be written, before hours of work are run.
void check_report_paths(const CommonOptions& options);
int exit_code_for(const std::vector<CaseResult>& results, bool device_failed);

// argv as given, for reports and repro lines.
const std::vector<std::string>& command_line();
void set_command_line(int argc, char** argv);

}  // namespace fb
