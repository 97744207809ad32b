// Scenario parsing: sweeps expand to the cartesian product, defaults apply in order, and every bad
// input is rejected naming the file, the key and why.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/scenario.hpp"
#include "support/test_family.hpp"

namespace fb {
namespace {

Registry test_registry() {
  Registry r;
  r.add(testing::doubling_case(testing::Fault::none));
  return r;
}

std::string error_of(const std::string& text) {
  try {
    parse_scenario(text, "s.json", test_registry());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Scenario, SweepsExpandToTheirCartesianProduct) {
  const Registry reg = test_registry();
  const Scenario s = parse_scenario(
      R"({"fusebench_scenario": 1, "name": "t", "cases": {"test/doubling": [{"N": [2, 4, 8]}, {"N": 4}, {}]}})", "s.json",
      reg);
  ASSERT_EQ(s.points.size(), 4u);  // 2, 4, 8, then 4 again (dropped as duplicate), then the default 256
  EXPECT_EQ(s.points[0].point.integer("N"), 2);
  EXPECT_EQ(s.points[2].point.integer("N"), 8);
  EXPECT_EQ(s.points[3].point.integer("N"), 256);
  EXPECT_EQ(s.points[0].origin, "cases.test/doubling[0]");
}

TEST(Scenario, ScenarioDefaultsOverrideCaseDefaults) {
  const Scenario s = parse_scenario(
      R"({"fusebench_scenario": 1, "name": "t", "defaults": {"N": 64}, "cases": {"test/doubling": {}}})", "s.json",
      test_registry());
  ASSERT_EQ(s.points.size(), 1u);
  EXPECT_EQ(s.points[0].point.integer("N"), 64);
}

TEST(Scenario, RejectsMalformedJsonWithPosition) {
  EXPECT_NE(error_of(R"({"fusebench_scenario": 1, "name": )").find("s.json: malformed JSON: parse error at line 1"),
            std::string::npos);
}

TEST(Scenario, RejectsUnknownKeysAxesAndCases) {
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 1, "name": "t", "cases": {"test/doubling": {}}, "extra": 1})"),
            "s.json: extra: unknown key (known: fusebench_scenario, name, description, model, workloads, defaults, cases)");
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 1, "name": "t", "cases": {"test/doubling": [{"M": 2}]}})"),
            "s.json: cases.test/doubling[0].M: unknown axis of test/doubling (axes: N)");
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 1, "name": "t", "cases": {"test/halving": {}}})"),
            "s.json: cases.test/halving: unknown kernel case (known: test/doubling)");
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 1, "name": "t", "defaults": {"Q": 1}, "cases": {"test/doubling": {}}})"),
            "s.json: defaults.Q: no kernel case has this axis");
}

TEST(Scenario, RejectsBadValuesAndImpossibleShapes) {
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 1, "name": "t", "cases": {"test/doubling": [{"N": "many"}]}})"),
            "s.json: cases.test/doubling[0].N: axis N takes an integer");
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 1, "name": "t", "cases": {"test/doubling": [{"N": 2.5}]}})"),
            "s.json: cases.test/doubling[0].N: axis N takes an integer, got 2.5");
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 1, "name": "t", "cases": {"test/doubling": [{"N": 0}]}})"),
            "s.json: cases.test/doubling[0].N: axis N must be in [1, 1048576], got 0");
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 1, "name": "t", "cases": {"test/doubling": [{"N": [2, 3]}]}})"),
            "s.json: cases.test/doubling[0]: test/doubling N=3: N=3 is odd");
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 1, "name": "t", "cases": {"test/doubling": [{"N": []}]}})"),
            "s.json: cases.test/doubling[0].N: an empty list sweeps nothing");
}

TEST(Scenario, RejectsWrongVersionAndMissingFields) {
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 2, "name": "t", "cases": {"test/doubling": {}}})"),
            "s.json: fusebench_scenario: must be 1 (the scenario format version this build reads)");
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 1, "cases": {"test/doubling": {}}})"), "s.json: name: missing");
  EXPECT_EQ(error_of(R"({"fusebench_scenario": 1, "name": "t", "cases": {}})"),
            "s.json: cases: missing or empty: name at least one kernel case");
}

TEST(Scenario, WhereFiltersPointsByAxisText) {
  Point p;
  p.set("M", std::int64_t{24});
  p.set("fp8", std::string("e4m3fn"));
  EXPECT_TRUE(point_matches(p, parse_where("M=24")));
  EXPECT_TRUE(point_matches(p, parse_where("M=24,fp8=e4m3fn")));
  EXPECT_FALSE(point_matches(p, parse_where("M=25")));
  EXPECT_FALSE(point_matches(p, parse_where("K=6144")));
  EXPECT_TRUE(point_matches(p, parse_where("M=3|24|192")));
  EXPECT_FALSE(point_matches(p, parse_where("M=3|192")));
  EXPECT_THROW(parse_where("M"), InputError);
  EXPECT_EQ(p.where_text(), "M=24,fp8=e4m3fn");
}

TEST(Scenario, ShippedScenariosLoad) {
  // The real registry's scenarios must parse (a malformed shipped scenario fails here first).
  Registry reg;
  register_all_families(reg);
  for (const std::string& path : scenario_files()) {
    EXPECT_NO_THROW({
      const Scenario s = load_scenario(path, reg);
      EXPECT_FALSE(s.points.empty()) << path;
    }) << path;
  }
}

}  // namespace
}  // namespace fb
