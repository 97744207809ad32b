// Report comparison on the golden pair in tests/reports/golden: base passes two cases; head fails
// one (with two outputs whose bytes changed) and runs the other 1.5x slower (no samples kept: no
// verdicts); bench_base/bench_head.json keep samples, ablation_base/ablation_head.json are ablations.
#include <gtest/gtest.h>

#include <fstream>

#include "core/errors.hpp"
#include "reports/report_compare.hpp"

namespace fb {
namespace {

const std::string kGolden = std::string(FUSEBENCH_SOURCE_DIR) + "/tests/reports/golden/";

TEST(ReportCompare, GoldenPairShowsRegressionBitsAndTimeRatios) {
  const Comparison c = compare_reports(load_report(kGolden + "base.json"), load_report(kGolden + "head.json"), {});
  EXPECT_TRUE(c.regression);
  EXPECT_EQ(c.json["outcome_regressions"], 1);
  EXPECT_EQ(c.json["bits_changed"], 2);
  EXPECT_NEAR(c.json["first_variant_time_geomean"].get<double>(), std::sqrt(1.5), 1e-9);
  EXPECT_NE(c.text.find("REGRESSION  pass -> fail"), std::string::npos) << c.text;
}

TEST(ReportCompare, SameReportHasNoRegressionAndGatesTrip) {
  const auto base = load_report(kGolden + "base.json");
  const auto head = load_report(kGolden + "head.json");
  EXPECT_FALSE(compare_reports(base, base, {}).regression);
  EXPECT_DOUBLE_EQ(compare_reports(base, base, {}).json["first_variant_time_geomean"].get<double>(), 1.0);
  // Slowdown gate alone: compare only the case that got slower.
  auto base_one = base, head_one = head;
  base_one["cases"].erase(0);
  head_one["cases"].erase(0);
  EXPECT_FALSE(compare_reports(base_one, head_one, {}).regression);
  EXPECT_TRUE(compare_reports(base_one, head_one, CompareOptions{1.2, false}).regression);
  EXPECT_FALSE(compare_reports(base_one, head_one, CompareOptions{1.6, false}).regression);
}

// A bench run with --variants may leave the case's first variant untimed: the first variant timed
// on both sides then carries the geometric mean and the gate.
TEST(ReportCompare, TheGateFallsToTheFirstVariantTimedOnBothSides) {
  auto base = load_report(kGolden + "base.json");
  auto head = load_report(kGolden + "head.json");
  base["cases"].erase(0);
  head["cases"].erase(0);
  for (auto* r : {&base, &head}) {
    auto& timings = (*r)["cases"][0]["timings"];
    timings.erase(0);  // fused untimed; chain stays (1.5x slower in head)
    ASSERT_EQ(timings[0]["variant"], "chain");
  }
  CompareOptions gate;
  gate.max_slowdown = 1.2;
  const Comparison c = compare_reports(base, head, gate);
  EXPECT_TRUE(c.regression);
  EXPECT_NEAR(c.json["first_variant_time_geomean"].get<double>(), 32995.7295 / 21997.153, 1e-9);
  gate.max_slowdown = 1.6;
  EXPECT_FALSE(compare_reports(base, head, gate).regression);
}

TEST(ReportCompare, VanishedOrNewFailingCaseIsARegression) {
  const auto base = load_report(kGolden + "base.json");
  auto head = base;
  head["cases"].erase(1);  // a case that head never reached
  Comparison c = compare_reports(base, head, {});
  EXPECT_TRUE(c.regression);
  EXPECT_EQ(c.json["cases_gone"], 1);
  auto other_backend = base;
  other_backend["cases"][0]["backend"] = "gpu";  // recorded under another backend: gone + new
  other_backend["cases"][0]["outcome"] = "error";
  c = compare_reports(base, other_backend, {});
  EXPECT_TRUE(c.regression);
  EXPECT_EQ(c.json["new_cases_not_passing"], 1);
}

TEST(ReportCompare, RejectsFilesThatAreNotReports) {
  EXPECT_THROW(load_report(kGolden + "absent.json"), InputError);
  EXPECT_THROW(load_report(std::string(FUSEBENCH_SOURCE_DIR) + "/scenarios/ci-quick.json"), InputError);
}

// A malformed report is bad input naming the file and the JSON path, never a crash.
TEST(ReportCompare, MalformedFieldsAreNamedByTheirJsonPath) {
  const nlohmann::ordered_json good = load_report(kGolden + "base.json");
  const std::string path = ::testing::TempDir() + "/malformed-report.json";
  auto expect_message = [&](const nlohmann::ordered_json& j, const std::string& fragment) {
    std::ofstream(path) << j.dump();
    try {
      load_report(path);
      ADD_FAILURE() << "accepted a report with " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  };
  auto j = good;
  j["schema_version"] = "1.0.0";
  expect_message(j, "before variants (schema 2)");
  j = good;
  j["run"].erase("build");
  expect_message(j, "$.run.build: missing");
  j = good;
  j["cases"][0]["timings"][0]["time"] = nlohmann::ordered_json::object();
  expect_message(j, "$.cases[0].timings[0].time.median_us: missing");
  j = good;
  j["cases"][0]["timings"][0].erase("variant");
  expect_message(j, "$.cases[0].timings[0].variant: missing");
  j = good;
  j["cases"][1]["point"] = 3;
  expect_message(j, "$.cases[1].point: is not an object");
  j = good;
  j["cases"] = nlohmann::ordered_json::object();
  expect_message(j, "$.cases: is not an array");
  j = good;
  j["cases"][0]["timings"][0]["samples_us"] = nlohmann::ordered_json::array({1.0, -2.0});
  expect_message(j, "$.cases[0].timings[0].samples_us[1]: is not a positive number");
  j = good;
  j["cases"][0]["launch_configs"] = {{"wgmma", 192}};
  expect_message(j, "$.cases[0].launch_configs.wgmma: is not a string");
  j = good;
  j["cases"][1]["launch_configs"] = "tile 128x192";
  expect_message(j, "$.cases[1].launch_configs: is not an object");
  j = good;
  j["report_kind"] = "summary";
  expect_message(j, "$.report_kind: 'summary' is not a report kind");
  j = load_report(kGolden + "ablation_base.json");
  j["points"][1]["configs"][2]["time"].erase("median_us");
  expect_message(j, "$.points[1].configs[2].time.median_us: missing");
  j = load_report(kGolden + "ablation_base.json");
  j["points"][0]["fusions"][1]["share"] = "big";
  expect_message(j, "$.points[0].fusions[1].share: is not a number or null");
  j = load_report(kGolden + "ablation_base.json");
  j["points"][2].erase("id");
  expect_message(j, "$.points[2].id: missing");
}

// Verdicts on the sampled fixture pair (bench_base/bench_head.json): one timing of each verdict.
TEST(ReportCompare, VerdictsFromTheSamples) {
  const Comparison c = compare_reports(load_report(kGolden + "bench_base.json"), load_report(kGolden + "bench_head.json"), {});
  EXPECT_EQ(c.json["verdicts"]["SLOWER"], 1);
  EXPECT_EQ(c.json["verdicts"]["FASTER"], 1);
  EXPECT_EQ(c.json["verdicts"]["SAME"], 1);
  EXPECT_EQ(c.json["verdicts"]["AMBIGUOUS"], 1);
  EXPECT_TRUE(c.regression);  // the SLOWER verdict
  EXPECT_TRUE(c.ambiguous);
  EXPECT_EQ(c.json["result"], "REGRESSION");
  EXPECT_EQ(c.json["verification_changes"], 0);
  // Regressions come first in every output; the markdown's sections are in order.
  EXPECT_EQ(c.json["findings"][0]["verdict"], "SLOWER");
  EXPECT_EQ(c.json["findings"][1]["verdict"], "FASTER");
  const std::size_t reg = c.markdown.find("### Regressions"), imp = c.markdown.find("### Improvements"),
                    rest = c.markdown.find("<details>");
  ASSERT_NE(reg, std::string::npos);
  EXPECT_LT(reg, imp);
  EXPECT_LT(imp, rest);
  EXPECT_LT(c.markdown.find("SLOWER"), imp);
  EXPECT_EQ(c.markdown.rfind("**fusebench compare: REGRESSION**", 0), 0u);
  // The same report against itself: every sampled timing SAME, nothing to report.
  const auto base = load_report(kGolden + "bench_base.json");
  const Comparison same = compare_reports(base, base, {});
  EXPECT_FALSE(same.regression);
  EXPECT_FALSE(same.ambiguous);
  EXPECT_EQ(same.json["verdicts"]["SAME"], 4);
  // Stricter sample demands turn everything AMBIGUOUS, which is not a regression.
  CompareOptions strict;
  strict.thresholds.min_samples = 13;
  const Comparison unsure = compare_reports(base, base, strict);
  EXPECT_FALSE(unsure.regression);
  EXPECT_TRUE(unsure.ambiguous);
  EXPECT_EQ(unsure.json["result"], "AMBIGUOUS");
}

TEST(ReportCompare, LostChecksAndBitwiseClaimsAreVerificationChanges) {
  const auto base = load_report(kGolden + "bench_base.json");
  auto head = base;
  // A bitwise pair check that head no longer runs, and a repeat check that now fails (outcome
  // still pass: the regression is the check itself).
  head["cases"][0]["checks"].erase(0);
  head["cases"][1]["checks"][6]["passed"] = false;
  Comparison c = compare_reports(base, head, {});
  EXPECT_TRUE(c.regression);
  EXPECT_EQ(c.json["verification_changes"], 2);
  EXPECT_EQ(c.json["outcome_regressions"], 0);
  head = base;
  head["cases"][1]["claim"] = "bound";
  c = compare_reports(base, head, {});
  EXPECT_TRUE(c.regression);
  EXPECT_EQ(c.json["verification_changes"], 1);
  // bound -> bitwise is a change, not a regression.
  c = compare_reports(head, base, {});
  EXPECT_FALSE(c.regression);
  EXPECT_EQ(c.json["verification_changes"], 0);
}

TEST(ReportCompare, AblationPointsConfigsAndChecks) {
  const auto base = load_report(kGolden + "ablation_base.json");
  const auto head = load_report(kGolden + "ablation_head.json");
  const Comparison c = compare_reports(base, head, {});
  EXPECT_TRUE(c.regression);  // F1's check at decode M=3: pass -> fail
  EXPECT_EQ(c.json["verification_changes"], 1);
  EXPECT_EQ(c.json["verdicts"]["FASTER"], 1);  // all_on at prefill, 4 % faster
  EXPECT_EQ(c.json["verdicts"]["SAME"], 11);
  EXPECT_EQ(c.json["compared_kind"], "ablation");
  EXPECT_EQ(c.json["cases"][0]["shares"]["F1"]["base"], base["points"][0]["fusions"][0]["share"]);
  EXPECT_FALSE(compare_reports(base, base, {}).regression);
  auto gone = base;
  gone["points"].erase(1);
  gone["points"][0]["configs"].erase(1);
  const Comparison g = compare_reports(base, gone, {});
  EXPECT_TRUE(g.regression);
  EXPECT_EQ(g.json["cases_gone"], 2);  // a point and a configuration
}

TEST(ReportCompare, AblationAllOffCheckPointErrorsAndFusionsThatDoNotApply) {
  const auto base = load_report(kGolden + "ablation_base.json");
  // F8 does not apply at prefill (its check is null, its share untimed): nothing to report.
  ASSERT_TRUE(base["points"][2]["fusions"][2]["check"].is_null());
  EXPECT_EQ(compare_reports(base, base, {}).json["verification_changes"], 0);
  auto head = base;
  head["points"][1]["all_off_check"]["outcome"] = "fail";
  head["points"][0]["error"] = "layer step: out of device memory";
  head["points"][0]["fusions"][1]["check"]["claim"] = "none";  // F6's bound claim changed: not bitwise
  head["points"][1]["fusions"][0]["check"]["claim"] = "bound";  // F1 was bitwise
  const Comparison c = compare_reports(base, head, {});
  EXPECT_TRUE(c.regression);
  EXPECT_EQ(c.json["verification_changes"], 3);  // all_off check, the point's error, F1's lost bitwise claim
  // A fusion that applied and passed, then does not apply (check null): pass -> none.
  head = base;
  head["points"][0]["fusions"][0]["check"] = nullptr;
  EXPECT_EQ(compare_reports(base, head, {}).json["verification_changes"], 1);
}

// Two runs that differ in a knob (run.knobs, schema 2.0.1) say so above the table and in the JSON;
// a report without knobs (schema 2.0.0) compares as before, with no knob line.
TEST(ReportCompare, KnobsThatDifferAreNamed) {
  const auto bench = load_report(kGolden + "bench_base.json");
  auto base = bench, head = bench;
  base["run"]["knobs"] = {{"FUSEBENCH_GEMM_TILE_N", "128"}, {"FUSEBENCH_SAME", "1"}};
  head["run"]["knobs"] = {{"FUSEBENCH_GEMM_TILE_N", "192"}, {"FUSEBENCH_SAME", "1"}, {"FUSEBENCH_NEW", "0"}};
  const Comparison c = compare_reports(base, head, {});
  EXPECT_NE(c.text.find("knobs differ: FUSEBENCH_GEMM_TILE_N 128 -> 192, FUSEBENCH_NEW (unset) -> 0\n"), std::string::npos)
      << c.text;
  EXPECT_EQ(c.text.find("FUSEBENCH_SAME"), std::string::npos) << c.text;
  EXPECT_NE(c.markdown.find("knobs differ: FUSEBENCH_GEMM_TILE_N 128 -> 192"), std::string::npos) << c.markdown;
  EXPECT_EQ(c.json["head"]["knobs"]["FUSEBENCH_GEMM_TILE_N"], "192");
  EXPECT_EQ(compare_reports(base, base, {}).text.find("knobs differ"), std::string::npos);
  EXPECT_EQ(compare_reports(bench, head, {}).text.find("knobs differ"), std::string::npos);  // base records none
}

// A variant that launched another form (launch_configs, report schema 2.0.2: a tile width from a
// knob or a changed rule) is named beside the timings and counted, and is never a regression;
// reports without the field on either side say nothing of it.
TEST(ReportCompare, LaunchFormsThatDifferAreNamedAndAreNoRegression) {
  const auto bench = load_report(kGolden + "bench_base.json");
  auto base = bench, head = bench;
  base["cases"][0]["launch_configs"] = {{"fused", "tile 128x128"}, {"chain", "plain kernel"}};
  head["cases"][0]["launch_configs"] = {
      {"fused", "tile 128x192"}, {"chain", "plain kernel"}, {"extra", "tile 128x128"}};
  const Comparison c = compare_reports(base, head, {});
  EXPECT_FALSE(c.regression);
  EXPECT_EQ(c.json["launches_changed"], 2);
  EXPECT_NE(c.text.find("tile 128x128 -> tile 128x192"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("(none) -> tile 128x128"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("2 variant(s) launched another form"), std::string::npos) << c.text;
  EXPECT_EQ(c.text.find("launch chain"), std::string::npos) << c.text;  // unchanged: not listed
  int launch_findings = 0;
  for (const auto& f : c.json["findings"]) {
    if (f["kind"] != "launch") continue;
    ++launch_findings;
    EXPECT_EQ(f["regression"], false);
  }
  EXPECT_EQ(launch_findings, 2);
  EXPECT_EQ(compare_reports(base, base, {}).json["launches_changed"], 0);
  EXPECT_EQ(compare_reports(bench, head, {}).json["launches_changed"], 0);  // base records none
  EXPECT_EQ(compare_reports(bench, head, {}).text.find("launched another form"), std::string::npos);
}

TEST(ReportCompare, IncomparableReportsAreBadInput) {
  const auto bench = load_report(kGolden + "bench_base.json");
  const auto ablation = load_report(kGolden + "ablation_base.json");
  EXPECT_THROW(compare_reports(bench, ablation, {}), InputError);
  auto other_scenario = bench;
  other_scenario["scenario"]["name"] = "m31-flash-tp4";
  EXPECT_THROW(compare_reports(bench, other_scenario, {}), InputError);
  auto other_schema = bench;
  other_schema["schema_version"] = "2.1.0";
  EXPECT_THROW(compare_reports(bench, other_schema, {}), InputError);
  other_schema["schema_version"] = "2.0.7";  // a patch adds nothing compare reads
  EXPECT_NO_THROW(compare_reports(bench, other_schema, {}));
  try {
    check_comparable({{"a.json", bench}, {"b.json", other_scenario}});
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("b.json: $.scenario.name: scenario 'm31-flash-tp4' differs from 'ci-quick' in a.json"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fb
