// Everything about a run that is not a case result: command line, provenance, device, every
// methodology knob (defaults included), the scenario, and what bench measured once per run.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/bench_runner.hpp"
#include "core/device.hpp"
#include "core/results.hpp"
#include "core/scenario.hpp"

namespace fb {

// 2.0.1 adds run.knobs (optional and informational: compare shows it, reads nothing else from it);
// 2.0.2 adds a case's launch_configs (the same: optional, shown by compare).
inline constexpr const char* kReportSchemaVersion = "2.0.2";

struct RunMetadata {
  std::string command;                  // "verify" | "bench"
  std::vector<std::string> argv;
  std::string started_at;               // ISO 8601 UTC
  std::string finished_at;
  double wall_s = 0;
  Backend backend = Backend::cpu;
  std::string backend_request;          // cpu | gpu | auto
  std::string backend_note;             // why auto chose the CPU
  std::optional<gpu::DeviceInfo> device;
  nlohmann::ordered_json methodology = nlohmann::ordered_json::object();
  std::optional<BenchEnvironment> environment;
  std::string scenario_path, scenario_name, scenario_description;
  nlohmann::ordered_json scenario_model = nlohmann::ordered_json::object();
  nlohmann::ordered_json scenario_workloads = nlohmann::ordered_json::object();
};

std::string utc_now_iso8601();

// The process's FUSEBENCH_* environment variables, by name: the run-time knobs that choose kernels
// (FUSEBENCH_GEMM_TILE_N, FUSEBENCH_MOE_TOKEN_STAGE, ...), recorded so that two reports that differ
// only in a knob say so. Not FUSEBENCH_GIT_SHA: the build's commit, recorded in run.build.
std::map<std::string, std::string> fusebench_knobs();

struct OutcomeCounts {
  int pass = 0, fail = 0, error = 0, skipped = 0, mistrusted = 0;
  int total() const { return pass + fail + error + skipped + mistrusted; }
};
OutcomeCounts count_outcomes(const std::vector<CaseResult>& results);

}  // namespace fb
