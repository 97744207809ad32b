// MoE sort + MXFP4 quant (F5), fused against chain: the emulated fused paths (one launch, four
// launches, chain fallback) equal the emulated chain bitwise for every rule and rounding, at the
// 1024/1025 switch, at a lowered offset limit and for whole and partial 8-column groups (the
// word-wise gather); every byte of the compared region is written;
// the cases through the verify runner (edge rows, NaN, GPU-only skips, impossible points); and the
// GPU (when present) equals the emulation bitwise.
#include "moe_sort_mxfp4_testing.hpp"
#include "support/skip_without_gpu.hpp"

namespace fb {
namespace {

using namespace moe_testing;

// ---- fused against chain ----

TEST(MoeSortMxfp4Fused, MatchesChainBitwiseForEveryRuleAndRoundingOnBothFusedPaths) {
  int compared = 0;
  for (MoeStage stage : {MoeStage::stage1, MoeStage::stage2})
    for (std::int64_t T : {24, 1100}) {
      MoeSortMxfp4Params p = params(T, 32, 4, stage == MoeStage::stage1 ? 96 : 64, 16, stage);
      const MoeSortQuantPath want = T <= 1024 ? MoeSortQuantPath::one_launch : MoeSortQuantPath::four_launch;
      ASSERT_EQ(moe_sort_quant_path(p), want) << T;
      for (MxScaleRule rule : {MxScaleRule::roundup, MxScaleRule::even, MxScaleRule::floor})
        for (Fp4Rounding rounding : {Fp4Rounding::rne, Fp4Rounding::half_away}) {
          p.rule = rule;
          p.rounding = rounding;
          const Problem pr = make_problem(p, MoeRouting::uniform, MoeMask::none, Distribution::edge, T);
          const std::string what = "T=" + std::to_string(T) + " rule " + std::to_string(static_cast<int>(rule)) +
                                   " rounding " + std::to_string(static_cast<int>(rounding));
          expect_equal_in_region(p, run(pr, &moe_sort_mxfp4_fused_emu), run(pr, &moe_sort_mxfp4_chain_emu), what);
          ++compared;
        }
    }
  EXPECT_EQ(compared, 24);
}

TEST(MoeSortMxfp4Dispatch, OneLaunchUpTo1024TokensFourLaunchesAbove) {
  for (std::int64_t T : {1023, 1024, 1025}) {
    const MoeSortMxfp4Params p = params(T, 128, 4, 64, 32);
    EXPECT_EQ(moe_sort_quant_path(p), T <= 1024 ? MoeSortQuantPath::one_launch : MoeSortQuantPath::four_launch);
    const Problem pr = make_problem(p, MoeRouting::uniform, MoeMask::none, Distribution::normal, 5);
    const Outputs chain = run(pr, &moe_sort_mxfp4_chain_emu);
    expect_equal_in_region(p, run(pr, &moe_sort_mxfp4_fused_emu), chain, "T=" + std::to_string(T));
    expect_sort_matches_reference(pr, chain, "T=" + std::to_string(T));
  }
  // E = 256 at 1024 tokens still fits the one-launch table; E = 512 does not (four launches).
  EXPECT_EQ(moe_sort_quant_path(params(1024, 256, 8, 3072, 32)), MoeSortQuantPath::one_launch);
  EXPECT_EQ(moe_sort_quant_path(params(1024, 512, 8, 3072, 32)), MoeSortQuantPath::four_launch);
}

TEST(MoeSortMxfp4Dispatch, ChainWhereThirtyTwoBitOffsetsWouldReach2Pow31) {
  // The real limit at M3.1 shapes (T*K = 2,147,481,600 < 2^31 <= 2,147,487,744).
  MoeSortMxfp4Params m31 = params(349525, 128, 4, 6144, 32);
  m31.buf_cols = 6144;
  EXPECT_EQ(moe_sort_quant_path(m31), MoeSortQuantPath::four_launch);
  m31.tokens = 349526;
  EXPECT_EQ(moe_sort_quant_path(m31), MoeSortQuantPath::chain);
  // A lowered limit reaches the same switch on a CPU-sized problem, and the fallback is bitwise the chain.
  MoeSortMxfp4Params p = params(1100, 16, 4, 64, 16);
  const Problem base = make_problem(p, MoeRouting::uniform, MoeMask::none, Distribution::edge, 9);
  const Outputs chain = run(base, &moe_sort_mxfp4_chain_emu);
  for (std::int64_t limit : {1100 * 64, 1100 * 64 + 1}) {
    Problem pr = base;
    pr.p.offset_limit = limit;
    EXPECT_EQ(moe_sort_quant_path(pr.p), limit == 1100 * 64 ? MoeSortQuantPath::chain : MoeSortQuantPath::four_launch);
    expect_equal_in_region(pr.p, run(pr, &moe_sort_mxfp4_fused_emu), chain, "limit " + std::to_string(limit));
  }
  // moe_buf counts too: T*D past the limit also takes the chain.
  Problem wide = base;
  wide.p.offset_limit = 1100 * 64 + 1;
  wide.p.buf_cols = 128;
  EXPECT_EQ(moe_sort_quant_path(wide.p), MoeSortQuantPath::chain);
}

TEST(MoeSortMxfp4Fused, FourLaunchesMatchChainForWholeAndPartialColumnGroups) {
  // K/32 = 3, 8, 9, 16: the gather's byte path (pad columns in the last group) and its 8-byte path.
  for (MoeStage stage : {MoeStage::stage1, MoeStage::stage2})
    for (std::int64_t K : {96, 256, 288, 512})
      for (MoeMask mask : {MoeMask::none, MoeMask::slice}) {
        const Problem pr = make_problem(params(1030, 16, 3, K, 32, stage), MoeRouting::uniform, mask,
                                        Distribution::edge, K);
        ASSERT_EQ(moe_sort_quant_path(pr.p), MoeSortQuantPath::four_launch);
        const std::string what = "stage " + std::to_string(static_cast<int>(stage)) + " K=" + std::to_string(K) +
                                 " mask " + std::to_string(static_cast<int>(mask));
        const Outputs chain = run(pr, &moe_sort_mxfp4_chain_emu);
        expect_equal_in_region(pr.p, run(pr, &moe_sort_quant_large_emu, 0x5A), chain, what);
        expect_equal_in_region(pr.p, run(pr, &moe_sort_quant_large_emu, 0xFF), chain, what);
      }
}

TEST(MoeSortMxfp4Fused, GatherWordsHoldTheBytesOfTheSwizzleFormula) {
  // Word c of lane i in a 256-byte slot: byte b is (row i + 16 (b % 2), column c + 4 (b / 2)).
  const std::uint64_t lo = 0x0706050403020100ull, hi = 0x1716151413121110ull;  // byte j = column j (+ 0x10: row p+16)
  for (int c = 0; c < 4; ++c) {
    const std::uint32_t w = mx_scale_word(lo, hi, c);
    for (int byte = 0; byte < 4; ++byte) {
      const MxScaleCoord at = mx_scale_coord(c * 64 + byte, 8);  // lane 0 of tile 0, group 0
      EXPECT_EQ((w >> (8 * byte)) & 0xFFu, static_cast<std::uint32_t>(at.y + 0x10 * (at.p / 16))) << c << " " << byte;
      EXPECT_EQ(at.p % 16, 0);
    }
  }
}

TEST(MoeSortMxfp4Fused, WritesEveryByteOfTheComparedRegion) {
  // Two runs under different poison agree on every byte of the region: nothing there was left unwritten.
  for (int path = 0; path < 3; ++path)
    for (std::int64_t B : {16, 32}) {
      const Problem pr = make_problem(params(77, 24, 3, 288, B), MoeRouting::uniform, MoeMask::slice,
                                      Distribution::normal, 12);
      expect_equal_in_region(pr.p, run(pr, kAllPaths[path], 0x5A), run(pr, kAllPaths[path], 0xFF), kPathNames[path]);
    }
}

// ---- through the case and the verify runner ----

Point point(std::int64_t T, std::int64_t K, const char* rule, const char* rounding, const char* dist,
            const char* routing = "uniform", const char* mask = "none", std::int64_t E = 128) {
  Point pt;
  pt.set("T", T);
  pt.set("E", E);
  pt.set("k", std::int64_t{4});
  pt.set("K", K);
  pt.set("D", std::int64_t{0});
  pt.set("B", std::int64_t{32});
  pt.set("scale_rule", std::string(rule));
  pt.set("fp4_rounding", std::string(rounding));
  pt.set("routing", std::string(routing));
  pt.set("mask", std::string(mask));
  pt.set("dist", std::string(dist));
  return pt;
}

TEST(MoeSortMxfp4Verify, EdgeRowsPassEveryCheckOnTheCpu) {
  Registry reg;
  register_all_families(reg);
  Session cpu("cpu");
  for (const char* name : {"moe_sort_mxfp4/stage1", "moe_sort_mxfp4/stage2"})
    for (const char* rule : {"roundup", "even", "floor"})
      for (const char* rounding : {"rne", "half_away"}) {
        const Point pt = point(19, 256, rule, rounding, "edge", "uniform", "strided", 16);
        const CaseResult r = verify_case(*reg.find(name), pt, VerifyOptions{}, cpu);
        EXPECT_EQ(r.outcome, Outcome::pass) << name << " " << pt.text() << ": " << r.reason;
      }
}

TEST(MoeSortMxfp4Verify, NanInputIsReportedNeverPassed) {
  Registry reg;
  register_all_families(reg);
  Session cpu("cpu");
  const CaseResult r = verify_case(*reg.find("moe_sort_mxfp4/stage1"), point(8, 64, "roundup", "rne", "nan"),
                                   VerifyOptions{}, cpu);
  EXPECT_EQ(r.outcome, Outcome::fail) << r.reason;
}

TEST(MoeSortMxfp4Cases, GpuOnlyPointsSkipOnTheCpuWithAReason) {
  Registry reg;
  register_all_families(reg);
  const KernelCase& kc = *reg.find("moe_sort_mxfp4/stage1");
  for (std::int64_t T : {349525, 349526}) {
    const auto inst = kc.make(point(T, 6144, "roundup", "rne", "normal"));
    EXPECT_NE(inst->skip_reason(Backend::cpu).find("GPU only"), std::string::npos);
    EXPECT_EQ(inst->skip_reason(Backend::gpu), "");
    // Four launches and the chain fallback both keep per-row scales in the workspace.
    EXPECT_EQ(inst->workspace(kFused).back().name, "row_scales");
  }
  // Four launches move the chain's bytes (per-row scales written and gathered back) in one launch
  // fewer; the one-launch path skips the per-row scales and the sorted-id re-read.
  const auto large = kc.make(point(32768, 6144, "roundup", "rne", "normal"));
  EXPECT_EQ(large->skip_reason(Backend::cpu), "");
  EXPECT_EQ(large->work(kFused).bytes(), large->work(kChain).bytes());
  const auto small = kc.make(point(1024, 6144, "roundup", "rne", "normal"));
  EXPECT_TRUE(small->workspace(kFused).empty());
  EXPECT_LT(small->work(kFused).bytes(), small->work(kChain).bytes());
}

TEST(MoeSortMxfp4Cases, ImpossiblePointIsRejectedWithAReason) {
  Registry reg;
  register_all_families(reg);
  const KernelCase& kc = *reg.find("moe_sort_mxfp4/stage1");
  expect_input_error([&] { kc.make(point(8, 100, "roundup", "rne", "normal")); }, "K=100 is not a positive multiple");
  Point bad_block = point(8, 64, "roundup", "rne", "normal");
  bad_block.set("B", std::int64_t{24});
  expect_input_error([&] { kc.make(bad_block); }, "B=24 is not one of the GEMM tiles");
  expect_input_error([&] { kc.make(point(30, 64, "roundup", "rne", "normal", "multiple_of_block")); },
                     "needs T a multiple of B");
}

// ---- GPU ----

TEST(MoeSortMxfp4Gpu, MatchesEmulationBitwise) {
  FB_SKIP_WITHOUT_GPU();
  Registry reg;
  register_all_families(reg);
  Session gpu_session("gpu");
  std::vector<std::pair<const char*, Point>> points;
  for (std::int64_t T : {1, 24, 1024, 1025, 4096}) points.emplace_back("moe_sort_mxfp4/stage1", point(T, 6144, "roundup", "rne", "edge"));
  for (const char* rule : {"roundup", "even", "floor"})
    for (const char* rounding : {"rne", "half_away"}) {
      points.emplace_back("moe_sort_mxfp4/stage1", point(24, 6144, rule, rounding, "edge"));
      points.emplace_back("moe_sort_mxfp4/stage2", point(1100, 768, rule, rounding, "edge"));
    }
  // Four launches with K/32 not a multiple of 8 (the gather's byte path and pad columns).
  for (std::int64_t K : {96, 288}) points.emplace_back("moe_sort_mxfp4/stage1", point(1100, K, "even", "rne", "edge", "uniform", "slice", 16));
  for (const char* routing : {"one_expert", "empty_experts", "multiple_of_block"})
    for (const char* mask : {"none", "slice"}) points.emplace_back("moe_sort_mxfp4/stage1", point(2048, 256, "even", "half_away", "normal", routing, mask));
  for (const auto& [name, pt] : points) {
    const CaseResult r = verify_case(*reg.find(name), pt, VerifyOptions{}, gpu_session);
    EXPECT_EQ(r.outcome, Outcome::pass) << name << " " << pt.text() << ": " << r.reason;
  }
}

}  // namespace
}  // namespace fb
