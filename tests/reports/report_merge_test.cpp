// fusebench merge: shard reports made from the fixtures (points dealt out p mod N, as --shard
// does) merge back into the original, in its order; anything that is not one complete run is
// refused naming the file and the field. (tests/cli/shard_merge_test.py proves it on real runs.)
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "reports/report_merge.hpp"
#include "reports/report_reader.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;
const std::string kGolden = std::string(FUSEBENCH_SOURCE_DIR) + "/tests/reports/golden/";

// Shard i of n of a report: its units p with p mod n = i, as a sharded run writes them.
Json shard_of(const Json& whole, const char* units, int i, int n) {
  Json s = whole;
  s[units] = Json::array();
  for (std::size_t p = 0; p < whole[units].size(); ++p)
    if (static_cast<int>(p % n) == i) s[units].push_back(whole[units][p]);
  s["methodology"]["shard"] = std::to_string(i) + "/" + std::to_string(n);
  s["methodology"]["points"] = s[units].size();
  s["run"]["started_at"] = "2026-12-01T1" + std::to_string(i) + ":00:00Z";
  s["run"]["argv"] = Json::array({"fusebench", "verify", "--shard", std::to_string(i) + "/" + std::to_string(n)});
  s["run"]["wall_s"] = 1.5 * (i + 1);
  return s;
}

std::string message_of(const std::vector<NamedReport>& shards) {
  try {
    merge_shard_reports(shards);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ReportMerge, AblationShardsMergeBackInTheUnshardedOrder) {
  const Json whole = load_report(kGolden + "ablation_base.json");  // 3 points
  const Json merged = merge_shard_reports({{"s1", shard_of(whole, "points", 1, 2)}, {"s0", shard_of(whole, "points", 0, 2)}});
  EXPECT_EQ(merged["points"], whole["points"]);
  EXPECT_EQ(merged["summary"]["points"], 3);
  EXPECT_EQ(merged["methodology"]["shard"], "0/1");
  EXPECT_EQ(merged["run"]["started_at"], "2026-12-01T10:00:00Z");
  EXPECT_DOUBLE_EQ(merged["run"]["wall_s"].get<double>(), 1.5 + 3.0);
  EXPECT_EQ(merged["run"]["argv"], Json::array({"fusebench", "verify"}));
  ASSERT_EQ(merged["run"]["shards"].size(), 2u);
  EXPECT_EQ(merged["run"]["shards"][1]["shard"], "1/2");
}

TEST(ReportMerge, CaseShardsMergeAndTheSummaryIsRecomputed) {
  Json whole = load_report(kGolden + "bench_base.json");
  whole["cases"][1]["outcome"] = "fail";
  whole["methodology"]["points_total"] = 2;
  const Json merged = merge_shard_reports({{"a", shard_of(whole, "cases", 0, 3)}, {"b", shard_of(whole, "cases", 1, 3)},
                                           {"c", shard_of(whole, "cases", 2, 3)}});  // shard 2 of 3 holds nothing
  EXPECT_EQ(merged["cases"], whole["cases"]);
  EXPECT_EQ(merged["summary"]["cases"], 2);
  EXPECT_EQ(merged["summary"]["pass"], 1);
  EXPECT_EQ(merged["summary"]["fail"], 1);
  EXPECT_EQ(merged["methodology"]["points"], 2);
}

TEST(ReportMerge, NotOneCompleteRunIsRefusedByName) {
  const Json whole = load_report(kGolden + "ablation_base.json");
  const Json s0 = shard_of(whole, "points", 0, 3), s1 = shard_of(whole, "points", 1, 3), s2 = shard_of(whole, "points", 2, 3);
  EXPECT_NE(message_of({{"a", s0}, {"b", s1}}).find("merge: shard 2/3 missing"), std::string::npos);
  EXPECT_NE(message_of({{"a", s0}, {"b", s1}, {"c", s1}}).find("c: $.methodology.shard: shard 1/3 is given twice (also b)"),
            std::string::npos);
  EXPECT_NE(message_of({{"a", s0}, {"b", shard_of(whole, "points", 1, 2)}}).find("b: $.methodology.shard: 1/2 is not one of 3"),
            std::string::npos);
  Json other_seed = s1;
  other_seed["methodology"]["seed"] = 2;
  EXPECT_NE(message_of({{"a", s0}, {"b", other_seed}, {"c", s2}}).find("b: $.methodology.seed: 2 differs from 1 in a"),
            std::string::npos)
      << message_of({{"a", s0}, {"b", other_seed}, {"c", s2}});
  Json other_build = s2;
  other_build["run"]["build"]["git_sha"] = "0123";
  EXPECT_NE(message_of({{"a", s0}, {"b", s1}, {"c", other_build}}).find("c: $.run.build.git_sha: "), std::string::npos);
  Json other_knob = s1;
  other_knob["run"]["knobs"] = {{"FUSEBENCH_GEMM_TILE_N", "192"}};
  EXPECT_NE(message_of({{"a", s0}, {"b", other_knob}, {"c", s2}}).find("b: $.run.knobs"), std::string::npos)
      << message_of({{"a", s0}, {"b", other_knob}, {"c", s2}});
  Json short_shard = s1;
  short_shard["points"] = Json::array();
  short_shard["methodology"]["points_total"] = 3;
  Json s0_total = s0, s2_total = s2;
  s0_total["methodology"]["points_total"] = 3;
  s2_total["methodology"]["points_total"] = 3;
  EXPECT_NE(message_of({{"a", s0_total}, {"b", short_shard}, {"c", s2_total}})
                .find("b: $.points: shard 1/3 holds 0 points, its share of the run's 3 is 1"),
            std::string::npos);
  Json s1_total = s1, other_total = s2_total;
  s1_total["methodology"]["points_total"] = 3;
  other_total["methodology"]["points_total"] = 4;
  EXPECT_NE(message_of({{"a", s0_total}, {"b", s1_total}, {"c", other_total}}).find("$.methodology.points_total: "),
            std::string::npos);
  Json other_backend = s2;
  other_backend["backend"]["name"] = "gpu";
  EXPECT_NE(message_of({{"a", s0}, {"b", s1}, {"c", other_backend}}).find("c: $.backend.name"), std::string::npos);
  Json bench = load_report(kGolden + "bench_base.json");
  EXPECT_NE(message_of({{"a", s0}, {"b", bench}}).find("$.report_kind"), std::string::npos);
}

}  // namespace
}  // namespace fb
