// Gemma RMSNorm -> fp8 (F1): the emulated fused producer equals the emulated chain (rmsnorm, then
// the fp8 quant of kernels/fp8_quant) bitwise on odd shapes and every option; both sit within the
// derived fp64 bounds; the canonical sum follows its documented order; the edge rows land exactly
// where the contract puts them; NaN reaches only its own row; a broken output is caught; the GPU
// (when present) equals the emulation bitwise.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/inputs.hpp"
#include "core/registry.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"
#include "kernels/common/canonical_sum.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8_edge_rows.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e8m0.hpp"
#include "reference/rmsnorm_fp8_ref.hpp"
#include "support/skip_without_gpu.hpp"

namespace fb {
namespace {

struct Inputs {
  std::vector<std::uint16_t> x, residual, weight;
};

struct Outputs {
  std::vector<std::uint8_t> q, scales;
  std::vector<std::uint16_t> residual_out, out;
};

std::vector<std::uint16_t> random_bf16(std::int64_t n, std::uint64_t seed, Distribution d = Distribution::normal) {
  HostTensor t({"v", DType::bf16, {{"N", n}}});
  fill_tensor(t, d, seed, 0);
  return std::vector<std::uint16_t>(t.data<std::uint16_t>(), t.data<std::uint16_t>() + n);
}

Inputs random_inputs(const RmsnormFp8Params& p, std::uint64_t seed) {
  return {random_bf16(p.rows * p.hidden, seed), random_bf16(p.rows * p.hidden, seed + 1),
          random_bf16(p.hidden, seed + 2)};
}

// Runs the fused or chain emulation into outputs filled with `poison` bytes.
Outputs run_emu(const RmsnormFp8Params& p, const Inputs& in, bool chain, std::uint8_t poison = 0xFF) {
  const std::int64_t mh = p.rows * p.hidden;
  Outputs o{std::vector<std::uint8_t>(mh, poison),
            std::vector<std::uint8_t>(p.quant().scale_count() * (p.scale_format == ScaleFormat::f32 ? 4 : 1), poison),
            std::vector<std::uint16_t>(p.residual ? mh : 0, static_cast<std::uint16_t>(poison * 0x101)),
            std::vector<std::uint16_t>(mh, static_cast<std::uint16_t>(poison * 0x101))};
  RmsnormFp8Buffers b{in.x.data(), p.residual ? in.residual.data() : nullptr, in.weight.data(),
                      p.residual ? o.residual_out.data() : nullptr, o.out.data(), o.q.data(), o.scales.data()};
  (chain ? rmsnorm_fp8_chain_emu : rmsnorm_fp8_fused_emu)(p, b);
  return o;
}

float scale_f32(const Outputs& o, std::int64_t i) {
  float s;
  std::memcpy(&s, o.scales.data() + 4 * i, 4);
  return s;
}

// A point of `name` with every axis at its default, then the given values.
Point point_of(const KernelCase& kc, const std::vector<std::pair<std::string, AxisValue>>& values) {
  Point p;
  for (const AxisSpec& a : kc.axes) {
    AxisValue v = a.default_value ? *a.default_value : AxisValue{std::int64_t{1}};
    for (const auto& [k, given] : values)
      if (k == a.name) v = given;
    p.set(a.name, v);
  }
  return p;
}

const KernelCase& find_case(const char* name) {
  static const Registry reg = [] {
    Registry r;
    register_all_families(r);
    return r;
  }();
  return *reg.find(name);
}

TEST(RmsnormFp8, FusedMatchesChainBitwiseOnOddShapesAndEveryOption) {
  int combos = 0;
  for (std::int64_t rows : {1, 5, 19, 99})
    for (std::int64_t hidden : {128, 384, 1000, 6144})
      for (auto g : {Fp8Granularity::per_token, Fp8Granularity::per_1x128}) {
        if (g == Fp8Granularity::per_1x128 && hidden % 128) continue;
        for (int option = 0; option < 8; ++option) {
          RmsnormFp8Params p;
          p.rows = rows;
          p.hidden = hidden;
          p.granularity = g;
          p.residual = option & 1;
          p.weight_offset = option & 2 ? 0.0f : 1.0f;
          p.write_out = option & 4;
          p.flavour = (option + rows) % 2 ? Fp8Flavour::e4m3fnuz : Fp8Flavour::e4m3fn;
          p.scale_format = (option / 2 + hidden) % 2 ? ScaleFormat::e8m0 : ScaleFormat::f32;
          p.layout = option % 3 == 0 ? ScaleLayout::k_major : ScaleLayout::row_major;
          const Inputs in = random_inputs(p, static_cast<std::uint64_t>(rows * 1000 + hidden + option));
          const Outputs fused = run_emu(p, in, false), chain = run_emu(p, in, true);
          const std::string where = ::testing::PrintToString(rows) + "x" + ::testing::PrintToString(hidden);
          ASSERT_EQ(fused.q, chain.q) << where;
          ASSERT_EQ(fused.scales, chain.scales) << where;
          ASSERT_EQ(fused.residual_out, chain.residual_out) << where;
          if (p.write_out) {
            ASSERT_EQ(fused.out, chain.out) << where;
          }
          ++combos;
        }
      }
  EXPECT_GT(combos, 150);
}

TEST(RmsnormFp8, FusedAndChainWriteEveryOutputElement) {
  RmsnormFp8Params p;
  p.rows = 19;
  p.hidden = 1000;  // not a multiple of 8: the element-wise path
  p.write_out = true;
  const Inputs in = random_inputs(p, 7);
  for (bool chain : {false, true}) {
    const Outputs a = run_emu(p, in, chain, 0xFF), b = run_emu(p, in, chain, 0x5A);
    EXPECT_EQ(a.q, b.q);
    EXPECT_EQ(a.scales, b.scales);
    EXPECT_EQ(a.residual_out, b.residual_out);
    EXPECT_EQ(a.out, b.out);
  }
}

// The canonical order, written out literally from its definition and compared with the host twin
// on terms whose sum depends on the order.
TEST(RmsnormFp8, CanonicalSumFollowsTheDocumentedOrder) {
  for (std::int64_t n : {1, 7, 8, 9, 2047, 2048, 2049, 6144, 10000}) {
    std::vector<float> terms(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) terms[i] = std::ldexp(1.0f + static_cast<float>(i % 13) / 16.0f, static_cast<int>(i % 41) - 20);
    std::vector<float> p(256, 0.0f);
    for (std::int64_t chunk = 0; chunk * 8 < n; ++chunk)
      for (std::int64_t i = chunk * 8; i < std::min(n, chunk * 8 + 8); ++i) p[chunk % 256] += terms[i];
    for (int h = 128; h >= 1; h /= 2)
      for (int j = 0; j < h; ++j) p[j] += p[j + h];
    const float twin = canonical_row_sum(n, [&](std::int64_t i) { return terms[i]; });
    EXPECT_EQ(float_bits(twin), float_bits(p[0])) << n;
  }
  // And the order matters: a plain left-to-right sum of the same terms differs.
  std::vector<float> t(6144);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = std::ldexp(1.0f + static_cast<float>(i % 7) / 8.0f, static_cast<int>(i % 37) - 18);
  float sequential = 0.0f;
  for (float v : t) sequential += v;
  EXPECT_NE(float_bits(sequential), float_bits(canonical_row_sum(6144, [&](std::int64_t i) { return t[i]; })));
}

TEST(RmsnormFp8, DerivedBoundsAreTightEnoughForOneBf16Ulp) {
  for (std::int64_t hidden : {128, 6144, 10240})
    for (bool residual : {false, true}) {
      const double e = rmsnorm_y_rel_error(hidden, residual, 1e-6);
      EXPECT_GT(e, 0.0);
      EXPECT_LT(e, std::ldexp(1.0, -9)) << hidden;
    }
}

TEST(RmsnormFp8, AllZeroRowTakesTheFloorScaleAndZeroBytes) {
  RmsnormFp8Params p;
  p.rows = 2;
  p.hidden = 256;
  Inputs in = random_inputs(p, 3);
  for (int i = 0; i < 256; ++i) {
    in.x[i] = 0;
    in.residual[i] = static_cast<std::uint16_t>(i % 2 ? 0x8000 : 0);  // -0 + +0 = +0
  }
  const Outputs o = run_emu(p, in, false);
  EXPECT_EQ(scale_f32(o, 0), bits_float(kAmaxFloorBits) * fp8_inv_max(Fp8Flavour::e4m3fn));
  // y = (0 * r) * (1 + w): a zero whose sign is that of 1 + w; e4m3fn keeps -0 (0x80).
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(o.q[i], std::signbit(1.0f + bf16_to_float(in.weight[i])) ? 0x80 : 0x00) << i;
  EXPECT_GT(scale_f32(o, 1), 1e-4f);
}

TEST(RmsnormFp8, EqualMagnitudeRowSaturatesEveryByteToMax) {
  for (auto f : {Fp8Flavour::e4m3fn, Fp8Flavour::e4m3fnuz}) {
    RmsnormFp8Params p;
    p.rows = 8;
    p.hidden = 384;
    p.flavour = f;
    p.granularity = Fp8Granularity::per_1x128;
    Inputs in = random_inputs(p, 5);
    apply_rmsnorm_edge_rows(in.x.data(), in.residual.data(), in.weight.data(), p.rows, p.hidden, p.weight_offset, f);
    const Outputs o = run_emu(p, in, false);
    const std::uint8_t max_code = f == Fp8Flavour::e4m3fn ? 0x7E : 0x7F;
    for (std::int64_t c = 0; c < p.hidden; ++c) ASSERT_EQ(o.q[6 * p.hidden + c], max_code | (c % 2 ? 0x80 : 0)) << c;
    // Row 1: one +-2^50 per group is its group's amax and lands on +-MAX; the rest is ~1e-14 -> 0.
    for (std::int64_t g = 0; g < 3; ++g) {
      EXPECT_EQ(o.q[p.hidden + g * 128 + 5], max_code | (g % 2 ? 0x80 : 0));
      EXPECT_EQ(o.q[p.hidden + g * 128 + 6] & 0x7F, 0);
    }
  }
}

TEST(RmsnormFp8, TieRowReachesTheEncoderAsExactTiesAndRoundsHalfToEven) {
  for (auto f : {Fp8Flavour::e4m3fn, Fp8Flavour::e4m3fnuz})
    for (auto sf : {ScaleFormat::f32, ScaleFormat::e8m0})
      for (bool residual : {false, true}) {
        RmsnormFp8Params p;
        p.rows = 3;
        p.hidden = 384;
        p.flavour = f;
        p.scale_format = sf;
        p.residual = residual;
        p.weight_offset = 0.0f;
        p.granularity = Fp8Granularity::per_1x128;
        p.write_out = true;
        Inputs in = random_inputs(p, 9);
        apply_rmsnorm_edge_rows(in.x.data(), in.residual.data(), in.weight.data(), p.rows, p.hidden, p.weight_offset, f);
        const Outputs o = run_emu(p, in, false);
        const std::vector<float> tie = rmsnorm_tie_group(f);
        // The ties the encoder sees (q domain, signs alternating) and the even neighbour each keeps.
        const float ties[] = {34, 38, 68, 76, 136, 152, 432};
        const float kept[] = {32, 40, 64, 80, 128, 160, 448};
        const int count = f == Fp8Flavour::e4m3fn ? 7 : 5;
        for (std::int64_t g = 0; g < 3; ++g) {
          const std::int64_t first = 2 * p.hidden + g * 128;  // row 2 is the tie row
          const float scale = sf == ScaleFormat::f32 ? scale_f32(o, 2 * 3 + g) : e8m0_to_float(o.scales[2 * 3 + g]);
          EXPECT_EQ(scale, 1.0f / 64.0f);
          EXPECT_EQ(fp8_to_float(o.q[first], f), fp8_max(f));  // the amax y = MAX/64
          for (int k = 0; k < count; ++k) {
            const float sign = k % 2 ? -1.0f : 1.0f;
            // y = s / 16 exactly, and y * 64 = 4 s is the exact tie the encoder sees.
            ASSERT_EQ(bf16_to_float(o.out[first + 1 + k]), tie[1 + k] / 16.0f) << k;
            ASSERT_EQ(4.0f * tie[1 + k], sign * ties[k]);
            EXPECT_EQ(fp8_to_float(o.q[first + 1 + k], f), sign * kept[k]) << ties[k];
          }
        }
      }
}

TEST(RmsnormFp8, NanReachesOnlyItsOwnRowsScaleAndFailsVerify) {
  RmsnormFp8Params p;
  p.rows = 4;
  p.hidden = 256;
  p.granularity = Fp8Granularity::per_1x128;
  Inputs in = random_inputs(p, 11);
  in.x[2 * 256 + 17] = 0x7FC0;  // row 2
  const Outputs o = run_emu(p, in, false);
  for (int s = 0; s < 8; ++s) EXPECT_EQ(std::isnan(scale_f32(o, s)), s / 2 == 2) << s;  // the whole row
  const CaseResult r = [] {
    Session cpu("cpu");
    const KernelCase& kc = find_case("rmsnorm_fp8/per_token");
    return verify_case(kc, point_of(kc, {{"M", std::int64_t{8}}, {"H", std::int64_t{384}}, {"dist", std::string("nan")}}),
                       VerifyOptions{}, cpu);
  }();
  EXPECT_EQ(r.outcome, Outcome::fail);
  EXPECT_NE(r.reason.find("NaN"), std::string::npos) << r.reason;
}

TEST(RmsnormFp8, FlippedFusedByteIsCaught) {
  Session cpu("cpu");
  const KernelCase& kc = find_case("rmsnorm_fp8/per_1x128");
  VerifyOptions o;
  o.fault = FaultInjection::flip_fused_element;
  const CaseResult r = verify_case(kc, point_of(kc, {{"M", std::int64_t{5}}, {"H", std::int64_t{384}}}), o, cpu);
  EXPECT_EQ(r.outcome, Outcome::fail);
  EXPECT_NE(r.reason.find("check/pair/fused~chain/bitwise"), std::string::npos) << r.reason;
}

TEST(RmsnormFp8, HiddenNotMultipleOf128IsRejectedForPer1x128) {
  const KernelCase& kc = find_case("rmsnorm_fp8/per_1x128");
  try {
    kc.make(point_of(kc, {{"M", std::int64_t{4}}, {"H", std::int64_t{200}}}));
    FAIL() << "H=200 accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "H=200 is not a multiple of the 1x128 group");
  }
  const KernelCase& token = find_case("rmsnorm_fp8/per_token");
  EXPECT_NO_THROW(token.make(point_of(token, {{"M", std::int64_t{4}}, {"H", std::int64_t{200}}})));
}

// Every case through the full verify runner on the CPU: chain bitwise, fp64 bounds, repeat, trust.
TEST(RmsnormFp8, EmulationPassesEveryCheckOnEdgeAndWideDistributions) {
  Session cpu("cpu");
  for (const char* name : {"rmsnorm_fp8/per_token", "rmsnorm_fp8/per_1x128"}) {
    const KernelCase& kc = find_case(name);
    for (const char* dist : {"edge", "outliers", "uniform"})
      for (const char* fp8 : {"e4m3fn", "e4m3fnuz"})
        for (const char* residual : {"yes", "no"}) {
          const Point pt = point_of(kc, {{"M", std::int64_t{16}}, {"H", std::int64_t{384}}, {"dist", std::string(dist)},
                                         {"fp8", std::string(fp8)}, {"residual", std::string(residual)},
                                         {"bf16_out", std::string("yes")}, {"scale_layout", std::string("k_major")}});
          const CaseResult r = verify_case(kc, pt, VerifyOptions{}, cpu);
          EXPECT_EQ(r.outcome, Outcome::pass) << name << " " << pt.text() << ": " << r.reason;
        }
  }
}

TEST(RmsnormFp8, GpuMatchesEmulationBitwise) {
  FB_SKIP_WITHOUT_GPU();
  Session gpu_session("gpu");
  for (const char* name : {"rmsnorm_fp8/per_token", "rmsnorm_fp8/per_1x128"}) {
    const KernelCase& kc = find_case(name);
    // 10240 columns: past the register cache (re-read path); 1000: the element-wise path.
    for (std::int64_t rows : {1, 19, 257})
      for (std::int64_t hidden : {384, 1000, 6144, 10240}) {
        if (std::string(name).ends_with("1x128") && hidden % 128) continue;
        for (const char* residual : {"yes", "no"}) {
          const Point pt = point_of(kc, {{"M", rows}, {"H", hidden}, {"residual", std::string(residual)},
                                         {"bf16_out", std::string("yes")}, {"dist", std::string("edge")}});
          const CaseResult r = verify_case(kc, pt, VerifyOptions{}, gpu_session);
          EXPECT_EQ(r.outcome, Outcome::pass) << name << " " << pt.text() << ": " << r.reason;
        }
      }
  }
}

}  // namespace
}  // namespace fb
