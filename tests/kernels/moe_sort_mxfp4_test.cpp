// MoE sort + MXFP4 quant with sorted scales (F5): the background note's worked example and address
// vectors; the scale rules and element roundings at their corners; the validator's rejections; the
// emulated fused paths (one launch, four launches, chain fallback) equal the emulated chain bitwise
// for every rule and rounding, at the 1024/1025 switch and at a lowered offset limit; routing corner
// cases against the fp64 reference sort; every byte of the compared region is written; the GPU
// (when present) equals the emulation bitwise.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/inputs.hpp"
#include "core/registry.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_inputs.hpp"
#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_math.hpp"
#include "reference/moe_sort_mxfp4_ref.hpp"

namespace fb {
namespace {

using EmuFn = void (*)(const MoeSortMxfp4Params&, const MoeSortMxfp4Buffers&);

struct Problem {
  MoeSortMxfp4Params p;
  std::vector<std::int32_t> ids, mask;
  std::vector<float> weights;
  std::vector<std::uint16_t> x;
};

struct Outputs {
  std::vector<std::int32_t> sorted_ids, expert_ids, num_valid;
  std::vector<float> sorted_weights;
  std::vector<std::uint16_t> moe_buf;
  std::vector<std::uint8_t> xq, scales;
};

MoeSortMxfp4Params params(std::int64_t T, std::int64_t E, std::int64_t k, std::int64_t K, std::int64_t B,
                          MoeStage stage = MoeStage::stage1) {
  MoeSortMxfp4Params p;
  p.tokens = T;
  p.experts = E;
  p.topk = k;
  p.cols = K;
  p.buf_cols = 64;
  p.block = B;
  p.stage = stage;
  return p;
}

Problem make_problem(const MoeSortMxfp4Params& p, MoeRouting routing, MoeMask mask, Distribution dist,
                     std::uint64_t seed) {
  Problem pr{p, std::vector<std::int32_t>(p.pairs()), {}, std::vector<float>(p.pairs()), {}};
  make_moe_routing(p, routing, seed, pr.ids.data(), pr.weights.data());
  HostTensor x({"x", DType::bf16, {{"rows", p.rows()}, {"K", p.cols}}});
  fill_tensor(x, dist, seed, 7);
  pr.x.assign(x.data<std::uint16_t>(), x.data<std::uint16_t>() + p.rows() * p.cols);
  if (dist == Distribution::edge) apply_mx_edge_rows(pr.x.data(), p.rows(), p.cols);
  if (mask != MoeMask::none) {
    pr.p.masked = true;
    pr.mask.resize(static_cast<std::size_t>(p.experts));
    make_moe_mask(p.experts, mask, pr.mask.data());
  }
  return pr;
}

// Runs one emulation on poisoned outputs and a garbage workspace (a GPU workspace is never cleared).
Outputs run(const Problem& pr, EmuFn fn, std::uint8_t poison = 0xFF) {
  const MoeSortMxfp4Params& p = pr.p;
  Outputs o;
  const auto fill = [poison](auto& v, std::int64_t n) {
    v.resize(static_cast<std::size_t>(n));
    std::memset(v.data(), poison, v.size() * sizeof(v[0]));
  };
  fill(o.sorted_ids, p.max_entries());
  fill(o.sorted_weights, p.max_entries());
  fill(o.expert_ids, p.max_blocks());
  fill(o.num_valid, 2);
  fill(o.moe_buf, p.tokens * p.buf_cols);
  fill(o.xq, p.rows() * p.cols / 2);
  fill(o.scales, p.scale_rows() * p.scale_cols_pad());
  std::vector<std::int32_t> counts(p.chunks() * p.experts, 0x5A5A5A5A), info(MoeExpertInfoLayout{p.experts}.words(), -7),
      pair_pos(p.pairs(), 12345);
  std::vector<std::uint8_t> row_scales(p.rows() * p.scale_cols(), 0xA5);
  const MoeSortMxfp4Buffers b{pr.ids.data(), pr.weights.data(), pr.x.data(), pr.p.masked ? pr.mask.data() : nullptr,
                              o.sorted_ids.data(), o.sorted_weights.data(), o.expert_ids.data(), o.num_valid.data(),
                              o.moe_buf.data(), o.xq.data(), o.scales.data(), counts.data(), info.data(),
                              pair_pos.data(), row_scales.data()};
  fn(p, b);
  return o;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b, std::int64_t n) {
  return a.size() >= static_cast<std::size_t>(n) && b.size() >= static_cast<std::size_t>(n) &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(n) * sizeof(T)) == 0;
}

// Raw bytes of every output over the compared region (the region of `want`).
void expect_equal_in_region(const MoeSortMxfp4Params& p, const Outputs& got, const Outputs& want, const std::string& what) {
  const std::int64_t valid = want.num_valid[0];
  EXPECT_TRUE(same_bytes(got.num_valid, want.num_valid, 2)) << what;
  EXPECT_TRUE(same_bytes(got.sorted_ids, want.sorted_ids, valid)) << what;
  EXPECT_TRUE(same_bytes(got.sorted_weights, want.sorted_weights, valid)) << what;
  EXPECT_TRUE(same_bytes(got.expert_ids, want.expert_ids, valid / p.block)) << what;
  EXPECT_TRUE(same_bytes(got.moe_buf, want.moe_buf, p.tokens * p.buf_cols)) << what;
  EXPECT_TRUE(same_bytes(got.xq, want.xq, p.rows() * p.cols / 2)) << what;
  EXPECT_TRUE(same_bytes(got.scales, want.scales, (valid + 31) / 32 * 32 * p.scale_cols_pad())) << what;
}

// The sort outputs against the straightforward fp64-side reference, exactly.
void expect_sort_matches_reference(const Problem& pr, const Outputs& o, const std::string& what) {
  const MoeSortMxfp4Params& p = pr.p;
  const MoeSortRefProblem rp{p.tokens, p.topk, p.experts, p.block, p.cols, p.buf_cols, p.stage == MoeStage::stage2,
                             p.rule, p.masked ? pr.mask.data() : nullptr};
  const MoeSortRef ref = moe_sort_ref(rp, pr.ids.data(), pr.weights.data());
  ASSERT_EQ(o.num_valid[0], ref.num_valid[0]) << what;
  EXPECT_EQ(o.num_valid[1], ref.num_valid[1]) << what;
  EXPECT_TRUE(same_bytes(o.sorted_ids, ref.sorted_token_ids, ref.num_valid[0])) << what;
  EXPECT_TRUE(same_bytes(o.sorted_weights, ref.sorted_weights, ref.num_valid[0])) << what;
  EXPECT_TRUE(same_bytes(o.expert_ids, ref.sorted_expert_ids, ref.num_valid[0] / p.block)) << what;
}

const EmuFn kAllPaths[] = {&moe_sort_mxfp4_chain_emu, &moe_sort_quant_emu, &moe_sort_quant_large_emu};
const char* const kPathNames[] = {"chain", "one launch", "four launches"};

// ---- the background note's worked example and vectors ----

TEST(MoeSortMxfp4Sort, WorkedExampleMatchesBackgroundNoteOnEveryPath) {
  // E=6, topk=3, B=4, T=5 (background section 1.3).
  Problem pr{params(5, 6, 3, 32, 4), {0, 3, 5, 2, 3, 5, 1, 3, 5, 1, 2, 3, 1, 3, 5}, {}, std::vector<float>(15), {}};
  for (int i = 0; i < 15; ++i) pr.weights[i] = 0.5f + i;
  pr.x.assign(5 * 32, 0x3F80);
  const std::int32_t S = (3 << 24) | 5;  // sentinel
  const std::vector<std::int32_t> ids{0,       S,       S,       S,                                       // e0
                                      2,       3,       4,       S,                                       // e1
                                      1,       1 << 24 | 3, S,   S,                                       // e2
                                      1 << 24, 1 << 24 | 1, 1 << 24 | 2, 2 << 24 | 3, 1 << 24 | 4, S, S, S,  // e3
                                      2 << 24, 2 << 24 | 1, 2 << 24 | 2, 2 << 24 | 4};                 // e5
  for (int path = 0; path < 3; ++path) {
    const Outputs o = run(pr, kAllPaths[path]);
    EXPECT_EQ(o.num_valid, (std::vector<std::int32_t>{24, 5})) << kPathNames[path];
    EXPECT_TRUE(same_bytes(o.expert_ids, std::vector<std::int32_t>{0, 1, 2, 3, 3, 5}, 6)) << kPathNames[path];
    EXPECT_TRUE(same_bytes(o.sorted_ids, ids, 24)) << kPathNames[path];
    EXPECT_EQ(o.sorted_weights[1], 0.0f);
    EXPECT_EQ(o.sorted_weights[5], pr.weights[3 * 3 + 0]) << "t3 in e1 reads slot 0";
    EXPECT_EQ(o.sorted_weights[15], pr.weights[3 * 3 + 2]) << "t3 in e3 reads slot 2";
  }
  pr.p.masked = true;
  pr.mask = {1, 0, 1, 1, 0, 1};
  for (int path = 0; path < 3; ++path) {
    const Outputs o = run(pr, kAllPaths[path]);
    EXPECT_EQ(o.num_valid, (std::vector<std::int32_t>{20, 5})) << kPathNames[path];
    EXPECT_TRUE(same_bytes(o.expert_ids, std::vector<std::int32_t>{0, 1, 2, 2, 3}, 5)) << kPathNames[path];
    expect_sort_matches_reference(pr, o, kPathNames[path]);
  }
}

TEST(MoeSortMxfp4Scales, AddressMatchesBackgroundVectors) {
  const std::int64_t pad = 24;
  const std::int64_t vectors[][3] = {{0, 0, 0},   {16, 0, 1}, {0, 4, 2},   {16, 4, 3},
                                     {1, 0, 4},   {0, 1, 64}, {0, 8, 256}, {32, 0, 32 * pad}};
  for (const auto& v : vectors) {
    EXPECT_EQ(mx_scale_addr(v[0], v[1], pad), v[2]) << v[0] << "," << v[1];
    EXPECT_EQ(mx_scale_addr_ref(v[0], v[1], pad), v[2]) << v[0] << "," << v[1];
  }
  // A bijection of each tile onto its 32 * pad bytes, and mx_scale_coord is its inverse.
  std::vector<int> hits(3 * 32 * pad, 0);
  for (std::int64_t p = 0; p < 96; ++p)
    for (std::int64_t y = 0; y < pad; ++y) {
      const std::int64_t a = mx_scale_addr(p, y, pad);
      ++hits[static_cast<std::size_t>(a)];
      const MxScaleCoord c = mx_scale_coord(a, pad);
      ASSERT_EQ(c.p, p);
      ASSERT_EQ(c.y, y);
    }
  for (int h : hits) ASSERT_EQ(h, 1);
}

TEST(MoeSortMxfp4Scales, ScaleRulesMatchBackgroundTable) {
  // amax -> (even, roundup, floor); the first two columns are the note's section 2.3 table.
  const struct {
    float amax;
    int even, roundup, floor;
  } rows[] = {{1.0f, 125, 125, 125}, {1.5f, 125, 125, 125}, {1.7f, 125, 126, 125},  {1.75f, 126, 126, 125},
              {3.0f, 126, 126, 126}, {6.0f, 127, 127, 127}, {448.0f, 134, 134, 133}, {0.0f, 0, 92, 0}};
  for (const auto& r : rows) {
    EXPECT_EQ(mx_scale_byte(float_bits(r.amax), MxScaleRule::even), r.even) << r.amax;
    EXPECT_EQ(mx_scale_byte(float_bits(r.amax), MxScaleRule::roundup), r.roundup) << r.amax;
    EXPECT_EQ(mx_scale_byte(float_bits(r.amax), MxScaleRule::floor), r.floor) << r.amax;
  }
}

TEST(MoeSortMxfp4Scales, CodecEqualsExactMxScaleForEveryBf16Amax) {
  // The fp64 reference's bound on scales is 0 powers of two: check it on every finite bf16 amax.
  for (MxScaleRule rule : {MxScaleRule::roundup, MxScaleRule::even, MxScaleRule::floor})
    for (std::uint32_t b = 0; b < 0x7F80u; ++b) {
      const float amax = bf16_to_float(static_cast<std::uint16_t>(b));
      ASSERT_EQ(e8m0_to_float(mx_scale_byte(float_bits(amax), rule)), mx_scale_ref(amax, rule))
          << "rule " << static_cast<int>(rule) << " amax bits 0x" << std::hex << b;
    }
  // roundup is exact for every fp32 amax (the derivation in moe_sort_mxfp4_ref.hpp): a stride through them.
  for (std::uint32_t u = 0; u < 0x7F800000u; u += 251) {
    const float amax = bits_float(u);
    ASSERT_EQ(e8m0_to_float(mx_scale_byte(u, MxScaleRule::roundup)), mx_scale_ref(amax, MxScaleRule::roundup)) << u;
  }
}

TEST(MoeSortMxfp4Quant, TiesRoundToEvenOrAwayByOption) {
  // Background section 2.4: R1 (rne) and R2 (half_away) differ only at exact ties.
  const struct {
    float a;
    std::uint8_t rne, away;
  } rows[] = {{0.25f, 0x0, 0x1}, {1.25f, 0x2, 0x3}, {2.5f, 0x4, 0x5}, {5.0f, 0x6, 0x7}, {0.75f, 0x2, 0x2},
              {1.75f, 0x4, 0x4}, {3.5f, 0x6, 0x6}, {5.5f, 0x7, 0x7},  {6.0f, 0x7, 0x7}, {-0.2f, 0x8, 0x8}};
  for (const auto& r : rows) {
    const std::uint32_t w = static_cast<std::uint32_t>(bf16_from_float(r.a)) << 16;  // element 1 of the pair
    EXPECT_EQ(mx_quantize_bf16x2(w, 1.0f, Fp4Rounding::rne), r.rne << 4) << r.a;
    EXPECT_EQ(mx_quantize_bf16x2(w, 1.0f, Fp4Rounding::half_away), r.away << 4) << r.a;
  }
}

// ---- validation ----

void expect_input_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "accepted; wanted an InputError containing '" << needle << "'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(MoeSortMxfp4Validator, RejectsIdsOutsideTheExpertRange) {
  const MoeSortMxfp4Params p = params(2, 8, 2, 32, 16);
  const std::vector<std::int32_t> too_big{0, 1, 8, 2}, negative{0, -1, 3, 2};
  expect_input_error([&] { moe_sort_validate_ids(p, too_big.data()); }, "topk_ids[1][0] = 8 is outside [0, E=8)");
  expect_input_error([&] { moe_sort_validate_ids(p, negative.data()); }, "topk_ids[0][1] = -1 is outside [0, E=8)");
}

