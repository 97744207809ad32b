// fp8 activation quant (F9): the emulated fused kernel equals the emulated chain bitwise on odd
// shapes and every option; both sit within the derived bounds of fp64; the edge rows land exactly
// where the contract puts them; NaN reaches only its own row's scale; the GPU (when present) equals
// the emulation bitwise.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/inputs.hpp"
#include "core/registry.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"
#include "kernels/fp8_quant/fp8_quant.hpp"
#include "kernels/fp8_quant/fp8_quant_edge_rows.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e8m0.hpp"
#include "support/skip_without_gpu.hpp"

namespace fb {
namespace {

struct EmuRun {
  std::vector<std::uint16_t> x;
  std::vector<std::uint8_t> q;
  std::vector<std::uint8_t> scales;  // raw bytes (f32 or e8m0)
};

EmuRun run_emu(const Fp8QuantParams& p, const std::vector<std::uint16_t>& x, bool chain) {
  EmuRun r{x, std::vector<std::uint8_t>(p.rows * p.cols, 0xFF),
        std::vector<std::uint8_t>(p.scale_count() * (p.scale_format == ScaleFormat::f32 ? 4 : 1), 0xFF)};
  std::vector<std::uint32_t> amax(p.scale_count(), 0xFFFFFFFFu);
  Fp8QuantBuffers b{r.x.data(), r.q.data(), r.scales.data(), amax.data()};
  (chain ? fp8_quant_chain_emu : fp8_quant_fused_emu)(p, b);
  return r;
}

std::vector<std::uint16_t> normal_bf16(std::int64_t n, std::uint64_t seed) {
  HostTensor t({"x", DType::bf16, {{"N", n}}});
  fill_tensor(t, Distribution::normal, seed, 0);
  return std::vector<std::uint16_t>(t.data<std::uint16_t>(), t.data<std::uint16_t>() + n);
}

float scale_f32(const EmuRun& r, std::int64_t i) {
  float s;
  std::memcpy(&s, r.scales.data() + 4 * i, 4);
  return s;
}

TEST(Fp8Quant, FusedMatchesChainBitwiseOnOddShapesAndEveryOption) {
  int combos = 0;
  for (std::int64_t rows : {1, 19, 99}) {
    for (std::int64_t cols : {128, 384, 1000, 6144}) {
      for (auto g : {Fp8Granularity::per_token, Fp8Granularity::per_1x128}) {
        if (g == Fp8Granularity::per_1x128 && cols % 128) continue;
        for (auto f : {Fp8Flavour::e4m3fn, Fp8Flavour::e4m3fnuz})
          for (auto l : {ScaleLayout::row_major, ScaleLayout::k_major})
            for (auto sf : {ScaleFormat::f32, ScaleFormat::e8m0}) {
              const Fp8QuantParams p{rows, cols, g, f, l, sf};
              const auto x = normal_bf16(rows * cols, static_cast<std::uint64_t>(rows * 7 + cols));
              const EmuRun fused = run_emu(p, x, false), chain = run_emu(p, x, true);
              ASSERT_EQ(fused.q, chain.q) << rows << "x" << cols;
              ASSERT_EQ(fused.scales, chain.scales) << rows << "x" << cols;
              ++combos;
            }
      }
    }
  }
  EXPECT_GT(combos, 100);
}

TEST(Fp8Quant, AllZeroRowTakesTheFloorScaleAndZeroBytes) {
  const Fp8QuantParams p{2, 256, Fp8Granularity::per_token, Fp8Flavour::e4m3fn, ScaleLayout::row_major, ScaleFormat::f32};
  std::vector<std::uint16_t> x(512, 0);
  x[300] = bf16_from_float(1.0f);  // row 1 is not zero
  const EmuRun r = run_emu(p, x, false);
  EXPECT_EQ(scale_f32(r, 0), bits_float(kAmaxFloorBits) * fp8_inv_max(Fp8Flavour::e4m3fn));
  for (int i = 0; i < 256; ++i) ASSERT_EQ(r.q[i], 0x00);
}

TEST(Fp8Quant, HugeValueSaturatesToMax) {
  for (auto f : {Fp8Flavour::e4m3fn, Fp8Flavour::e4m3fnuz}) {
    const Fp8QuantParams p{1, 128, Fp8Granularity::per_1x128, f, ScaleLayout::row_major, ScaleFormat::f32};
    auto x = normal_bf16(128, 3);
    x[5] = 0x7F7F;   // largest finite bf16
    x[9] = 0xFF7F;   // and its negative
    const EmuRun r = run_emu(p, x, false);
    const std::uint8_t max_code = f == Fp8Flavour::e4m3fn ? 0x7E : 0x7F;
    EXPECT_EQ(r.q[5], max_code);
    EXPECT_EQ(r.q[9], max_code | 0x80);
  }
}

TEST(Fp8Quant, ExactTiesAtScaleOneRoundToEven) {
  // A group whose amax is MAX has scale exactly 1, so these values reach the encoder as ties.
  const Fp8QuantParams p{1, 128, Fp8Granularity::per_1x128, Fp8Flavour::e4m3fn, ScaleLayout::row_major, ScaleFormat::f32};
  std::vector<std::uint16_t> x(128, 0);
  const float values[] = {448.0f, 1.0625f, 1.1875f, 432.0f, std::ldexp(1.0f, -10), std::ldexp(3.0f, -10)};
  const std::uint8_t want[] = {0x7E, 0x38, 0x3A, 0x7E, 0x00, 0x02};
  for (int i = 0; i < 6; ++i) x[i] = bf16_from_float(values[i]);
  const EmuRun r = run_emu(p, x, false);
  EXPECT_EQ(scale_f32(r, 0), 1.0f);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.q[i], want[i]) << values[i];
}

TEST(Fp8Quant, FnuzFoldsNegativeZeroAndFnKeepsIt) {
  std::vector<std::uint16_t> x(128, 0x8000);  // -0 everywhere
  x[1] = bf16_from_float(1.0f);
  for (auto f : {Fp8Flavour::e4m3fn, Fp8Flavour::e4m3fnuz}) {
    const Fp8QuantParams p{1, 128, Fp8Granularity::per_1x128, f, ScaleLayout::row_major, ScaleFormat::f32};
    const EmuRun r = run_emu(p, x, false);
    EXPECT_EQ(r.q[0], f == Fp8Flavour::e4m3fn ? 0x80 : 0x00);
  }
}

TEST(Fp8Quant, NanReachesOnlyItsOwnRowsScale) {
  const Fp8QuantParams p{3, 256, Fp8Granularity::per_1x128, Fp8Flavour::e4m3fn, ScaleLayout::row_major, ScaleFormat::f32};
  auto x = normal_bf16(3 * 256, 11);
  x[256 + 130] = 0x7FC0;  // row 1, group 1
  const EmuRun r = run_emu(p, x, false);
  for (int g = 0; g < 6; ++g) EXPECT_EQ(std::isnan(scale_f32(r, g)), g == 3) << g;
  EXPECT_EQ(r.q[256 + 130] & 0x7F, 0x7F);  // NaN element gives NaN
  const EmuRun c = run_emu(p, x, true);
  EXPECT_EQ(std::memcmp(r.q.data(), c.q.data(), r.q.size()), 0);
}

TEST(Fp8Quant, E8m0ScalesArePowersOfTwoRoundedUp) {
  const Fp8QuantParams p{4, 512, Fp8Granularity::per_1x128, Fp8Flavour::e4m3fn, ScaleLayout::k_major, ScaleFormat::e8m0};
  const auto x = normal_bf16(4 * 512, 5);
  const EmuRun r = run_emu(p, x, false);
  for (std::int64_t row = 0; row < 4; ++row)
    for (std::int64_t g = 0; g < 4; ++g) {
      float amax = 0;
      for (int k = 0; k < 128; ++k) amax = std::max(amax, std::fabs(bf16_to_float(x[row * 512 + g * 128 + k])));
      const float s = e8m0_to_float(r.scales[g * 4 + row]);  // k_major: [G][M]
      EXPECT_GE(s, amax / 448.0f * (1 - 1e-6f));
      EXPECT_LT(s, 2 * amax / 448.0f * (1 + 1e-6f));
    }
}

TEST(Fp8Quant, ImpossibleShapeIsRejectedWithAReason) {
  Registry reg;
  register_all_families(reg);
  Point pt;
  for (const auto& [k, v] : std::vector<std::pair<std::string, AxisValue>>{{"M", std::int64_t{4}},
                                                                           {"K", std::int64_t{200}},
                                                                           {"fp8", std::string("e4m3fn")},
                                                                           {"scale_layout", std::string("row_major")},
                                                                           {"scale_format", std::string("f32")},
                                                                           {"dist", std::string("normal")}})
    pt.set(k, v);
  try {
    reg.find("fp8_quant/per_1x128")->make(pt);
    FAIL() << "K=200 accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "K=200 is not a multiple of the 1x128 group");
  }
}

// Every case of the family through the full verify runner on the edge distribution (CPU).
TEST(Fp8Quant, EdgeRowsPassEveryCheckOnTheCpu) {
  Registry reg;
  register_all_families(reg);
  Session cpu("cpu");
  for (const char* name : {"fp8_quant/per_token", "fp8_quant/per_1x128"}) {
    const KernelCase& kc = *reg.find(name);
    for (const char* fp8 : {"e4m3fn", "e4m3fnuz"})
      for (const char* sf : {"f32", "e8m0"}) {
        Point pt;
        pt.set("M", std::int64_t{16});
        pt.set("K", std::int64_t{384});
        pt.set("fp8", std::string(fp8));
        if (kc.axis("scale_layout")) pt.set("scale_layout", std::string("k_major"));
        pt.set("scale_format", std::string(sf));
        pt.set("dist", std::string("edge"));
        const CaseResult r = verify_case(kc, pt, VerifyOptions{}, cpu);
        EXPECT_EQ(r.outcome, Outcome::pass) << name << " " << pt.text() << ": " << r.reason;
      }
  }
}

TEST(Fp8Quant, GpuMatchesEmulationBitwise) {
  FB_SKIP_WITHOUT_GPU();
  Registry reg;
  register_all_families(reg);
  Session gpu_session("gpu");
  for (const char* name : {"fp8_quant/per_token", "fp8_quant/per_1x128"}) {
    for (std::int64_t rows : {1, 19, 257}) {
      for (std::int64_t cols : {384, 6144, 10240}) {
        Point pt;
        pt.set("M", rows);
        pt.set("K", cols);
        pt.set("fp8", std::string("e4m3fn"));
        if (std::string(name).ends_with("1x128")) pt.set("scale_layout", std::string("k_major"));
        pt.set("scale_format", std::string("f32"));
        pt.set("dist", std::string("edge"));
        const CaseResult r = verify_case(*reg.find(name), pt, VerifyOptions{}, gpu_session);
        EXPECT_EQ(r.outcome, Outcome::pass) << name << " " << pt.text() << ": " << r.reason;
      }
    }
  }
}

}  // namespace
}  // namespace fb
