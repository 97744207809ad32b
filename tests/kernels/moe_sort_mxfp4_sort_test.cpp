// MoE sort + MXFP4 quant (F5), the sort and its inputs: the contract's worked example on
// every path, the address and scale vectors, element ties, the validator's rejections, and routing
// corner cases against the fp64 reference sort.
#include "moe_sort_mxfp4_testing.hpp"

namespace fb {
namespace {

using namespace moe_testing;

// ---- the worked example and vectors of docs/numeric-contract.md#moe-sort and
// #mxfp4-activation-quant ----

TEST(MoeSortMxfp4Sort, WorkedExampleMatchesBackgroundNoteOnEveryPath) {
  // E=6, topk=3, B=4, T=5 (docs/numeric-contract.md#moe-sort).
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
  // amax -> (even, roundup, floor), the table of docs/numeric-contract.md#mxfp4-activation-quant.
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
  // rne and half_away differ only at exact ties (docs/numeric-contract.md#test-vectors).
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

}  // namespace
}  // namespace fb
