#include "cli/common_options.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cli/exit_codes.hpp"
#include "core/errors.hpp"
#include "reports/atomic_write.hpp"
#include "reports/json_report.hpp"
#include "reports/junit_report.hpp"
#include "reports/markdown_report.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fb {
namespace {
std::vector<std::string> g_argv;
}

const std::vector<std::string>& command_line() { return g_argv; }
void set_command_line(int argc, char** argv) { g_argv.assign(argv, argv + argc); }

void add_common_options(CLI::App& c, CommonOptions& o) {
  c.add_option("--scenario", o.scenario, "scenario name (in scenarios/) or path to a scenario JSON")
      ->capture_default_str();
  c.add_option("--kernel", o.kernel, "kernel cases to run: a glob on case or family names")->capture_default_str();
  c.add_option("--where", o.where, "only points whose axes match, e.g. M=24,K=6144,fp8=e4m3fn or M=3|24|192");
  c.add_option("--backend", o.backend, "cpu (emulation), gpu, or auto (gpu when usable)")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}))
      ->capture_default_str();
  c.add_option("--seed", o.seed, "run seed; each point derives its own input seed from it")->capture_default_str();
  c.add_option("--json", o.json_path, "write the JSON report here (atomically)");
  c.add_option("--junit", o.junit_path, "write a JUnit XML report here (atomically)");
  c.add_option("--markdown", o.markdown_path, "write a markdown summary here (atomically)");
  c.add_flag("--quiet,-q", o.quiet, "print only cases that do not pass, and the summary");
  c.add_option("--check-budget", o.check_budget,
               "CPU operations the emulation and fp64 checks of one point may cost before they cover a seeded "
               "subset of its rows (variants are still compared over whole outputs)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c.add_flag("--full-check", o.full_check, "check every point whole against emulation and fp64, whatever it costs");
  c.add_option("--fault-injection", o.fault, "(testing) corrupt one fused output element: none | flip-fused")
      ->check(CLI::IsMember({"none", "flip-fused"}))
      ->group("Testing");
}

Selection select_points(const CommonOptions& o, const Registry& registry) {
  Selection s{load_scenario(o.scenario, registry), {}};
  if (registry.match(o.kernel).empty())
    throw InputError(fmt::format("--kernel '{}' matches no kernel case (see: fusebench list)", o.kernel));
  const auto where = parse_where(o.where);
  std::vector<const KernelCase*> kept, dropped;
  for (const ScenarioPoint& p : s.scenario.points) {
    if (!glob_match(o.kernel, p.kernel->name) && !glob_match(o.kernel, p.kernel->family)) continue;
    if (point_matches(p.point, where)) {
      s.points.push_back(p);
      if (std::find(kept.begin(), kept.end(), p.kernel) == kept.end()) kept.push_back(p.kernel);
    } else if (std::find(dropped.begin(), dropped.end(), p.kernel) == dropped.end()) {
      dropped.push_back(p.kernel);
    }
  }
  // A case that --kernel selected but --where removed entirely is said, with the reason: silently
  // benching half of what was asked for reads as a complete answer.
  for (const KernelCase* kc : dropped) {
    if (std::find(kept.begin(), kept.end(), kc) != kept.end()) continue;
    std::string why = "no point of it in the scenario matches";
    for (const auto& [axis, value] : where)
      if (!kc->axis(axis)) {
        why = fmt::format("it has no axis '{}'", axis);
        break;
      }
    s.notes.push_back(fmt::format("--where removed every point of {}: {}", kc->name, why));
  }
  if (s.points.empty())
    throw InputError(fmt::format("{}: no point matches --kernel '{}'{}{}", s.scenario.path, o.kernel,
                                 o.where.empty() ? "" : " --where '" + o.where + "'",
                                 s.notes.empty() ? "" : " (" + s.notes.front() + ")"));
  return s;
}

VerifyOptions verify_options(const CommonOptions& o) {
  VerifyOptions v;
  v.seed = o.seed;
  v.fault = o.fault == "flip-fused" ? FaultInjection::flip_fused_element : FaultInjection::none;
  v.check_budget = o.check_budget;
  v.full_check = o.full_check;
  return v;
}

std::string repro_line(const std::string& command, const CommonOptions& o, const CaseResult& r) {
  return fmt::format("fusebench {} --scenario {} --kernel {} --where {} --backend {} --seed {}{}", command,
                     o.scenario, r.case_name, r.point.where_text(), backend_name(r.backend), o.seed,
                     o.fault != "none" ? " --fault-injection " + o.fault : "");
}

RunMetadata start_metadata(const std::string& command, const CommonOptions& o, const Selection& s,
                           const Session& session, const std::vector<std::string>& argv) {
  RunMetadata m;
  m.command = command;
  m.argv = argv;
  m.started_at = utc_now_iso8601();
  m.backend = session.backend();
  m.backend_request = o.backend;
  m.backend_note = session.fallback_reason().empty() ? "" : "auto chose cpu: " + session.fallback_reason();
  m.device = session.device();
  m.scenario_path = s.scenario.path;
  m.scenario_name = s.scenario.name;
  m.scenario_description = s.scenario.description;
  m.scenario_model = s.scenario.model;
  m.scenario_workloads = s.scenario.workloads;
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  m.methodology = nlohmann::ordered_json{
      {"seed", o.seed},
      {"kernel_filter", o.kernel},
      {"where", o.where},
      {"points", s.points.size()},
      {"verify",
       {{"runs", "every variant (NaN poison); each variant a pair claim checks, again (0x5A poison)"},
        {"checks", {"every declared variant pair per its claim (whole outputs)",
                    "every variant vs fp64 with derived bounds",
                    "gpu vs cpu emulation per variant: bitwise or its stated bound (gpu runs)",
                    "repeatability bitwise (deterministic variants)", "untouched poison",
                    "uniform output for varied inputs"}},
        {"check_budget_cpu_ops", o.check_budget},
        {"full_check", o.full_check},
        {"poison", {{"nan", "0xFF bytes (0x80 for fp8 e4m3fnuz)"}, {"alternate", "0x5A bytes"}}},
        {"fault_injection", o.fault}}},
      {"cpu_emulation_threads", threads}};
  return m;
}

void finish_metadata(RunMetadata& meta, double wall_s) {
  meta.finished_at = utc_now_iso8601();
  meta.wall_s = wall_s;
}

void write_reports(const CommonOptions& o, const RunMetadata& meta, const std::vector<CaseResult>& results) {
  if (!o.json_path.empty()) write_json_report(o.json_path, meta, results);
  if (!o.junit_path.empty()) write_junit_report(o.junit_path, meta, results);
  if (!o.markdown_path.empty()) write_markdown_report(o.markdown_path, meta, results);
}

void check_report_paths(const CommonOptions& o) {
  for (const std::string* path : {&o.json_path, &o.junit_path, &o.markdown_path})
    if (!path->empty()) ensure_writable(*path);
}

int exit_code_for(const std::vector<CaseResult>& results, bool device_failed) {
  if (device_failed) return kExitDeviceError;
  for (const CaseResult& r : results)
    if (r.outcome == Outcome::fail || r.outcome == Outcome::mistrusted || r.outcome == Outcome::error)
      return kExitCheckFailed;
  return kExitPass;
}

}  // namespace fb
