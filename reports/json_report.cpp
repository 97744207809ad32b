#include "reports/json_report.hpp"

#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include "core/build_info.hpp"
#include "reports/atomic_write.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

Json timing_json(const TimingStats& s) {
  return Json{{"samples", s.samples},     {"min_us", s.min_us},       {"q1_us", s.q1_us},
              {"median_us", s.median_us}, {"q3_us", s.q3_us},         {"max_us", s.max_us},
              {"mean_us", s.mean_us},     {"rel_iqr", s.rel_iqr},     {"converged", s.converged},
              {"stop_reason", s.stop_reason}, {"wall_ms", s.wall_ms}};
}

Json device_json(const gpu::DeviceInfo& d) {
  return Json{{"api", d.api},
              {"name", d.name},
              {"arch", d.arch},
              {"ordinal", d.ordinal},
              {"multiprocessors", d.multiprocessors},
              {"warp_size", d.warp_size},
              {"memory_bytes", d.memory_bytes},
              {"l2_bytes", d.l2_bytes},
              {"clock_khz", d.clock_khz},
              {"memory_clock_khz", d.memory_clock_khz},
              {"memory_bus_bits", d.memory_bus_bits},
              {"runtime_version", d.runtime_version},
              {"driver_version", d.driver_version}};
}

Json floors_json(const std::vector<LaunchFloor>& floors) {
  Json j = Json::array();
  for (const LaunchFloor& f : floors)
    j.push_back(Json{{"mode", f.mode}, {"calls_per_sample", f.calls_per_sample}, {"time", timing_json(f.stats)}});
  return j;
}

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("unknown");
}

}  // namespace

Json work_json(const Work& w) {
  return Json{{"read_bytes", w.read_bytes}, {"write_bytes", w.write_bytes}, {"flops", w.flops}};
}

Json subset_json(const CheckSubset& s, double cost) {
  Json j{{"full", s.full}, {"unit", s.unit}, {"total", s.total}, {"check_cost", cost}};
  if (!s.full) {
    j["seed"] = fmt::format("{:#018x}", s.seed);
    j["checked"] = static_cast<std::int64_t>(s.units.size());
    j["units"] = s.units;
  }
  return j;
}

Json case_json(const CaseResult& r) {
  Json j;
  j["case"] = r.case_name;
  j["family"] = r.family;
  j["fusion"] = r.fusion;
  j["claim"] = r.claim;
  Json point = Json::object();
  for (const auto& [axis, value] : r.point.items()) {
    if (const auto* i = std::get_if<std::int64_t>(&value))
      point[axis] = *i;
    else
      point[axis] = std::get<std::string>(value);
  }
  j["point"] = point;
  j["backend"] = backend_name(r.backend);
  j["outcome"] = outcome_name(r.outcome);
  j["reason"] = r.reason;
  j["variants"] = r.variants;
  Json skipped = Json::object();
  for (const auto& [v, why] : r.skipped_variants) skipped[v] = why;
  j["skipped_variants"] = std::move(skipped);
  if (!r.launch_configs.empty()) {  // schema 2.0.2: only where a variant's form was chosen
    Json forms = Json::object();
    for (const auto& [v, form] : r.launch_configs) forms[v] = form;
    j["launch_configs"] = std::move(forms);
  }
  // The input seed is a full 64-bit hash: hex text, so no JSON reader rounds it.
  j["inputs"] = Json{{"run_seed", r.run_seed}, {"input_seed", fmt::format("{:#018x}", r.input_seed)},
                     {"distribution", r.distribution}};
  j["outputs"] = r.output_shapes;
  j["check_subset"] = subset_json(r.subset, r.check_cost);
  Json checks = Json::array();
  for (const CheckResult& c : r.checks) {
    Json cj{{"id", c.id}, {"subject", c.subject}, {"passed", c.passed}, {"message", c.message}};
    if (c.mistrusted) cj["mistrusted"] = true;
    for (const auto& [k, v] : c.details.items()) cj[k] = v;
    checks.push_back(std::move(cj));
  }
  j["checks"] = std::move(checks);
  Json fp = Json::object();
  for (const auto& [k, v] : r.fingerprints) fp[k] = v;
  j["fingerprints"] = std::move(fp);
  if (!r.timings.empty()) {
    Json timings = Json::array();
    for (const VariantTiming& t : r.timings) {
      timings.push_back(Json{{"variant", t.variant},
                             {"mode", t.mode},
                             {"calls_per_sample", t.calls_per_sample},
                             {"launches", t.launches},
                             {"time", timing_json(t.stats)},
                             {"samples_us", t.samples_us},
                             {"work", work_json(t.work)},
                             {"gb_per_s", t.gb_per_s},
                             {"copy_fraction", t.copy_fraction},
                             {"tflop_per_s", t.tflop_per_s},
                             {"matrix_fraction", t.matrix_fraction}});
    }
    j["timings"] = std::move(timings);
    Json ratios = Json::array();
    for (const PairRatio& p : r.ratios)
      ratios.push_back(Json{{"variant", p.variant}, {"reference", p.reference}, {"mode", p.mode}, {"ratio", p.ratio}});
    j["ratios"] = std::move(ratios);
  }
  j["repro"] = r.repro;
  j["wall_ms"] = r.wall_ms;
  return j;
}

