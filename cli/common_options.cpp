#include "cli/common_options.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/exit_codes.hpp"
#include "cli/output_paths.hpp"
#include "cli/shell_quote.hpp"
#include "core/errors.hpp"
#include "core/host_memory.hpp"
#include "core/memory_guard.hpp"
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

// --seed: decimal digits for a value in [0, 2^64). CLI11 alone would take "-1" (wrapping to
// 2^64-1), "" and values past 2^64 (saturating, so two different seeds would run one input).
std::string seed_error(std::string& text) {
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos ||
      (text.size() == 20 && text > "18446744073709551615"))
    return "a seed is a whole number from 0 to 18446744073709551615";
  return {};
}
}  // namespace

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
  c.add_option("--seed", o.seed, "run seed; each point derives its own input seed from it")
      ->check(CLI::Validator(seed_error, "UINT64"))
      ->capture_default_str();
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
  c.add_option("--shard", o.shard,
               "run shard I of N (0 <= I < N): point p of the unsharded order belongs to shard p mod N; "
               "join the shard reports with 'fusebench merge'")
      ->capture_default_str();
}

Selection select_points(const CommonOptions& o, const Registry& registry) {
  const Shard shard = parse_shard(o.shard);
  Selection s{load_scenario(o.scenario, registry), {}, {}, shard, 0};
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
  s.points_total = s.points.size();
  if (shard.active()) {
    std::vector<ScenarioPoint> mine;
    for (std::size_t p = 0; p < s.points.size(); ++p)
      if (shard.contains(static_cast<std::int64_t>(p))) mine.push_back(s.points[p]);
    s.points = std::move(mine);
    s.notes.push_back(fmt::format("--shard {}: {} of the run's {} points (point p of the unsharded order is shard p mod {}'s)",
                                  shard.text(), s.points.size(), s.points_total, shard.count));
  }
  return s;
}

void check_memory(const Selection& selection, const Session& session) {
  const std::optional<std::int64_t> host = available_host_memory_bytes();
  std::optional<std::int64_t> device;
  if (session.device()) device = session.device()->memory_bytes;
  for (const ScenarioPoint& sp : selection.points) {
    const std::unique_ptr<CaseInstance> instance = sp.kernel->make(sp.point);
    if (!instance->skip_reason(session.backend()).empty()) continue;
    check_affordable(sp.kernel->name + " " + sp.point.text(), memory_need(*sp.kernel, *instance, session.backend()),
                     host, device);
  }
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
  // A scenario given by path is made absolute, so the line works from any directory; every
  // argument is shell-quoted (paths with spaces, '|' in --where alternatives).
  std::string scenario = o.scenario;
  if (resolve_scenario_path(scenario) == scenario) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(scenario, ec);
    if (!ec) scenario = absolute.lexically_normal().string();
  }
  return fmt::format("fusebench {} --scenario {} --kernel {} --where {} --backend {} --seed {}{}", command,
                     shell_quote(scenario), shell_quote(r.case_name), shell_quote(r.point.where_text()),
                     backend_name(r.backend), o.seed, o.fault != "none" ? " --fault-injection " + shell_quote(o.fault) : "");
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
      {"points_total", s.points_total},
      {"shard", s.shard.text()},
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
  check_output_paths({{"--json", o.json_path}, {"--junit", o.junit_path}, {"--markdown", o.markdown_path}},
                     {{"the scenario file", resolve_scenario_path(o.scenario)}});
}

std::string try_write_reports(const CommonOptions& o, const RunMetadata& meta, const std::vector<CaseResult>& results) {
  // Each report on its own: one that fails does not cost the others.
  std::string errors;
  auto attempt = [&](const std::string& path, const auto& write) {
    if (path.empty()) return;
    try {
      write(path, meta, results);
    } catch (const std::exception& e) {
      errors += fmt::format("fusebench: error: {}\n", e.what());
    }
  };
  attempt(o.json_path, write_json_report);
  attempt(o.junit_path, write_junit_report);
  attempt(o.markdown_path, write_markdown_report);
  return errors;
}

int final_exit_code(int run_code, const std::string& report_errors) {
  if (report_errors.empty()) return run_code;
  std::cerr << report_errors;
  if (run_code != kExitPass) {
    std::cerr << fmt::format("fusebench: exit {} for the run's own outcome; the report error above is exit {} on its own\n",
                             run_code, static_cast<int>(kExitBadInput));
    return run_code;
  }
  return kExitBadInput;
}

int exit_code_for(const std::vector<CaseResult>& results, bool device_failed) {
  if (device_failed) return kExitDeviceError;
  for (const CaseResult& r : results)
    if (r.outcome == Outcome::fail || r.outcome == Outcome::mistrusted || r.outcome == Outcome::error)
      return kExitCheckFailed;
  return kExitPass;
}

std::vector<std::string> split_on(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(sep, start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace fb
