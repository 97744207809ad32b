#include "reports/ablation_report.hpp"

#include <fmt/format.h>

#include "reports/atomic_write.hpp"
#include "reports/json_report.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

Json time_json(const TimingStats& t) {
  return Json{{"samples", t.samples}, {"min_us", t.min_us},     {"q1_us", t.q1_us},     {"median_us", t.median_us},
              {"q3_us", t.q3_us},     {"max_us", t.max_us},     {"mean_us", t.mean_us}, {"rel_iqr", t.rel_iqr},
              {"stop_reason", t.stop_reason}};
}

Json share_json(const AblationShare& s) {
  if (!s.timed) return Json{{"timed", false}};
  return Json{{"on_us", s.on_us},     {"off_us", s.off_us},       {"share", s.share},
              {"ci_low", s.ci_low},   {"ci_high", s.ci_high},     {"significant", s.significant}};
}

Json check_json(const AblationCheck& c) {
  return Json{{"claim", c.claim}, {"outcome", c.outcome}, {"detail", c.detail}, {"metric", c.metric}, {"bound", c.bound}};
}

Json opt(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace

Json ablation_json(const AblationReport& report) {
  const Json base = report_json(report.meta, {});
  Json j;
  j["schema_version"] = kAblationSchemaVersion;
  j["report_kind"] = "ablation";
  for (const char* key : {"tool", "run", "backend", "device", "scenario"}) j[key] = base.at(key);
  if (base.contains("environment")) j["environment"] = base.at("environment");
  const AblationMethodology& m = report.methodology;
  j["methodology"] = Json{{"seed", m.seed},
                          {"timing", m.timing},
                          {"rounds", m.decode_rounds},
                          {"prefill_rounds", m.prefill_rounds},
                          {"ci_level", m.ci_level},
                          {"ci_method", m.ci_method},
                          {"min_effect", m.min_effect},
                          {"shard", m.shard},
                          {"time_cap_ms", m.time_cap_ms},
                          {"bootstrap_resamples", m.bootstrap_resamples},
                          {"replays_per_sample", m.replays_per_sample}};
  const AblationModel& mo = report.model;
  j["model"] = Json{{"moe_layers", mo.moe_layers},
                    {"dense_layers", mo.dense_layers},
                    {"attention_modelled", mo.attention_modelled},
                    {"note", mo.note},
                    {"constants_us", Json{{"attention_per_layer", opt(mo.attention_per_layer_us)},
                                          {"dense_layer", opt(mo.dense_layer_us)},
                                          {"lm_head", opt(mo.lm_head_us)}}}};
  int checks = 0, failed = 0;
  for (const AblationPointResult& p : report.points) {
    checks += p.checks();
    failed += p.checks_failed();
  }
  j["summary"] = Json{{"points", report.points.size()}, {"checks", checks}, {"checks_failed", failed}};
  Json points = Json::array();
  for (const AblationPointResult& p : report.points) {
    Json pj{{"id", p.id}, {"phase", p.phase}, {"rows", p.rows}, {"requests", p.requests}};
    if (!p.error.empty()) pj["error"] = p.error;
    if (!p.skipped.empty()) pj["skipped"] = p.skipped;
    Json configs = Json::array();
    for (const AblationConfigTiming& c : p.configs)
      configs.push_back(Json{{"name", c.name},
                             {"off", c.off},
                             {"launches", c.launches},
                             {"time", time_json(c.time)},
                             {"samples_us", c.samples_us}});
    pj["configs"] = std::move(configs);
    Json fusions = Json::array();
    for (const AblationFusionResult& f : p.fusions) {
      Json fj{{"fusion", f.fusion}, {"title", f.title}, {"applies", f.applies}, {"reason", f.reason},
              {"selected", f.selected}};
      fj["check"] = f.check ? check_json(*f.check) : Json(nullptr);
      const Json share = share_json(f.share);
      for (auto it = share.begin(); it != share.end(); ++it) fj[it.key()] = it.value();
      fusions.push_back(std::move(fj));
    }
    pj["fusions"] = std::move(fusions);
    pj["all_off_check"] = p.all_off_check ? check_json(*p.all_off_check) : Json(nullptr);
    pj["all_off"] = share_json(p.all_off);
    pj["modelled"] = Json{{"moe_ms_per_step", p.moe_ms_per_step}, {"tpot_ms", opt(p.tpot_ms)},
                          {"label", "modelled, MoE layers only"}};
    points.push_back(std::move(pj));
  }
  j["points"] = std::move(points);
  return j;
}

void write_ablation_json(const std::string& path, const AblationReport& report) {
  write_file_atomically(path, ablation_json(report).dump(2) + "\n");
}

}  // namespace fb
