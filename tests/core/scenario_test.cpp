// Scenario parsing: sweeps expand to the cartesian product, defaults apply in order, and every bad
// input is rejected naming the file, the key and why.
#include <gtest/gtest.h>

#include <chrono>

#include <fmt/format.h>

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
            "s.json: extra: unknown key (known: fusebench_scenario, name, description, model, workloads, defaults, cases, ablation)");
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

// Hostile inputs (issue 13): each an InputError naming the limit, quickly, never a crash.
std::string scenario_with(const std::string& extra, const std::string& sweep = R"({"N": 2})") {
  return R"({"fusebench_scenario": 1, "name": "t")" + extra + R"(, "cases": {"test/doubling": [)" + sweep + "]}}";
}

TEST(Scenario, RejectsDuplicateKeysWithTheirPath) {
  EXPECT_EQ(error_of(scenario_with("", R"({"N": 2, "N": 4})")),
            "s.json: cases.test/doubling.N: duplicate key (JSON objects take each key once)");
  EXPECT_NE(error_of(scenario_with(R"(, "name": "u")")).find("s.json: name: duplicate key"), std::string::npos);
}

TEST(Scenario, RejectsDeepNestingAtParseTime) {
  const int depth = 100000;  // deep enough to overflow the stack of any recursive reader
  const std::string deep_model = std::string(R"(, "model": )") + std::string(depth, '[') + std::string(depth, ']');
  EXPECT_NE(error_of(scenario_with(deep_model)).find("nested deeper than 64 levels"), std::string::npos);
  const std::string deep_value = R"({"N": )" + std::string(depth, '[') + "2" + std::string(depth, ']') + "}";
  EXPECT_NE(error_of(scenario_with("", deep_value)).find("nested deeper than 64 levels"), std::string::npos);
}

TEST(Scenario, HoldsModelAndWorkloadsToNotes) {
  EXPECT_NO_THROW(parse_scenario(scenario_with(R"(, "model": {"hidden": 6144, "shape": [1536, 6144], "a": {"b": {"c": 1}}})"),
                                 "s.json", test_registry()));
  EXPECT_EQ(error_of(scenario_with(R"(, "model": {"a": {"b": {"c": {"d": {"e": 1}}}}})")),
            "s.json: model.a.b.c.d: nested deeper than 4 levels (model and workloads are notes)");
  EXPECT_NE(error_of(scenario_with(R"(, "workloads": {"s": ")" + std::string(5000, 'x') + R"("})"))
                .find("s.json: workloads.s: a string longer than 4096 bytes"),
            std::string::npos);
  EXPECT_EQ(error_of(scenario_with(R"(, "model": [1])")), "s.json: model: must be an object");
}

TEST(Scenario, ErrorsQuoteAShortExcerpt) {
  const std::string long_value = R"({"N": ")" + std::string(100000, 'x') + R"("})";
  const std::string e = error_of(scenario_with("", long_value));
  EXPECT_LT(e.size(), 200u) << e;
  const std::string long_key = R"({")" + std::string(100000, 'k') + R"(": 1})";
  EXPECT_LT(error_of(scenario_with("", long_key)).size(), 300u);
}

TEST(Scenario, RejectsHugeIntegersAndSweeps) {
  EXPECT_EQ(error_of(scenario_with("", R"({"N": 18446744073709551615})")),
            "s.json: cases.test/doubling[0].N: axis N takes an integer no larger than 1048576, got 18446744073709551615");
  std::string values;
  for (int i = 1; i <= 100001; ++i) values += (i > 1 ? "," : "") + std::to_string(2 * i);
  EXPECT_NE(error_of(scenario_with("", R"({"N": [)" + values + "]}")).find("100001 values, more than the 100000 points"),
            std::string::npos);
}

TEST(Scenario, ManyKeysAndLongSweepsParseInLinearTime) {
  std::string keys;
  for (int i = 0; i < 100000; ++i) keys += (i ? "," : "") + fmt::format(R"("k{}": {})", i, i);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(error_of(scenario_with("", "{" + keys + "}")).find("unknown axis"), std::string::npos);
  std::string values;
  for (int i = 1; i <= 20000; ++i) values += (i > 1 ? "," : "") + std::to_string(2 * (i % 500 + 1));
  const Scenario s = parse_scenario(scenario_with("", R"({"N": [)" + values + "]}"), "s.json", test_registry());
  EXPECT_EQ(s.points.size(), 500u);  // duplicates dropped
  // Quadratic parsing took 20 s for the keys alone; linear takes well under a second.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST(Scenario, WhereRejectsAnAxisGivenTwice) {
  EXPECT_THROW(parse_where("M=3,M=4"), InputError);
  EXPECT_EQ(parse_where("M=3|4").at("M"), "3|4");
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
