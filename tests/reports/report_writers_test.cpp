// Report writers: the JSON report carries provenance, methodology and every check; JUnit counts
// match outcomes; markdown lists what did not pass with its repro line; files are written
// atomically (no temporary left behind, an unwritable path is an InputError).
#include <gtest/gtest.h>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <pugixml.hpp>

#include "core/errors.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"
#include "reports/atomic_write.hpp"
#include "reports/json_report.hpp"
#include "reports/junit_report.hpp"
#include "reports/markdown_report.hpp"
#include "support/test_family.hpp"

namespace fb {
namespace {

std::vector<CaseResult> sample_results() {
  Session cpu("cpu");
  std::vector<CaseResult> results;
  for (auto fault : {testing::Fault::none, testing::Fault::chain_off_by_one_ulp, testing::Fault::skip_last_element}) {
    Point p;
    p.set("N", std::int64_t{64});
    CaseResult r = verify_case(testing::doubling_case(fault), p, VerifyOptions{}, cpu);
    r.repro = "fusebench verify --kernel test/doubling --where N=64";
    results.push_back(std::move(r));
  }
  CaseResult skipped = results.front();
  skipped.outcome = Outcome::skipped;
  skipped.reason = "GPU only";
  results.push_back(skipped);
  return results;
}

RunMetadata sample_meta() {
  RunMetadata m;
  m.command = "verify";
  m.argv = {"fusebench", "verify"};
  m.started_at = m.finished_at = "2026-11-30T00:00:00Z";
  m.backend_request = "cpu";
  m.scenario_name = "unit";
  return m;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The run's FUSEBENCH_* variables (the run-time knobs that choose kernels) are recorded by name,
// and nothing else from the environment (nor FUSEBENCH_GIT_SHA, the build's commit).
TEST(JsonReport, RecordsTheFusebenchKnobsOfTheRun) {
  setenv("FUSEBENCH_TEST_KNOB", "192", 1);
  setenv("NOT_A_FUSEBENCH_TEST_KNOB", "1", 1);
  setenv("FUSEBENCH_GIT_SHA", "0123abc", 1);  // the build's provenance, not a knob
  const auto j = report_json(sample_meta(), sample_results());
  unsetenv("FUSEBENCH_TEST_KNOB");
  unsetenv("NOT_A_FUSEBENCH_TEST_KNOB");
  unsetenv("FUSEBENCH_GIT_SHA");
  EXPECT_FALSE(j["run"]["knobs"].contains("FUSEBENCH_GIT_SHA"));
  ASSERT_TRUE(j["run"]["knobs"].is_object()) << j["run"].dump();
  EXPECT_EQ(j["run"]["knobs"]["FUSEBENCH_TEST_KNOB"], "192");
  EXPECT_FALSE(j["run"]["knobs"].contains("NOT_A_FUSEBENCH_TEST_KNOB"));
  for (const auto& [name, value] : j["run"]["knobs"].items()) EXPECT_EQ(name.rfind("FUSEBENCH_", 0), 0u) << name;
  EXPECT_FALSE(report_json(sample_meta(), sample_results())["run"]["knobs"].contains("FUSEBENCH_TEST_KNOB"));
}

// A case's launch_configs (schema 2.0.2) are written by variant where a variant named its form, and
// left out where none did (the field is optional: older readers see nothing new).
TEST(JsonReport, WritesLaunchConfigsOnlyWhereAVariantNamedItsForm) {
  auto results = sample_results();
  results[0].launch_configs = {{"fused", "tile 128x192"}, {"chain", "plain kernel"}};
  const auto j = report_json(sample_meta(), results);
  ASSERT_TRUE(j["cases"][0].contains("launch_configs")) << j["cases"][0].dump();
  EXPECT_EQ(j["cases"][0]["launch_configs"]["fused"], "tile 128x192");
  EXPECT_EQ(j["cases"][0]["launch_configs"]["chain"], "plain kernel");
  EXPECT_EQ(j["cases"][0]["launch_configs"].size(), 2u);
  EXPECT_FALSE(j["cases"][1].contains("launch_configs"));
}

TEST(JsonReport, CarriesSchemaProvenanceAndEveryCheck) {
  const auto results = sample_results();
  const auto j = report_json(sample_meta(), results);
  EXPECT_EQ(j["schema_version"], kReportSchemaVersion);
  EXPECT_TRUE(j["run"]["build"].contains("git_sha"));
  EXPECT_TRUE(j["run"]["build"].contains("git_dirty"));
  EXPECT_TRUE(j["device"].is_null());
  EXPECT_EQ(j["summary"]["pass"], 1);
  EXPECT_EQ(j["summary"]["fail"], 1);
  EXPECT_EQ(j["summary"]["mistrusted"], 1);
  EXPECT_EQ(j["summary"]["skipped"], 1);
  const auto& failed = j["cases"][1];
  EXPECT_EQ(failed["outcome"], "fail");
  bool saw_first_mismatch = false;
  for (const auto& c : failed["checks"])
    if (c["id"] == "check/pair/fused~chain/bitwise" && c.contains("first_mismatch")) {
      saw_first_mismatch = true;
      EXPECT_EQ(c["first_mismatch"]["index"], 5);
    }
  EXPECT_TRUE(saw_first_mismatch);
  EXPECT_EQ(j["cases"][0]["fingerprints"].size(), 2u);
  EXPECT_TRUE(j["cases"][0]["inputs"]["input_seed"].get<std::string>().starts_with("0x"));
}

TEST(JunitReport, CountsMatchOutcomesAndFailuresCarryTheirReason) {
  const std::string xml = junit_xml(sample_meta(), sample_results());
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str()));
  const auto suites = doc.child("testsuites");
  EXPECT_EQ(suites.attribute("tests").as_int(), 4);
  EXPECT_EQ(suites.attribute("failures").as_int(), 2);  // fail and mistrusted
  EXPECT_EQ(suites.attribute("skipped").as_int(), 1);
  const auto suite = suites.child("testsuite");
  EXPECT_STREQ(suite.attribute("name").as_string(), "test");
  int failures = 0;
  for (auto tc : suite.children("testcase"))
    if (auto f = tc.child("failure")) {
      ++failures;
      EXPECT_NE(std::string(f.text().as_string()).find("repro: fusebench verify"), std::string::npos);
    }
  EXPECT_EQ(failures, 2);
}

TEST(MarkdownReport, ListsCasesAndWhatDidNotPass) {
  const std::string md = markdown_report(sample_meta(), sample_results());
  EXPECT_NE(md.find("# fusebench verify: unit"), std::string::npos);
  EXPECT_NE(md.find("| pass | `test/doubling` |"), std::string::npos);
  EXPECT_NE(md.find("## Not passing"), std::string::npos);
  EXPECT_NE(md.find("fusebench verify --kernel test/doubling --where N=64"), std::string::npos);
}

TEST(AtomicWrite, ReplacesTheFileAndLeavesNoTemporary) {
  const auto dir = std::filesystem::temp_directory_path() / "fusebench_atomic_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "r.json").string();
  write_file_atomically(path, "first");
  write_file_atomically(path, "second");
  EXPECT_EQ(read(path), "second");
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);
  std::filesystem::remove_all(dir);
}

TEST(AtomicWrite, UnwritablePathIsAnInputErrorNamingThePath) {
  try {
    write_file_atomically("/nonexistent-dir/r.json", "x");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/r.json: cannot write report"), std::string::npos);
  }
}

}  // namespace
}  // namespace fb
