// SwiGLU -> fp8 (F2): the emulated fused producer equals the emulated chain (swiglu, then the fp8
// quant of kernels/fp8_quant) bitwise on odd shapes and every option; both sit within the derived
// fp64 bounds; the clamps and the sigmoid's fp32 corners behave as the contract says; the edge rows
// land exactly where the contract puts them; NaN reaches only its own row; a broken output is
// caught; the GPU (when present) equals the emulation bitwise.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/inputs.hpp"
#include "core/registry.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_edge_rows.hpp"
#include "kernels/swiglu_fp8/swiglu_fp8_math.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e8m0.hpp"
#include "reference/swiglu_fp8_ref.hpp"
#include "support/skip_without_gpu.hpp"

namespace fb {
namespace {

struct Outputs {
  std::vector<std::uint8_t> q, scales;
  std::vector<std::uint16_t> out;
};

std::vector<std::uint16_t> random_bf16(std::int64_t n, std::uint64_t seed, Distribution d = Distribution::normal) {
  HostTensor t({"v", DType::bf16, {{"N", n}}});
  fill_tensor(t, d, seed, 0);
  return std::vector<std::uint16_t>(t.data<std::uint16_t>(), t.data<std::uint16_t>() + n);
}

// Runs the fused or chain emulation into outputs filled with `poison` bytes.
Outputs run_emu(const SwigluFp8Params& p, const std::vector<std::uint16_t>& gate_up, bool chain,
                std::uint8_t poison = 0xFF) {
  const std::int64_t td = p.rows * p.d;
  Outputs o{std::vector<std::uint8_t>(td, poison),
            std::vector<std::uint8_t>(p.quant().scale_count() * (p.scale_format == ScaleFormat::f32 ? 4 : 1), poison),
            std::vector<std::uint16_t>(td, static_cast<std::uint16_t>(poison * 0x101))};
  SwigluFp8Buffers b{gate_up.data(), o.out.data(), o.q.data(), o.scales.data()};
  (chain ? swiglu_fp8_chain_emu : swiglu_fp8_fused_emu)(p, b);
  return o;
}

float scale_f32(const Outputs& o, std::int64_t i) {
  float s;
  std::memcpy(&s, o.scales.data() + 4 * i, 4);
  return s;
}

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

float oai(float gate, float up) { return swiglu_oai_value(gate, up); }

TEST(SwigluFp8, FusedMatchesChainBitwiseOnOddShapesAndEveryOption) {
  int combos = 0;
  for (std::int64_t rows : {1, 5, 19, 99})
    for (std::int64_t d : {128, 200, 768, 3072})
      for (auto g : {Fp8Granularity::per_token, Fp8Granularity::per_1x128}) {
        if (g == Fp8Granularity::per_1x128 && d % 128) continue;
        for (int option = 0; option < 8; ++option) {
          SwigluFp8Params p;
          p.rows = rows;
          p.d = d;
          p.granularity = g;
          p.activation = option & 1 ? SwigluActivation::silu : SwigluActivation::swiglu_oai;
          p.write_out = option & 2;
          p.flavour = option & 4 ? Fp8Flavour::e4m3fnuz : Fp8Flavour::e4m3fn;
          p.scale_format = (option / 2 + rows) % 2 ? ScaleFormat::e8m0 : ScaleFormat::f32;
          p.layout = option % 3 == 0 ? ScaleLayout::k_major : ScaleLayout::row_major;
          const auto x = random_bf16(rows * 2 * d, static_cast<std::uint64_t>(rows * 1000 + d + option),
                                     option % 3 == 1 ? Distribution::outliers : Distribution::normal);
          const Outputs fused = run_emu(p, x, false), chain = run_emu(p, x, true);
          const std::string where = ::testing::PrintToString(rows) + "x" + ::testing::PrintToString(d);
          ASSERT_EQ(fused.q, chain.q) << where;
          ASSERT_EQ(fused.scales, chain.scales) << where;
          if (p.write_out) {
            ASSERT_EQ(fused.out, chain.out) << where;
          }
          ++combos;
        }
      }
  EXPECT_GT(combos, 150);
}

TEST(SwigluFp8, FusedAndChainWriteEveryOutputElement) {
  SwigluFp8Params p;
  p.rows = 19;
  p.d = 200;  // not a multiple of 8: the element-wise path
  p.write_out = true;
  const auto x = random_bf16(p.rows * 2 * p.d, 7);
  for (bool chain : {false, true}) {
    const Outputs a = run_emu(p, x, chain, 0xFF), b = run_emu(p, x, chain, 0x5A);
    EXPECT_EQ(a.q, b.q);
    EXPECT_EQ(a.scales, b.scales);
    EXPECT_EQ(a.out, b.out);
  }
}

TEST(SwigluFp8, OaiClampsGateAtSevenAndUpAtPlusMinusSeven) {
  for (float up : {-3.0f, 0.5f, 2.0f}) {
    const float at = oai(7.0f, up);
    for (float past : {7.0625f, 8.0f, 100.0f, 1e4f}) EXPECT_EQ(float_bits(oai(past, up)), float_bits(at)) << past;
    EXPECT_NE(float_bits(oai(6.9375f, up)), float_bits(at));  // just below the clamp is not clamped
  }
  for (float gate : {-2.0f, 0.5f, 7.0f}) {
    for (float past : {7.0625f, 7.5f, 100.0f}) {
      EXPECT_EQ(float_bits(oai(gate, past)), float_bits(oai(gate, 7.0f))) << past;
      EXPECT_EQ(float_bits(oai(gate, -past)), float_bits(oai(gate, -7.0f))) << past;
    }
  }
  // The gate has no lower clamp: a very negative gate goes through the sigmoid.
  EXPECT_NE(float_bits(oai(-8.0f, 1.0f)), float_bits(oai(-7.0f, 1.0f)));
  // Clamp at 7: out = 7 * sigmoid(11.914) * 8, with sigmoid from the project exp.
  EXPECT_EQ(float_bits(oai(7.0f, 7.0f)), float_bits((7.0f * exact_sigmoid(1.702f * 7.0f)) * 8.0f));
}

// swiglu_oai uses the sigmoid variant for z <= 86 (z <= 11.92 there): the same bits as
// exact_sigmoid for every non-NaN bf16 gate (a NaN gate gives +0 there and NaN out through g), and
// so the same activation, also in the kernels' two-step form.
TEST(SwigluFp8, OaiSigmoidVariantEqualsExactSigmoidOnEveryBf16Gate) {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const float g = swiglu_oai_gate(bf16_to_float(static_cast<std::uint16_t>(b)));
    const float z = kSwigluOaiAlpha * g;
    if (g != g)
      ASSERT_EQ(float_bits(exact_sigmoid_z_at_most_86(z)), 0u) << std::hex << b;
    else
      ASSERT_EQ(float_bits(exact_sigmoid_z_at_most_86(z)), float_bits(exact_sigmoid(z))) << std::hex << b;
    for (float up : {-8.0f, -1.0f, 0.0f, 0.375f, 7.0f}) {
      const float got = oai(bits_float(b << 16), up), want = (g * exact_sigmoid(z)) * (swiglu_oai_up(up) + 1.0f);
      // The kernels' two-step form (all denominators of a chunk, then the divides).
      const float u = swiglu_oai_up(up);
      const float two_step = swiglu_oai_from_denominator(g, u, swiglu_oai_denominator(g));
      if (g != g) {  // with two NaN operands the host's NaN bits follow the compiler's operand order
        ASSERT_TRUE(got != got) << std::hex << b;
        ASSERT_TRUE(two_step != two_step) << std::hex << b;
      } else {
        ASSERT_EQ(float_bits(got), float_bits(want)) << std::hex << b;
        ASSERT_EQ(float_bits(two_step), float_bits(got)) << std::hex << b;
      }
    }
  }
}

// The kernels' fast path (gates >= -51) needs exp's clamp to be the identity and the denominator
// below 2^126 there; its packed test uses the bound as a bf16 pair.
TEST(SwigluFp8, FastPathGateBoundKeepsTheDenominatorInTheReciprocalsRange) {
  EXPECT_EQ(kSwigluOaiInRangeGateBf16x2, bf16_from_float(kSwigluOaiInRangeGate) * 0x10001u);
  EXPECT_EQ(bf16_to_float(bf16_from_float(kSwigluOaiInRangeGate)), kSwigluOaiInRangeGate);
  EXPECT_GE(kSwigluOaiAlpha * kSwigluOaiInRangeGate, -89.0f);
  const float worst = swiglu_oai_denominator(kSwigluOaiInRangeGate);  // the largest denominator
  EXPECT_LT(worst, std::ldexp(1.0f, 126));
  EXPECT_EQ(float_bits(swiglu_oai_denominator_in_range(kSwigluOaiInRangeGate)), float_bits(worst));
}

TEST(SwigluFp8, SigmoidIsExactlyZeroWhereFp32ExpOverflowsAndSubnormalJustBefore) {
  // swiglu_oai: z = 1.702 g; exp(-z) overflows fp32 for z < -88.72, i.e. g <= -52.25 in bf16.
  EXPECT_EQ(oai(-52.25f, 1.0f), 0.0f);
  EXPECT_TRUE(std::signbit(oai(-52.25f, 1.0f)));  // -52.25 * 0 * 2 = -0
  const float before = oai(-52.0f, 1.0f);
  EXPECT_LT(before, 0.0f);
  EXPECT_LT(std::fabs(before), 1e-35f);
  EXPECT_EQ(silu_mul_value(-89.0f, 1.0f), 0.0f);
  EXPECT_NE(silu_mul_value(-88.5f, 1.0f), 0.0f);
  // The fp64 reference says the same, and counts those elements.
  const std::uint16_t row[4] = {bf16_from_float(-52.25f), bf16_from_float(-52.0f), bf16_from_float(1.0f),
                                bf16_from_float(1.0f)};
  SwigluRefProblem rp;
  rp.rows = 1;
  rp.d = 2;
  double ref[2];
  EXPECT_EQ(swiglu_ref_row(rp, row, 0, ref), 1);
  EXPECT_EQ(ref[0], 0.0);
  EXPECT_NEAR(ref[1] / before, 1.0, 1e-5);
}

TEST(SwigluFp8, DerivedBoundsAreTightEnoughForOneBf16Ulp) {
  for (bool is_oai : {true, false}) {
    const double e = swiglu_out_rel_error(is_oai);
    EXPECT_GT(e, 0.0);
    EXPECT_LT(e, std::ldexp(1.0, -9));
  }
}

TEST(SwigluFp8, AllZeroRowTakesTheFloorScaleAndZeroBytes) {
  SwigluFp8Params p;
  p.rows = 2;
  p.d = 256;
  auto x = random_bf16(2 * 2 * 256, 3);
  for (int i = 0; i < 512; ++i) x[i] = 0;  // row 0: gate and up
  const Outputs o = run_emu(p, x, false);
  EXPECT_EQ(scale_f32(o, 0), bits_float(kAmaxFloorBits) * fp8_inv_max(Fp8Flavour::e4m3fn));
  for (int i = 0; i < 256; ++i) ASSERT_EQ(o.q[i], 0x00) << i;  // 0 * sigmoid(0) * (0 + 1) = +0
  EXPECT_GT(scale_f32(o, 1), 1e-4f);
}

TEST(SwigluFp8, HugeValueSaturatesToMax) {
  for (auto f : {Fp8Flavour::e4m3fn, Fp8Flavour::e4m3fnuz})
    for (auto a : {SwigluActivation::swiglu_oai, SwigluActivation::silu}) {
      SwigluFp8Params p;
      p.rows = 3;
      p.d = 256;
      p.flavour = f;
      p.activation = a;
      p.granularity = Fp8Granularity::per_1x128;
      auto x = random_bf16(p.rows * 2 * p.d, 5);
      apply_swiglu_edge_rows(x.data(), p.rows, p.d, a, f);
      const Outputs o = run_emu(p, x, false);
      const std::uint8_t max_code = f == Fp8Flavour::e4m3fn ? 0x7E : 0x7F;
      // Row 2: gate = 2^20 and up = +-2^20 at column 5 of each group: its group's amax, on +-MAX.
      EXPECT_EQ(o.q[2 * p.d + 5], max_code);
      EXPECT_EQ(o.q[2 * p.d + 128 + 5], max_code | 0x80);
    }
}

TEST(SwigluFp8, TieRowReachesTheEncoderAsExactTiesAndRoundsHalfToEven) {
  for (auto f : {Fp8Flavour::e4m3fn, Fp8Flavour::e4m3fnuz})
    for (auto a : {SwigluActivation::swiglu_oai, SwigluActivation::silu})
      for (auto sf : {ScaleFormat::f32, ScaleFormat::e8m0}) {
        const std::vector<float> targets = swiglu_tie_targets(f);
        const std::vector<SwigluInputPair> pairs = swiglu_pairs_for(targets, a);
        ASSERT_EQ(pairs.size(), targets.size()) << "a tie target has no input pair";
        SwigluFp8Params p;
        p.rows = 4;
        p.d = 128;
        p.flavour = f;
        p.activation = a;
        p.scale_format = sf;
        p.write_out = true;
        auto x = random_bf16(p.rows * 2 * p.d, 13);
        apply_swiglu_edge_rows(x.data(), p.rows, p.d, a, f);
        const Outputs o = run_emu(p, x, false);
        const std::int64_t row = 3;
        const float scale = sf == ScaleFormat::f32 ? scale_f32(o, row) : e8m0_to_float(o.scales[row]);
        ASSERT_EQ(scale, 1.0f / 64.0f);
        EXPECT_EQ(fp8_to_float(o.q[row * p.d], f), fp8_max(f));
        for (std::size_t k = 1; k < pairs.size(); ++k) {
          const std::int64_t i = row * p.d + static_cast<std::int64_t>(k);
          const float seen = bf16_to_float(o.out[i]) * 64.0f;  // exact: the encoder's input
          ASSERT_EQ(seen, targets[k] * 64.0f);
          // Exactly halfway between two fp8 neighbours; the one kept has an even code.
          const std::uint8_t code = o.q[i];
          const float kept = fp8_to_float(code, f);
          const float other = 2.0f * seen - kept;
          EXPECT_EQ(fp8_to_float(fp8_from_float(other, f), f), other) << seen;  // the other neighbour is a code
          EXPECT_EQ(code & 1, 0) << seen;
          EXPECT_NE(kept, seen) << seen;
        }
      }
}

TEST(SwigluFp8, NanGateReachesOnlyItsOwnRowsScaleAndFailsVerify) {
  SwigluFp8Params p;
  p.rows = 4;
  p.d = 256;
  p.granularity = Fp8Granularity::per_token;
  auto x = random_bf16(p.rows * 2 * p.d, 11);
  x[2 * 2 * 256 + 17] = 0x7FC0;  // row 2, a gate
  const Outputs o = run_emu(p, x, false);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(std::isnan(scale_f32(o, s)), s == 2) << s;
  Session cpu("cpu");
  const KernelCase& kc = find_case("swiglu_fp8/per_1x128");
  const CaseResult r = verify_case(
      kc, point_of(kc, {{"T", std::int64_t{8}}, {"d", std::int64_t{384}}, {"dist", std::string("nan")}}), VerifyOptions{},
      cpu);
  EXPECT_EQ(r.outcome, Outcome::fail);
  EXPECT_NE(r.reason.find("NaN"), std::string::npos) << r.reason;
}

TEST(SwigluFp8, FlippedFusedByteIsCaught) {
  Session cpu("cpu");
  const KernelCase& kc = find_case("swiglu_fp8/per_token");
  VerifyOptions o;
  o.fault = FaultInjection::flip_fused_element;
  const CaseResult r = verify_case(kc, point_of(kc, {{"T", std::int64_t{5}}, {"d", std::int64_t{384}}}), o, cpu);
  EXPECT_EQ(r.outcome, Outcome::fail);
  EXPECT_NE(r.reason.find("check/pair/fused~chain/bitwise"), std::string::npos) << r.reason;
}

TEST(SwigluFp8, DNotMultipleOf128IsRejectedForPer1x128) {
  const KernelCase& kc = find_case("swiglu_fp8/per_1x128");
  try {
    kc.make(point_of(kc, {{"T", std::int64_t{4}}, {"d", std::int64_t{200}}}));
    FAIL() << "d=200 accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "d=200 is not a multiple of the 1x128 group");
  }
  const KernelCase& token = find_case("swiglu_fp8/per_token");
  EXPECT_NO_THROW(token.make(point_of(token, {{"T", std::int64_t{4}}, {"d", std::int64_t{200}}})));
}

// Every case through the full verify runner on the CPU: chain bitwise, fp64 bounds, repeat, trust.
TEST(SwigluFp8, EmulationPassesEveryCheckOnEdgeAndWideDistributions) {
  Session cpu("cpu");
  for (const char* name : {"swiglu_fp8/per_token", "swiglu_fp8/per_1x128"}) {
    const KernelCase& kc = find_case(name);
    for (const char* dist : {"edge", "outliers", "uniform"})
      for (const char* fp8 : {"e4m3fn", "e4m3fnuz"})
        for (const char* activation : {"swiglu_oai", "silu"}) {
          const Point pt = point_of(kc, {{"T", std::int64_t{16}}, {"d", std::int64_t{384}}, {"dist", std::string(dist)},
                                         {"fp8", std::string(fp8)}, {"activation", std::string(activation)},
                                         {"bf16_out", std::string("yes")}, {"scale_layout", std::string("k_major")}});
          const CaseResult r = verify_case(kc, pt, VerifyOptions{}, cpu);
          EXPECT_EQ(r.outcome, Outcome::pass) << name << " " << pt.text() << ": " << r.reason;
        }
  }
}

TEST(SwigluFp8, GpuMatchesEmulationBitwise) {
  FB_SKIP_WITHOUT_GPU();
  Session gpu_session("gpu");
  for (const char* name : {"swiglu_fp8/per_token", "swiglu_fp8/per_1x128"}) {
    const KernelCase& kc = find_case(name);
    // 200: the element-wise path; 10240: past the register-held chunks (the re-read path). Every
    // row shape, forced: GpuFusedEqualsEmulationInEveryRowShape.
    for (std::int64_t rows : {1, 19, 257})
      for (std::int64_t d : {128, 200, 768, 3072, 10240}) {
        if (std::string(name).ends_with("1x128") && d % 128) continue;
        for (const char* activation : {"swiglu_oai", "silu"}) {
          const Point pt = point_of(kc, {{"T", rows}, {"d", d}, {"activation", std::string(activation)},
                                         {"bf16_out", std::string("yes")}, {"dist", std::string("edge")}});
          const CaseResult r = verify_case(kc, pt, VerifyOptions{}, gpu_session);
          EXPECT_EQ(r.outcome, Outcome::pass) << name << " " << pt.text() << ": " << r.reason;
        }
      }
  }
}


// Every bf16 gate, with ups on both sides of the clamps, infinite and NaN, through the GPU's
// activation in the chain's kernel and in the fused producer's bf16 out: the emulation's bytes,
// and NaN where the emulation gives NaN (the payload is the platform's). This covers swiglu_oai's
// fast path (clamp-free denominators, guard-free reciprocals) and its fallback (a gate below -51
// or NaN) for every gate the kernels can see, with NaN reaching out through up as well.
#if FUSEBENCH_HAS_GPU  // the launchers exist in GPU builds only
TEST(SwigluFp8, GpuActivationEqualsEmulationOnEveryBf16Gate) {
  FB_SKIP_WITHOUT_GPU();
  constexpr std::int64_t kD = 1024, kRows = 0x10000 / kD;
  const float inf = std::numeric_limits<float>::infinity();
  const float ups[] = {-7.5f, -1.0f, 0.375f, 3.0f, 7.0f, 100.0f, -0.0f, inf, -inf, std::nanf("")};
  std::vector<std::uint16_t> gate_up(kRows * 2 * kD);
  for (std::int64_t r = 0; r < kRows; ++r)
    for (std::int64_t j = 0; j < kD; ++j) {
      gate_up[r * 2 * kD + j] = static_cast<std::uint16_t>(r * kD + j);
      gate_up[r * 2 * kD + kD + j] = bf16_from_float(ups[(r * kD + j) % std::size(ups)]);
    }
  void* stream = gpu::create_stream();
  void* device_in = gpu::allocate(gate_up.size() * 2);
  void* device_out = gpu::allocate(kRows * kD * 2);
  void* device_q = gpu::allocate(kRows * kD);
  void* device_scales = gpu::allocate(kRows * 4);
  gpu::copy_to_device(device_in, gate_up.data(), gate_up.size() * 2);
  for (SwigluActivation activation : {SwigluActivation::swiglu_oai, SwigluActivation::silu}) {
    const SwigluFp8Params p{.rows = kRows, .d = kD, .activation = activation, .write_out = true};
    std::vector<std::uint16_t> want(kRows * kD);
    swiglu_emu(p, SwigluFp8Buffers{gate_up.data(), want.data(), nullptr, nullptr});
    for (bool fused : {false, true}) {
      gpu::fill_bytes(device_out, 0x5A, kRows * kD * 2, stream);  // poison: a finite bf16, never NaN
      const SwigluFp8Buffers b{static_cast<const std::uint16_t*>(device_in), static_cast<std::uint16_t*>(device_out),
                               static_cast<std::uint8_t*>(device_q), device_scales};
      (fused ? swiglu_fp8_fused_launch : swiglu_launch)(p, b, stream);
      gpu::synchronize(stream);
      std::vector<std::uint16_t> got(kRows * kD);
      gpu::copy_to_host(got.data(), device_out, got.size() * 2);
      std::int64_t nan = 0;
      for (std::int64_t i = 0; i < kRows * kD; ++i) {
        const float w = bf16_to_float(want[i]);
        if (w != w) {
          ++nan;
          ASSERT_TRUE(bf16_to_float(got[i]) != bf16_to_float(got[i])) << std::hex << "gate 0x" << i;
        } else {
          ASSERT_EQ(got[i], want[i]) << std::hex << "gate 0x" << i << " fused " << fused;
        }
      }
      EXPECT_GE(nan, 2 * 127);  // the NaN gates at least
    }
  }
  gpu::release(device_scales);
  gpu::release(device_q);
  gpu::release(device_out);
  gpu::release(device_in);
  gpu::destroy_stream(stream);
}

// The fused kernel in every row shape, each forced at sizes where the launcher would not pick it:
// 3 and 6 chunks per thread, rows that fill every slot (768 at 3, 3072 at 6), leave slots empty
// (128, 200: the element path; 1000, 1408; 10240) or run past them (12416 at 6; 10240 and 12416
// at 3: the re-read path), and spare rows in the last block. q, scales and out equal the
// emulation bitwise after runs over two different poisons, so an unwritten byte cannot pass.
TEST(SwigluFp8, GpuFusedEqualsEmulationInEveryRowShape) {
  FB_SKIP_WITHOUT_GPU();
  void* stream = gpu::create_stream();
  for (std::int64_t d : {128, 200, 768, 1000, 1408, 3072, 10240, 12416})
    for (std::int64_t rows : {1, 19, 257})
      for (auto g : {Fp8Granularity::per_token, Fp8Granularity::per_1x128}) {
        if (g == Fp8Granularity::per_1x128 && d % 128) continue;
        for (auto activation : {SwigluActivation::swiglu_oai, SwigluActivation::silu}) {
          SwigluFp8Params p{.rows = rows, .d = d, .activation = activation, .write_out = true, .granularity = g};
          const auto x = random_bf16(rows * 2 * d, static_cast<std::uint64_t>(d * 7 + rows),
                                     rows == 19 ? Distribution::outliers : Distribution::normal);
          const Outputs want = run_emu(p, x, false);
          void* device_in = gpu::allocate(x.size() * 2);
          gpu::copy_to_device(device_in, x.data(), x.size() * 2);
          Outputs got = want;
          void* device_out = gpu::allocate(got.out.size() * 2);
          void* device_q = gpu::allocate(got.q.size());
          void* device_scales = gpu::allocate(got.scales.size());
          for (int chunks : {3, 6})
            for (std::uint8_t poison : {0xA5, 0x5A}) {
              p.chunks_per_thread = chunks;
              gpu::fill_bytes(device_out, poison, got.out.size() * 2, stream);
              gpu::fill_bytes(device_q, poison, got.q.size(), stream);
              gpu::fill_bytes(device_scales, poison, got.scales.size(), stream);
              swiglu_fp8_fused_launch(p,
                                      SwigluFp8Buffers{static_cast<const std::uint16_t*>(device_in),
                                                       static_cast<std::uint16_t*>(device_out),
                                                       static_cast<std::uint8_t*>(device_q), device_scales},
                                      stream);
              gpu::synchronize(stream);
              gpu::copy_to_host(got.out.data(), device_out, got.out.size() * 2);
              gpu::copy_to_host(got.q.data(), device_q, got.q.size());
              gpu::copy_to_host(got.scales.data(), device_scales, got.scales.size());
              const std::string where = "d=" + std::to_string(d) + " T=" + std::to_string(rows) + " chunks=" +
                                        std::to_string(chunks) + (g == Fp8Granularity::per_token ? " per_token" : " per_1x128") +
                                        (activation == SwigluActivation::silu ? " silu" : " swiglu_oai");
              ASSERT_EQ(got.q, want.q) << where;
              ASSERT_EQ(got.scales, want.scales) << where;
              ASSERT_EQ(got.out, want.out) << where;
            }
          gpu::release(device_scales);
          gpu::release(device_q);
          gpu::release(device_out);
          gpu::release(device_in);
        }
      }
  gpu::destroy_stream(stream);
}
#endif

}  // namespace
}  // namespace fb