TEST(MoeSortMxfp4Validator, RejectsAnExpertTwiceInOneRow) {
  const MoeSortMxfp4Params p = params(3, 8, 3, 32, 16);
  const std::vector<std::int32_t> dup{0, 1, 2, 4, 5, 4, 1, 2, 3};
  expect_input_error([&] { moe_sort_validate_ids(p, dup.data()); }, "topk_ids[1] holds expert 4 twice (slots 0 and 2)");
  const std::vector<std::int32_t> ok{0, 1, 2, 2, 1, 0, 7, 6, 5};  // the same experts in different rows
  EXPECT_NO_THROW(moe_sort_validate_ids(p, ok.data()));
}

TEST(MoeSortMxfp4Validator, RejectsImpossibleShapes) {
  expect_input_error([] { moe_sort_validate_shape(params(4, 512, 256, 32, 16)); }, "k=256 is outside [1, 255]");
  expect_input_error([] { moe_sort_validate_shape(params(1 << 24, 128, 4, 32, 16)); }, "T=16777216 is outside [1, 2^24)");
  expect_input_error([] { moe_sort_validate_shape(params((1 << 24) - 1, 1024, 200, 32, 128)); }, "reach 2^31");
  expect_input_error([] { moe_sort_validate_shape(params(4, 4, 8, 32, 16)); }, "need E >= k");
  expect_input_error([] { moe_sort_validate_shape(params(4, 8, 2, 100, 16)); }, "K=100 is not a positive multiple");
  EXPECT_NO_THROW(moe_sort_validate_shape(params((1 << 24) - 1, 128, 4, 6144, 32)));
}