Json report_json(const RunMetadata& meta, const std::vector<CaseResult>& results) {
  const BuildInfo& b = build_info();
  Json j;
  j["schema_version"] = kReportSchemaVersion;
  j["tool"] = Json{{"name", "fusebench"}, {"version", b.version}};
  j["run"] = Json{{"command", meta.command},
                  {"argv", meta.argv},
                  {"started_at", meta.started_at},
                  {"finished_at", meta.finished_at},
                  {"wall_s", meta.wall_s},
                  {"host", Json{{"hostname", host_name()}, {"cpu_threads", std::thread::hardware_concurrency()}}},
                  {"knobs", fusebench_knobs()},
                  {"build", Json{{"git_sha", b.git_sha},
                                 {"git_dirty", b.git_dirty},
                                 {"build_type", b.build_type},
                                 {"compiler", b.compiler},
                                 {"gpu_backend", b.gpu_backend},
                                 {"gpu_compiler", b.gpu_compiler},
                                 {"gpu_archs", b.gpu_archs}}}};
  j["backend"] = Json{{"name", backend_name(meta.backend)}, {"requested", meta.backend_request},
                      {"note", meta.backend_note}};
  j["device"] = meta.device ? device_json(*meta.device) : Json(nullptr);
  j["methodology"] = meta.methodology;
  if (meta.environment) {
    const BenchEnvironment& e = *meta.environment;
    j["environment"] = Json{{"timer", e.timer},
                            {"copy_bandwidth", Json{{"gb_per_s", e.copy_gb_per_s},
                                                    {"bytes_each_way", e.copy_bytes},
                                                    {"time", timing_json(e.copy_stats)}}},
                            {"launch_floors", floors_json(e.launch_floors)},
                            {"matrix_rate", Json{{"tflop_per_s", e.matrix_rate.tflop_per_s},
                                                 {"size", e.matrix_rate.size},
                                                 {"library", e.matrix_rate.library},
                                                 {"note", e.matrix_rate.note}}},
                            {"l2_flush_bytes", e.l2_flush_bytes}};
  }
  j["scenario"] = Json{{"path", meta.scenario_path},
                       {"name", meta.scenario_name},
                       {"description", meta.scenario_description},
                       {"model", meta.scenario_model},
                       {"workloads", meta.scenario_workloads}};
  const OutcomeCounts c = count_outcomes(results);
  j["summary"] = Json{{"cases", c.total()}, {"pass", c.pass},       {"fail", c.fail},
                      {"error", c.error},   {"skipped", c.skipped}, {"mistrusted", c.mistrusted}};
  Json cases = Json::array();
  for (const CaseResult& r : results) cases.push_back(case_json(r));
  j["cases"] = std::move(cases);
  return j;
}

void write_json_report(const std::string& path, const RunMetadata& meta, const std::vector<CaseResult>& results) {
  write_file_atomically(path, report_json(meta, results).dump(2) + "\n");
}

}  // namespace fb
