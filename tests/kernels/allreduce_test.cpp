// TP all-reduce: the emulated one_shot and two_shot are bitwise equal on every rank count and odd
// length; every rank ends with the same bytes; every variant sits within its derived fp64 bound
// and a wrong element or a NaN fails that check; the quantizers round as the contract says; the
// verify runner passes odd CPU points and fails a NaN; the GPU's simulated ranks equal the
// emulation bitwise; and, with two or more GPUs, real ranks equal the simulated ones (vendor:
// within its bound).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/inputs.hpp"
#include "core/registry.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"
#include "kernels/allreduce/allreduce.hpp"
#include "kernels/allreduce/allreduce_math.hpp"
#include "kernels/allreduce/allreduce_ranks.hpp"
#include "reference/allreduce_ref.hpp"
#include "reference/codecs/bf16.hpp"
#include "support/skip_without_gpu.hpp"

namespace fb {
namespace {

AllreduceParams params(int ranks, std::int64_t rows, std::int64_t hidden, AllreduceVariant v) {
  AllreduceParams p;
  p.ranks = ranks;
  p.rows = rows;
  p.hidden = hidden;
  p.variant = v;
  return p;
}

std::vector<std::uint16_t> inputs(const AllreduceParams& p, Distribution d, std::uint64_t seed) {
  HostTensor t({"x", DType::bf16, {{"R", p.ranks}, {"N", p.elements()}}});
  fill_tensor(t, d, seed, 0);
  return {t.data<std::uint16_t>(), t.data<std::uint16_t>() + p.ranks * p.elements()};
}

// Every rank's output of the emulation (poisoned with NaN first).
std::vector<std::uint16_t> emulate(const AllreduceParams& p, const std::vector<std::uint16_t>& x) {
  std::vector<std::uint16_t> out(x.size(), 0xFFFF);
  std::vector<std::uint8_t> wire(p.ranks * p.wire_bytes(), 0xA5), gather(wire);
  std::vector<float> ws(p.ranks * p.groups(), NAN), gs(ws);
  allreduce_emu(p, {x.data(), out.data(), wire.data(), ws.data(), gather.data(), gs.data()});
  return out;
}

bool derived_check_passes(const AllreduceParams& p, const std::vector<std::uint16_t>& x,
                          const std::vector<std::uint16_t>& out) {
  const std::vector<Fp64Check> c = allreduce_check_fp64(p, x.data(), out.data());
  EXPECT_EQ(c.size(), 1u);
  const Fp64Check& f = c.front();
  return f.stats.nan == 0 && f.stats.inf == 0 && f.stats.abs_max <= f.bound.limit;
}

constexpr AllreduceVariant kOurs[] = {AllreduceVariant::one_shot, AllreduceVariant::two_shot,
                                      AllreduceVariant::two_shot_fp8, AllreduceVariant::two_shot_int4};

TEST(Allreduce, OneShotEqualsTwoShotBitwiseOnOddLengths) {
  int points = 0;
  for (int ranks : {2, 3, 4, 5, 8})
    for (std::int64_t hidden : {1, 7, 31, 33, 200, 1003}) {
      const AllreduceParams one = params(ranks, 3, hidden, AllreduceVariant::one_shot);
      AllreduceParams two = one;
      two.variant = AllreduceVariant::two_shot;
      const std::vector<std::uint16_t> x = inputs(one, Distribution::outliers, 7 + hidden);
      const std::vector<std::uint16_t> a = emulate(one, x), b = emulate(two, x);
      ASSERT_EQ(a, b) << "ranks " << ranks << " hidden " << hidden;
      EXPECT_TRUE(derived_check_passes(one, x, a)) << "ranks " << ranks << " hidden " << hidden;
      ++points;
    }
  EXPECT_EQ(points, 30);
}

TEST(Allreduce, EveryRankEndsWithTheSameBytesAndWithinItsBound) {
  for (AllreduceVariant v : kOurs)
    for (int ranks : {2, 4, 8})
      for (Distribution d : {Distribution::normal, Distribution::uniform, Distribution::outliers}) {
        const AllreduceParams p = params(ranks, 5, 200, v);
        const std::vector<std::uint16_t> x = inputs(p, d, 11);
        const std::vector<std::uint16_t> out = emulate(p, x);
        const std::int64_t n = p.elements();
        for (int r = 1; r < ranks; ++r)
          ASSERT_TRUE(std::equal(out.begin(), out.begin() + n, out.begin() + r * n))
              << allreduce_variant_name(v) << " rank " << r;
        EXPECT_TRUE(derived_check_passes(p, x, out)) << allreduce_variant_name(v) << " ranks " << ranks;
      }
}

TEST(Allreduce, TheExactSumIsOneRoundingOfTheRankOrderSum) {
  // 1 + 2^-8 is a bf16 tie (1 and 1 + 2^-7 either side): RNE keeps 1. 2^60 - 2^60 + 1 is 1 in
  // rank order; a bf16 partial sum would lose nothing here either, but 2^60 + 1 - 2^60 would.
  const AllreduceParams p = params(3, 1, 2, AllreduceVariant::one_shot);
  const std::vector<std::uint16_t> x = {bf16_from_float(1.0f),   bf16_from_float(0x1.0p60f),
                                        bf16_from_float(0x1.0p-8f), bf16_from_float(-0x1.0p60f),
                                        bf16_from_float(0.0f),   bf16_from_float(1.0f)};
  const std::vector<std::uint16_t> out = emulate(p, x);
  EXPECT_EQ(bf16_to_float(out[0]), 1.0f);
  EXPECT_EQ(bf16_to_float(out[1]), 1.0f);
}

TEST(Allreduce, TheDerivedCheckFailsAWrongElementAndANan) {
  for (AllreduceVariant v : kOurs) {
    const AllreduceParams p = params(4, 2, 100, v);
    std::vector<std::uint16_t> x = inputs(p, Distribution::normal, 3);
    std::vector<std::uint16_t> out = emulate(p, x);
    ASSERT_TRUE(derived_check_passes(p, x, out));
    const std::vector<double> bound = allreduce_error_bounds(p, x.data());
    const std::vector<double> s = allreduce_ref_sums(p, x.data());
    // Rank 2's element 17, moved just past its bound.
    std::vector<std::uint16_t> wrong = out;
    wrong[2 * p.elements() + 17] = bf16_from_float(static_cast<float>(s[17] + 1.05 * bound[17] + 0x1.0p-7 * std::abs(s[17])));
    EXPECT_FALSE(derived_check_passes(p, x, wrong)) << allreduce_variant_name(v);
    x[1 * p.elements() + 40] = 0x7FC0;
    EXPECT_FALSE(derived_check_passes(p, x, emulate(p, x))) << allreduce_variant_name(v) << ": a NaN input";
  }
}

TEST(Allreduce, QuantizersRoundAsTheContractSays) {
  // int4: values that are whole multiples of the scale come back exactly; the last short group
  // writes the zero code in its missing slots.
  float v[kAllreduceGroup];
  for (int j = 0; j < 32; ++j) v[j] = static_cast<float>((j % 15) - 7) * 0.5f;  // amax 3.5, S = 0.5
  std::uint32_t words[8];
  float s = allreduce_quantize_group<AllreduceInt4Wire>(v, 32, words);
  EXPECT_EQ(s, 0.5f);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(allreduce_dequant<AllreduceInt4Wire>(words, s, j), v[j]) << j;
  s = allreduce_quantize_group<AllreduceInt4Wire>(v, 5, words);
  for (int j = 5; j < 32; ++j) EXPECT_EQ(allreduce_dequant<AllreduceInt4Wire>(words, s, j), 0.0f) << j;
  // int4 ties go to even: 2.5 steps -> 2, 3.5 -> 4 (v * inv exact here: S = 1).
  const float ties[3] = {7.0f, 2.5f, 3.5f};
  s = allreduce_quantize_group<AllreduceInt4Wire>(ties, 3, words);
  ASSERT_EQ(s, 1.0f);
  EXPECT_EQ(allreduce_dequant<AllreduceInt4Wire>(words, s, 1), 2.0f);
  EXPECT_EQ(allreduce_dequant<AllreduceInt4Wire>(words, s, 2), 4.0f);
  // fp8: the group's amax maps to 448 (or its neighbour) and dequantizes within half an e4m3 ulp.
  for (int j = 0; j < 32; ++j) v[j] = 0.001f * static_cast<float>(j * j - 200);
  s = allreduce_quantize_group<AllreduceFp8Wire>(v, 32, words);
  for (int j = 0; j < 32; ++j)
    EXPECT_LE(std::abs(allreduce_dequant<AllreduceFp8Wire>(words, s, j) - v[j]),
              0x1.0p-4 * std::abs(v[j]) * 1.0001 + 0x1.0p-10 * s)
        << j;
  // A NaN makes its group's scale NaN, so the NaN shows in every element of that group.
  v[3] = NAN;
  EXPECT_TRUE(std::isnan(allreduce_quantize_group<AllreduceFp8Wire>(v, 32, words)));
  EXPECT_TRUE(std::isnan(allreduce_quantize_group<AllreduceInt4Wire>(v, 32, words)));
}

TEST(Allreduce, SlicesCoverEveryElementOnce) {
  for (int ranks : {2, 3, 8})
    for (std::int64_t n : {1, 31, 32, 33, 255, 6144, 6145}) {
      const AllreduceParams p = params(ranks, 1, n, AllreduceVariant::two_shot);
      EXPECT_EQ(p.slice_begin(0), 0);
      EXPECT_EQ(p.slice_end(ranks - 1), n);
      for (int r = 0; r + 1 < ranks; ++r) {
        EXPECT_EQ(p.slice_end(r), p.slice_begin(r + 1));
        // A slice starts on a group boundary, or is empty at the end of a short buffer.
        EXPECT_TRUE(p.slice_begin(r) % kAllreduceGroup == 0 || p.slice_begin(r) == n) << ranks << " " << n;
      }
    }
}

Point point(int ranks, std::int64_t rows, std::int64_t hidden, const char* dist) {
  Point p;
  p.set("ranks", std::int64_t{ranks});
  p.set("M", rows);
  p.set("H", hidden);
  p.set("dist", std::string(dist));
  return p;
}

TEST(AllreduceVerify, OddPointsPassAndANanFailsOnTheCpu) {
  Registry reg;
  register_all_families(reg);
  Session cpu("cpu");
  const KernelCase& kc = *reg.find("allreduce/sum");
  for (const char* dist : {"normal", "edge", "outliers"}) {
    const CaseResult r = verify_case(kc, point(4, 3, 1003, dist), VerifyOptions{}, cpu);
    EXPECT_EQ(r.outcome, Outcome::pass) << dist << ": " << r.reason;
    ASSERT_EQ(r.skipped_variants.size(), 1u);
    EXPECT_EQ(r.skipped_variants[0].first, "vendor");
  }
  EXPECT_EQ(verify_case(kc, point(3, 2, 96, "nan"), VerifyOptions{}, cpu).outcome, Outcome::fail);
}

TEST(AllreduceGpu, SimulatedRanksEqualTheEmulationBitwise) {
  FB_SKIP_WITHOUT_GPU();
  Registry reg;
  register_all_families(reg);
  Session gpu("gpu");
  const KernelCase& kc = *reg.find("allreduce/sum");
  // Vector and scalar paths (H = 1003: rank buffers not 16-byte aligned), odd slices, edge rows.
  for (int ranks : {2, 4, 8})
    for (std::int64_t hidden : {1003, 6144})
      for (const char* dist : {"normal", "edge"}) {
        const CaseResult r = verify_case(kc, point(ranks, 3, hidden, dist), VerifyOptions{}, gpu);
        EXPECT_EQ(r.outcome, Outcome::pass) << ranks << " " << hidden << " " << dist << ": " << r.reason;
        int emu_checks = 0;
        for (const CheckResult& c : r.checks) emu_checks += c.id.starts_with("check/emu/") ? 1 : 0;
        EXPECT_EQ(emu_checks, 4);  // one per variant of ours
      }
}

TEST(AllreduceGpu, RealRanksEqualTheEmulationBitwise) {
#if FUSEBENCH_HAS_GPU
  const int devices = allreduce_device_count();
  if (devices < 2) GTEST_SKIP() << "real ranks need >= 2 GPUs; " << devices << " visible";
  const int ranks = std::min(devices, 4);
  AllreduceRankGroup group(ranks, 192 * 6144, AllreduceRankOptions{5.0});
  for (std::int64_t rows : {1, 3, 192})
    for (std::int64_t hidden : {1003, 6144}) {
      for (AllreduceVariant v : kOurs) {
        const AllreduceParams p = params(ranks, rows, hidden, v);
        const std::vector<std::uint16_t> x = inputs(p, Distribution::outliers, 5 + rows);
        const std::vector<std::uint16_t> want = emulate(p, x);
        EXPECT_EQ(group.run(p, x), want) << allreduce_variant_name(v) << " M=" << rows << " H=" << hidden;
        EXPECT_EQ(group.run(p, x), want) << allreduce_variant_name(v) << " repeat";
      }
      const AllreduceParams pv = params(ranks, rows, hidden, AllreduceVariant::vendor);
      if (!group.vendor_unavailable().empty()) continue;
      const std::vector<std::uint16_t> x = inputs(pv, Distribution::outliers, 9);
      EXPECT_TRUE(derived_check_passes(pv, x, group.run(pv, x))) << "vendor M=" << rows << " H=" << hidden;
    }
  // Graph replay keeps the result (the epochs advance inside the graph); its time is printed, not judged.
  for (AllreduceVariant v : {AllreduceVariant::one_shot, AllreduceVariant::two_shot, AllreduceVariant::vendor}) {
    if (v == AllreduceVariant::vendor && !group.vendor_unavailable().empty()) continue;
    const AllreduceParams p = params(ranks, 3, 6144, v);
    const std::vector<std::uint16_t> x = inputs(p, Distribution::normal, 21);
    const std::vector<std::uint16_t> first = group.run(p, x);
    const double us = group.time_graph_us(p, 8, 4);
    EXPECT_GT(us, 0.0) << allreduce_variant_name(v);
    std::printf("real ranks %d, M=3 H=6144, %s: %.2f us per call (graph replay)\n", ranks, allreduce_variant_name(v), us);
    if (v != AllreduceVariant::vendor) {
      EXPECT_EQ(group.run(p, x), first) << allreduce_variant_name(v) << " after replay";
    }
  }
  if (!group.vendor_unavailable().empty()) GTEST_SKIP() << "vendor variant: " << group.vendor_unavailable();
#else
  GTEST_SKIP() << "a CPU-only build has no real ranks";
#endif
}

TEST(AllreduceGpu, ARankThatNeverArrivesEndsTheRunWithADeviceError) {
#if FUSEBENCH_HAS_GPU
  const int devices = allreduce_device_count();
  if (devices < 2) GTEST_SKIP() << "real ranks need >= 2 GPUs; " << devices << " visible";
  AllreduceRankOptions o;
  o.timeout_s = 0.5;
  o.absent_rank = 1;
  AllreduceRankGroup group(2, 6144, o);
  const AllreduceParams p = params(2, 1, 6144, AllreduceVariant::two_shot);
  try {
    group.run(p, inputs(p, Distribution::normal, 1));
    ADD_FAILURE() << "rank 1 never launched, yet the run returned";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
#else
  GTEST_SKIP() << "a CPU-only build has no real ranks";
#endif
}

}  // namespace
}  // namespace fb