TEST(MoeSortMxfp4Validator, AcceptsEveryGeneratedRouting) {
  for (MoeRouting r : {MoeRouting::uniform, MoeRouting::one_expert, MoeRouting::empty_experts,
                       MoeRouting::multiple_of_block})
    for (std::int64_t k : {1, 4, 8, 16}) {
      const Problem pr = make_problem(params(320, 16, k, 32, 32), r, MoeMask::none, Distribution::normal, 3);
      EXPECT_NO_THROW(moe_sort_validate_ids(pr.p, pr.ids.data())) << static_cast<int>(r) << " k=" << k;
    }
}

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

// ---- routing corner cases, every path against the reference sort ----

void check_every_path(const Problem& pr, const std::string& what) {
  const Outputs chain = run(pr, &moe_sort_mxfp4_chain_emu);
  expect_sort_matches_reference(pr, chain, what);
  for (int path = 1; path < 3; ++path)
    expect_equal_in_region(pr.p, run(pr, kAllPaths[path]), chain, what + " " + kPathNames[path]);
}

TEST(MoeSortMxfp4Routing, EmptyExpertsGetNoBlock) {
  const Problem pr = make_problem(params(200, 64, 4, 64, 16), MoeRouting::empty_experts, MoeMask::none,
                                  Distribution::normal, 2);
  check_every_path(pr, "empty_experts");
  const Outputs o = run(pr, &moe_sort_quant_emu);
  for (std::int64_t j = 0; j < o.num_valid[0] / 16; ++j) EXPECT_EQ(o.expert_ids[j] % 4, 0) << j;  // active: 4i
}

