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
#include "core/shard.hpp"
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
  std::string shard = "0/1";   // --shard I/N (core/shard.hpp)
};

void add_common_options(CLI::App& command, CommonOptions& options);

// "a,b,,c" -> {"a", "b", "", "c"}: every piece between separators, empty ones kept (the callers
// name an empty piece as bad input); "" -> {""}.
std::vector<std::string> split_on(const std::string& text, char sep);

struct Selection {
  Scenario scenario;
  std::vector<ScenarioPoint> points;
  std::vector<std::string> notes;  // cases --kernel selected that --where removed, and why; the shard
  Shard shard;                     // the points kept are this shard's share of the unsharded order
  std::size_t points_total = 0;    // points of the unsharded run (after --kernel and --where)
};

// The scenario's points that match --kernel and --where, then this --shard's share of them
// (point p of that order belongs to shard p mod N); InputError when nothing matches the filters.
// A shard left with no point (N past the point count) runs nothing and says so.
Selection select_points(const CommonOptions& options, const Registry& registry);

VerifyOptions verify_options(const CommonOptions& options);
// The memory guard over every selected point (core/memory_guard.hpp): InputError (exit 2) naming
// the first point this machine cannot hold, before anything runs. Points the backend skips anyway
// (a GPU-only shape on the CPU) are left to their skip.
void check_memory(const Selection& selection, const Session& session);
std::string repro_line(const std::string& command, const CommonOptions& options, const CaseResult& result);
RunMetadata start_metadata(const std::string& command, const CommonOptions& options, const Selection& selection,
                           const Session& session, const std::vector<std::string>& argv);
void finish_metadata(RunMetadata& meta, double wall_s);
void write_reports(const CommonOptions& options, const RunMetadata& meta, const std::vector<CaseResult>& results);
// Writes every report, each independently; returns their error lines (empty: all written).
std::string try_write_reports(const CommonOptions& options, const RunMetadata& meta,
                              const std::vector<CaseResult>& results);
// The run's exit code after its reports: a failing run (1, 3) keeps its code when a report also
// failed, and both are said; a passing run whose report failed is exit 2.
int final_exit_code(int run_code, const std::string& report_errors);
// Fails fast (exit 2), before hours of work are run, when a report path cannot be written, two
// reports name one file, or a report would overwrite the scenario (cli/output_paths.hpp).
void check_report_paths(const CommonOptions& options);
int exit_code_for(const std::vector<CaseResult>& results, bool device_failed);

// argv as given, for reports and repro lines.
const std::vector<std::string>& command_line();
void set_command_line(int argc, char** argv);

}  // namespace fb
