// compare --merge / merge --stats: mean and spread of the reports' medians per point (and of the
// shares of ablation reports), checked against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.hpp"
#include "reports/report_stats.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;
const std::string kGolden = std::string(FUSEBENCH_SOURCE_DIR) + "/tests/reports/golden/";

TEST(ReportStats, SpreadIsMeanSampleSdMinMax) {
  const Spread s = spread_of({2, 4, 4, 4, 5, 5, 7, 9});  // mean 5, squares 32, sd sqrt(32/7)
  EXPECT_EQ(s.n, 8);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.sd, std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(spread_of({3}).sd, 0.0);
  EXPECT_EQ(spread_of({}).n, 0);
}

TEST(ReportStats, BenchMediansAcrossTwoGpuSets) {
  const Json base = load_report(kGolden + "bench_base.json"), head = load_report(kGolden + "bench_head.json");
  const MergeStats m = merge_statistics({{"a.json", base}, {"b.json", head}});
  ASSERT_EQ(m.json["times"].size(), 4u);
  // Case 1, chain/hot: medians 205.5 (base) and 185.5 (head): mean 195.5, sd 20 / sqrt 2.
  const Json& chain = m.json["times"][1];
  EXPECT_EQ(chain["variant"], "chain");
  EXPECT_DOUBLE_EQ(chain["median_us"]["mean"].get<double>(), 195.5);
  EXPECT_NEAR(chain["median_us"]["sd"].get<double>(), 20.0 / std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(chain["median_us"]["min"].get<double>(), 185.5);
  EXPECT_EQ(chain["per_report"], Json::array({205.5, 185.5}));
  EXPECT_NE(m.markdown.find("| 195.5 |"), std::string::npos) << m.markdown;
}

TEST(ReportStats, AblationSharesPerFusionAndPoint) {
  const Json base = load_report(kGolden + "ablation_base.json"), head = load_report(kGolden + "ablation_head.json");
  const MergeStats m = merge_statistics({{"a.json", base}, {"b.json", head}});
  // Grouped by fusion: F1 at its three points first.
  ASSERT_EQ(m.json["shares"].size(), 6u);
  EXPECT_EQ(m.json["shares"][0]["fusion"], "F1");
  EXPECT_EQ(m.json["shares"][2]["fusion"], "F1");
  EXPECT_EQ(m.json["shares"][3]["fusion"], "F6");
  const double a = base["points"][0]["fusions"][0]["share"].get<double>(), b = head["points"][0]["fusions"][0]["share"].get<double>();
  EXPECT_DOUBLE_EQ(m.json["shares"][0]["share"]["mean"].get<double>(), (a + b) / 2);
  EXPECT_NE(m.markdown.find("### Share of each fusion"), std::string::npos);
}

TEST(ReportStats, NeedsTwoComparableReports) {
  const Json base = load_report(kGolden + "bench_base.json");
  EXPECT_THROW(merge_statistics({{"a.json", base}}), InputError);
  EXPECT_THROW(merge_statistics({{"a.json", base}, {"b.json", load_report(kGolden + "ablation_base.json")}}), InputError);
}

}  // namespace
}  // namespace fb