TEST(MoeSortMxfp4Routing, CountsThatAreMultiplesOfTheBlockNeedNoSentinel) {
  for (std::int64_t B : {16, 32, 64, 128}) {
    const Problem pr = make_problem(params(512, 128, 4, 64, B), MoeRouting::multiple_of_block, MoeMask::none,
                                    Distribution::normal, 4);
    check_every_path(pr, "multiple_of_block B=" + std::to_string(B));
    const Outputs o = run(pr, &moe_sort_quant_large_emu);
    EXPECT_EQ(o.num_valid[0], 512 * 4);
    for (std::int64_t i = 0; i < o.num_valid[0]; ++i) ASSERT_LT(moe_entry_token(o.sorted_ids[i]), 512) << i;
  }
}

TEST(MoeSortMxfp4Routing, OneExpertReceivesEveryTokenInOrder) {
  const Problem pr = make_problem(params(300, 32, 4, 64, 32), MoeRouting::one_expert, MoeMask::none,
                                  Distribution::normal, 6);
  check_every_path(pr, "one_expert");
}

TEST(MoeSortMxfp4Routing, MaskedExpertsVanishAndIdsBecomeLocal) {
  for (MoeMask m : {MoeMask::strided, MoeMask::slice})
    for (MoeStage stage : {MoeStage::stage1, MoeStage::stage2}) {
      const Problem pr = make_problem(params(150, 32, 4, 64, 16, stage), MoeRouting::uniform, m, Distribution::normal, 8);
      check_every_path(pr, "mask " + std::to_string(static_cast<int>(m)));
      const Outputs o = run(pr, &moe_sort_quant_emu);
      for (std::int64_t j = 0; j < o.num_valid[0] / 16; ++j) ASSERT_LT(o.expert_ids[j], 16) << j;  // 16 local experts
    }
}

