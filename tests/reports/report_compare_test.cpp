// Report comparison on the golden pair in tests/reports/golden: base passes two cases; head fails
// one (with two outputs whose bytes changed) and runs the other 1.5x slower.
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
  EXPECT_NE(c.text.find("pass -> fail !"), std::string::npos);
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
}

}  // namespace
}  // namespace fb
