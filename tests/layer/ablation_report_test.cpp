// The ablation table and chart from a synthetic report: cells as the original change's table
// writes them, and every SVG bar's value and height against the JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <pugixml.hpp>

#include "reports/ablation_report.hpp"

namespace fb {
namespace {

AblationShare share(double s, double lo, double hi) {
  AblationShare a;
  a.on_us = 100;
  a.off_us = 100 * (1 + s);
  a.share = s;
  a.ci_low = lo;
  a.ci_high = hi;
  a.significant = lo > 0 || hi < 0;
  a.timed = true;
  return a;
}

AblationReport sample_report() {
  AblationReport r;
  r.meta.scenario_name = "synthetic";
  r.meta.backend = Backend::cpu;
  r.methodology.ci_method = "bootstrap";
  r.model.moe_layers = 57;
  r.model.note = "Attention is not modelled.";
  const char* ids[] = {"decode M=3", "prefill T=32768"};
  for (int p = 0; p < 2; ++p) {
    AblationPointResult pt;
    pt.id = ids[p];
    pt.phase = p == 0 ? "decode" : "prefill";
    pt.rows = p == 0 ? 3 : 32768;
    pt.requests = 1;
    AblationConfigTiming on;
    on.name = "all_on";
    on.launches = 11;
    on.time.samples = 3;
    on.time.median_us = 50;
    pt.configs.push_back(on);
    AblationFusionResult f1;
    f1.fusion = "F1";
    f1.title = "Gemma RMSNorm -> fp8";
    f1.check = AblationCheck{"bitwise", "pass", "", 0, 0};
    f1.share = p == 0 ? share(0.052, 0.031, 0.070) : share(0.003, -0.005, 0.011);
    AblationFusionResult f4;
    f4.fusion = "F4";
    f4.title = "one-launch decode router";
    if (p == 0) {
      f4.check = AblationCheck{"bitwise", "pass", "", 0, 0};
      f4.share = share(-0.02, -0.03, -0.01);
    } else {
      f4.applies = false;
      f4.reason = "more than 16 rows";
    }
    pt.fusions = {f1, f4};
    pt.all_off = share(0.10, 0.08, 0.12);
    pt.moe_ms_per_step = 57 * 50 / 1000.0;
    r.points.push_back(pt);
  }
  return r;
}

TEST(AblationReport, MarkdownCellsFollowTheOriginalTable) {
  const std::string md = ablation_markdown(sample_report());
  EXPECT_NE(md.find("| fusion | decode 1 req (M=3) | prefill 32K |"), std::string::npos) << md;
  EXPECT_NE(md.find("| F1 Gemma RMSNorm -> fp8 | +5.2 % [3.1, 7.0] | n.s. (+0.3 % [-0.5, 1.1]) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| F4 one-launch decode router | -2.0 % [-3.0, -1.0] | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("| all off | +10.0 % [8.0, 12.0] | +10.0 % [8.0, 12.0] |"), std::string::npos) << md;
  EXPECT_NE(md.find("modelled, MoE layers only"), std::string::npos);
  EXPECT_NE(md.find("Attention is not modelled."), std::string::npos);
}

TEST(AblationReport, EverySvgBarMatchesTheJson) {
  const AblationReport r = sample_report();
  const nlohmann::ordered_json j = ablation_json(r);
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(ablation_svg(r).c_str()));
  const pugi::xml_node svg = doc.child("svg");
  ASSERT_TRUE(svg);
  const double scale = svg.attribute("data-px-per-percent").as_double();
  ASSERT_GT(scale, 0);
  std::map<std::string, double> expected;  // "F1@decode M=3" -> percent
  for (const auto& p : j["points"]) {
    for (const auto& f : p["fusions"])
      if (f.contains("share")) expected[f["fusion"].get<std::string>() + "@" + p["id"].get<std::string>()] = 100 * f["share"].get<double>();
    expected["all off@" + p["id"].get<std::string>()] = 100 * p["all_off"]["share"].get<double>();
  }
  int bars = 0;
  for (pugi::xml_node rect : svg.children("rect")) {
    if (std::string(rect.attribute("class").as_string()) != "bar") continue;
    ++bars;
    const std::string key = std::string(rect.attribute("data-fusion").as_string()) + "@" + rect.attribute("data-point").as_string();
    ASSERT_TRUE(expected.count(key)) << key;
    const double v = rect.attribute("data-value").as_double();
    EXPECT_NEAR(v, expected[key], 1e-6) << key;
    EXPECT_NEAR(rect.attribute("height").as_double(), std::fabs(v) * scale, 1e-6) << key;
    const double zero = svg.attribute("data-zero-y").as_double(), y = rect.attribute("y").as_double();
    EXPECT_NEAR(v >= 0 ? y + std::fabs(v) * scale : y, zero, 1e-2) << key;  // bars stand on (or hang from) zero
  }
  EXPECT_EQ(bars, static_cast<int>(expected.size()));
  EXPECT_EQ(bars, 5);  // F1 twice, F4 once (it does not apply at prefill), all-off twice
}

TEST(AblationReport, ASkippedFirstPointKeepsTheFusionRows) {
  AblationReport r = sample_report();
  AblationPointResult skipped;
  skipped.id = "decode M=96";
  skipped.phase = "decode";
  skipped.rows = 96;
  skipped.requests = 32;
  skipped.skipped = "GPU only";
  r.points.insert(r.points.begin(), skipped);
  const std::string md = ablation_markdown(r);
  EXPECT_NE(md.find("| F1 Gemma RMSNorm -> fp8 | skipped | +5.2 % [3.1, 7.0] |"), std::string::npos) << md;
  EXPECT_NE(md.find("decode M=96: skipped: GPU only"), std::string::npos) << md;
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(ablation_svg(r).c_str()));
}

TEST(AblationReport, JsonCarriesChecksAndTheModelLabel) {
  const nlohmann::ordered_json j = ablation_json(sample_report());
  EXPECT_EQ(j["report_kind"], "ablation");
  EXPECT_EQ(j["summary"]["checks"], 3);
  EXPECT_EQ(j["points"][1]["fusions"][1]["applies"], false);
  EXPECT_EQ(j["points"][1]["fusions"][1]["timed"], false);
  EXPECT_EQ(j["points"][0]["modelled"]["label"], "modelled, MoE layers only");
  EXPECT_EQ(j["model"]["attention_modelled"], false);
}

}  // namespace
}  // namespace fb