TEST(MoeSortMxfp4Routing, AllExpertsMaskedWritesOnlyNumValidAndMoeBuf) {
  Problem pr = make_problem(params(40, 8, 2, 64, 16), MoeRouting::uniform, MoeMask::none, Distribution::normal, 1);
  pr.p.masked = true;
  pr.mask.assign(8, 0);
  for (int path = 0; path < 3; ++path) {
    const Outputs o = run(pr, kAllPaths[path]);
    EXPECT_EQ(o.num_valid, (std::vector<std::int32_t>{0, 40})) << kPathNames[path];
    for (std::uint16_t v : o.moe_buf) ASSERT_EQ(v, 0);
    for (std::uint8_t s : o.scales) ASSERT_EQ(s, 0xFF) << "no tile is written";
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
    // The fused role's workspace follows its path: pair positions (four launches) or per-row scales (chain).
    EXPECT_EQ(inst->workspace(Role::fused).back().name, T == 349525 ? "pair_pos" : "row_scales");
  }
  const auto small = kc.make(point(32768, 6144, "roundup", "rne", "normal"));
  EXPECT_EQ(small->skip_reason(Backend::cpu), "");
  EXPECT_LT(small->traffic(Role::fused).total(), small->traffic(Role::chain).total());
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
  try {
    gpu::open_device();
  } catch (const DeviceError& e) {
    GTEST_SKIP() << "no GPU: " << e.what();
  }
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
  for (const char* routing : {"one_expert", "empty_experts", "multiple_of_block"})
    for (const char* mask : {"none", "slice"}) points.emplace_back("moe_sort_mxfp4/stage1", point(2048, 256, "even", "half_away", "normal", routing, mask));
  for (const auto& [name, pt] : points) {
    const CaseResult r = verify_case(*reg.find(name), pt, VerifyOptions{}, gpu_session);
    EXPECT_EQ(r.outcome, Outcome::pass) << name << " " << pt.text() << ": " << r.reason;
  }
}

}  // namespace
}  // namespace fb
