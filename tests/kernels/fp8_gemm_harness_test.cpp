// The fp8 GEMM cases through the harness (verify_case): odd points pass on the CPU backend, a NaN
// input fails (never a pass), F7 with a producer that does not zero its buffer fails, shapes the
// kernels cannot take are InputErrors, a prefill point is a skip on the CPU, and the block-scale
// GEMM's direct form is checked on the C it writes, and the wgmma tile a rule or knob picks is
// named per variant (launch_configs). On a GPU the same
// points pass on the device (every variant that runs there, vendor included where present).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_cases.hpp"
#include "support/skip_without_gpu.hpp"

namespace fb {
namespace {

Point gemm_point(std::int64_t m, std::int64_t n, std::int64_t k, const char* dist = "normal") {
  Point pt;
  pt.set("M", m);
  pt.set("N", n);
  pt.set("K", k);
  pt.set("fp8", std::string("e4m3fn"));
  pt.set("dist", std::string(dist));
  pt.set("row_tile", std::string("auto"));  // small_m's axis (the other cases ignore it)
  return pt;
}

Point blockscale_point(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t s, bool flavour,
                       const char* dist = "normal") {
  Point pt;
  pt.set("M", m);
  pt.set("N", n);
  pt.set("K", k);
  pt.set("S", s);
  if (flavour) pt.set("fp8", std::string("e4m3fn"));
  pt.set("dist", std::string(dist));
  return pt;
}

CaseResult verify(const KernelCase& kc, const Point& pt, Session& session) {
  return verify_case(kc, pt, VerifyOptions{}, session);
}

TEST(Fp8GemmHarness, OddPointsPassOnTheCpu) {
  Registry reg;
  register_all_families(reg);
  Session cpu("cpu");
  for (const char* dist : {"normal", "edge"}) {
    const CaseResult a = verify(*reg.find("fp8_gemm/ptpc"), gemm_point(5, 136, 272, dist), cpu);
    EXPECT_EQ(a.outcome, Outcome::pass) << a.reason;
    const CaseResult b = verify(*reg.find("fp8_gemm/small_m"), gemm_point(3, 256, 256, dist), cpu);
    EXPECT_EQ(b.outcome, Outcome::pass) << b.reason;
    const CaseResult c = verify(*reg.find("fp8_gemm_blockscale/gemm"), blockscale_point(17, 256, 384, 3, true, dist), cpu);
    EXPECT_EQ(c.outcome, Outcome::pass) << c.reason;
    const CaseResult d = verify(*reg.find("fp8_gemm_blockscale/f7"), blockscale_point(5, 256, 384, 2, false, dist), cpu);
    EXPECT_EQ(d.outcome, Outcome::pass) << d.reason;
  }
}

// The block-scale GEMM's direct form writes C alone (VariantSpec::writes): at S = 1 it is checked on
// C (bitwise against wgmma, repeat, fp64) and leaves no fingerprint of acc; split-K points skip it
// with the reason.
TEST(Fp8GemmHarness, BlockscaleDirectIsCheckedOnCAloneAndSkipsMoreSlicesThanAClusterHolds) {
  Registry reg;
  register_all_families(reg);
  Session cpu("cpu");
  const KernelCase& kc = *reg.find("fp8_gemm_blockscale/gemm");
  const CaseResult one = verify(kc, blockscale_point(17, 384, 384, 1, true), cpu);
  EXPECT_EQ(one.outcome, Outcome::pass) << one.reason;
  int pair = 0, repeats = 0;
  for (const CheckResult& c : one.checks) {
    pair += c.id == "check/pair/direct~wgmma/bitwise" && c.passed ? 1 : 0;
    repeats += c.id == "check/repeat/direct" ? 1 : 0;
  }
  EXPECT_EQ(pair, 1);
  EXPECT_EQ(repeats, 1);  // C only
  bool direct_c = false, direct_acc = false;
  for (const auto& [name, print] : one.fingerprints) {
    direct_c = direct_c || name == "direct/c";
    direct_acc = direct_acc || name == "direct/acc";
  }
  EXPECT_TRUE(direct_c);
  EXPECT_FALSE(direct_acc);
  // Split-K (a cluster of S CTAs on the GPU): the same pair claim; more slices than a cluster holds
  // are skipped with the reason.
  const CaseResult split = verify(kc, blockscale_point(17, 384, 384, 2, true), cpu);
  EXPECT_EQ(split.outcome, Outcome::pass) << split.reason;
  int split_pair = 0;
  for (const CheckResult& c : split.checks)
    split_pair += c.id == "check/pair/direct~wgmma/bitwise" && c.passed ? 1 : 0;
  EXPECT_EQ(split_pair, 1);
  const CaseResult wide_split = verify(kc, blockscale_point(17, 384, 1152, 9, true), cpu);
  EXPECT_EQ(wide_split.outcome, Outcome::pass) << wide_split.reason;
  bool skipped = false;
  for (const auto& [variant, why] : wide_split.skipped_variants)
    skipped = skipped || (variant == "direct" && why.find("S <= 8 (S=9)") != std::string::npos);
  EXPECT_TRUE(skipped);
}

TEST(Fp8GemmHarness, NanInputFailsNeverPasses) {
  Registry reg;
  register_all_families(reg);
  Session cpu("cpu");
  EXPECT_EQ(verify(*reg.find("fp8_gemm/ptpc"), gemm_point(5, 128, 128, "nan"), cpu).outcome, Outcome::fail);
  EXPECT_EQ(verify(*reg.find("fp8_gemm/small_m"), gemm_point(5, 128, 128, "nan"), cpu).outcome, Outcome::fail);
  EXPECT_EQ(verify(*reg.find("fp8_gemm_blockscale/gemm"), blockscale_point(5, 128, 256, 2, true, "nan"), cpu).outcome,
            Outcome::fail);
}

TEST(Fp8GemmHarness, AProducerThatDoesNotZeroTheBufferFails) {
  Session cpu("cpu");
  const CaseResult r = verify(make_fp8_blockscale_f7_case(false), blockscale_point(5, 256, 384, 2, false), cpu);
  // Never a pass. On the CPU the outcome reads "mistrusted": x86 keeps a NaN operand's payload, so
  // acc still holds the NaN poison bytes after NaN + x, and under the other poison 1.5e16 + x
  // rounds back to the poison, which the unwritten check reports first. Underneath, the claims
  // fail: C is NaN against fp64 and differs from the memset variant.
  EXPECT_TRUE(r.outcome == Outcome::fail || r.outcome == Outcome::mistrusted) << outcome_name(r.outcome);
  int fp64_failed = 0, pair_failed = 0;
  for (const CheckResult& c : r.checks) {
    if (c.passed) continue;
    if (c.id.rfind("check/fp64/prezeroed", 0) == 0) ++fp64_failed;
    if (c.id.rfind("check/pair/prezeroed~memset", 0) == 0) ++pair_failed;
  }
  EXPECT_GT(fp64_failed, 0);
  EXPECT_GT(pair_failed, 0);
}

TEST(Fp8GemmHarness, ImpossibleShapesAreInputErrorsAndPrefillIsACpuSkip) {
  Registry reg;
  register_all_families(reg);
  EXPECT_THROW(reg.find("fp8_gemm/ptpc")->make(gemm_point(5, 128, 100)), InputError);
  EXPECT_THROW(reg.find("fp8_gemm/small_m")->make(gemm_point(17, 128, 128)), InputError);
  EXPECT_THROW(reg.find("fp8_gemm_blockscale/gemm")->make(blockscale_point(5, 100, 256, 1, true)), InputError);
  Session cpu("cpu");
  EXPECT_EQ(verify(*reg.find("fp8_gemm/ptpc"), gemm_point(32768, 1536, 6144), cpu).outcome, Outcome::skipped);
}

// The tile a wgmma kernel launches on the GPU (CaseInstance::launch_config, reported per variant in
// launch_configs): the rule by M and N, or the knob's width, and where C leaves through the staged
// epilogue; nothing on the CPU backend, nothing for variants with one form.
TEST(Fp8GemmHarness, LaunchConfigsNameTheTileTheRuleOrTheKnobPicks) {
  Registry reg;
  register_all_families(reg);
  const KernelCase& bs = *reg.find("fp8_gemm_blockscale/gemm");
  const KernelCase& ptpc = *reg.find("fp8_gemm/ptpc");
  const KernelCase& f7 = *reg.find("fp8_gemm_blockscale/f7");
  auto form = [](const KernelCase& kc, const Point& pt, const char* variant, Backend backend) {
    return kc.make(pt)->launch_config(kc.variant_id(variant), backend);
  };
  unsetenv("FUSEBENCH_BLOCKSCALE_TILE_N");
  unsetenv("FUSEBENCH_GEMM_TILE_N");
  const Point big = blockscale_point(4096, 2304, 6144, 1, true), small = blockscale_point(192, 2304, 6144, 1, true);
  EXPECT_EQ(form(bs, big, "wgmma", Backend::gpu), "tile 128x192");
  EXPECT_EQ(form(bs, big, "direct", Backend::gpu), "tile 128x192, staged epilogue");
  EXPECT_EQ(form(bs, small, "wgmma", Backend::gpu), "tile 128x128");
  const Point odd_n = blockscale_point(4096, 2048 + 128, 6144, 1, true);  // N % 384 != 0: no wide tile
  EXPECT_EQ(form(bs, odd_n, "wgmma", Backend::gpu), "tile 128x128");
  EXPECT_EQ(form(bs, big, "plain", Backend::gpu), "");
  EXPECT_EQ(form(bs, big, "vendor", Backend::gpu), "");
  EXPECT_EQ(form(bs, big, "wgmma", Backend::cpu), "");
  EXPECT_EQ(form(ptpc, gemm_point(4096, 1536, 6144), "wgmma", Backend::gpu), "tile 128x192, staged epilogue");
  EXPECT_EQ(form(ptpc, gemm_point(1024, 1536, 6144), "wgmma", Backend::gpu), "tile 128x128, staged epilogue");
  EXPECT_EQ(form(ptpc, gemm_point(4096, 1536, 6144), "plain", Backend::gpu), "");
  // F8's row tile: M itself up to 4 rows, then 8, then 16; an explicit `row_tile` wins.
  const KernelCase& f8 = *reg.find("fp8_gemm/small_m");
  EXPECT_EQ(form(f8, gemm_point(3, 1536, 6144), "small_m", Backend::gpu), "row tile 3");
  EXPECT_EQ(form(f8, gemm_point(6, 1536, 6144), "small_m", Backend::gpu), "row tile 8");
  EXPECT_EQ(form(f8, gemm_point(16, 1536, 6144), "small_m", Backend::gpu), "row tile 16");
  Point tiled = gemm_point(16, 1536, 6144);
  tiled.set("row_tile", std::string("4"));
  EXPECT_EQ(form(f8, tiled, "small_m", Backend::gpu), "row tile 4");
  EXPECT_EQ(form(f8, gemm_point(3, 1536, 6144), "general", Backend::gpu), "");
  EXPECT_EQ(form(f8, gemm_point(3, 1536, 6144), "small_m", Backend::cpu), "");
  setenv("FUSEBENCH_BLOCKSCALE_TILE_N", "128", 1);
  setenv("FUSEBENCH_GEMM_TILE_N", "192", 1);
  EXPECT_EQ(form(bs, big, "wgmma", Backend::gpu), "tile 128x128");
  EXPECT_EQ(form(ptpc, gemm_point(1024, 1536, 6144), "wgmma", Backend::gpu), "tile 128x192, staged epilogue");
  unsetenv("FUSEBENCH_BLOCKSCALE_TILE_N");
  unsetenv("FUSEBENCH_GEMM_TILE_N");
  // The epilogue: staged where N % 8 == 0 unless the knob asks for the register stores.
  EXPECT_EQ(form(ptpc, gemm_point(1024, 1540, 6144), "wgmma", Backend::gpu), "tile 128x128, register epilogue");
  setenv("FUSEBENCH_WGMMA_EPILOGUE", "registers", 1);
  EXPECT_EQ(form(bs, big, "direct", Backend::gpu), "tile 128x192, register epilogue");
  EXPECT_EQ(form(bs, big, "wgmma", Backend::gpu), "tile 128x192");
  unsetenv("FUSEBENCH_WGMMA_EPILOGUE");
  // The direct form's clusters (S > 1) name their arrivals: the default form (fenced relaxed, since
  // run 77), or the knob's; a value the knob does not know is an InputError naming it.
  const Point split = blockscale_point(192, 2304, 6144, 3, true);
  unsetenv("FUSEBENCH_CLUSTER_ARRIVALS");
  EXPECT_EQ(form(bs, split, "direct", Backend::gpu), "tile 128x128, clusters of 3 CTAs, fenced relaxed arrivals");
  setenv("FUSEBENCH_CLUSTER_ARRIVALS", "", 1);
  EXPECT_EQ(form(bs, split, "direct", Backend::gpu), "tile 128x128, clusters of 3 CTAs, fenced relaxed arrivals");
  setenv("FUSEBENCH_CLUSTER_ARRIVALS", "relaxed", 1);
  EXPECT_EQ(form(bs, split, "direct", Backend::gpu), "tile 128x128, clusters of 3 CTAs, fenced relaxed arrivals");
  setenv("FUSEBENCH_CLUSTER_ARRIVALS", "release", 1);
  EXPECT_EQ(form(bs, split, "direct", Backend::gpu), "tile 128x128, clusters of 3 CTAs, release arrivals");
  setenv("FUSEBENCH_CLUSTER_ARRIVALS", "fast", 1);
  try {
    form(bs, split, "direct", Backend::gpu);
    ADD_FAILURE() << "an unknown FUSEBENCH_CLUSTER_ARRIVALS value was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("FUSEBENCH_CLUSTER_ARRIVALS"), std::string::npos) << e.what();
  }
  unsetenv("FUSEBENCH_CLUSTER_ARRIVALS");
  EXPECT_EQ(form(f7, blockscale_point(4096, 2304, 6144, 2, false), "memset", Backend::cpu), "");
#if !FUSEBENCH_HAS_GPU
  EXPECT_EQ(form(f7, blockscale_point(4096, 2304, 6144, 2, false), "prezeroed", Backend::gpu), "wgmma tile 128x192");
#endif

  // Through the harness: the CPU backend records no launch form.
  Session cpu("cpu");
  EXPECT_TRUE(verify(bs, blockscale_point(17, 384, 384, 1, true), cpu).launch_configs.empty());
}

TEST(Fp8GemmHarnessGpu, OddPointsPassOnTheDevice) {
  FB_SKIP_WITHOUT_GPU();
  Registry reg;
  register_all_families(reg);
  Session gpu("gpu");
  for (const char* dist : {"normal", "edge"}) {
    for (std::int64_t m : {1, 5, 17, 100}) {
      const CaseResult a = verify(*reg.find("fp8_gemm/ptpc"), gemm_point(m, 256, 384, dist), gpu);
      EXPECT_EQ(a.outcome, Outcome::pass) << "ptpc M=" << m << ": " << a.reason;
      const CaseResult c = verify(*reg.find("fp8_gemm_blockscale/gemm"), blockscale_point(m, 256, 768, 4, true, dist), gpu);
      EXPECT_EQ(c.outcome, Outcome::pass) << "blockscale M=" << m << ": " << c.reason;
      // S = 1: the direct form runs too (and the vendor where cuBLASLt takes the point).
      const CaseResult e = verify(*reg.find("fp8_gemm_blockscale/gemm"), blockscale_point(m, 384, 768, 1, true, dist), gpu);
      EXPECT_EQ(e.outcome, Outcome::pass) << "blockscale S=1 M=" << m << ": " << e.reason;
      int tiles = 0, launched = 2;  // wgmma and direct, where this device runs them, name their tile
      for (const auto& [variant, why] : e.skipped_variants) launched -= variant == "wgmma" || variant == "direct";
      for (const auto& [variant, form] : e.launch_configs)
        tiles += (variant == "wgmma" || variant == "direct") && form.rfind("tile 128x", 0) == 0 ? 1 : 0;
      EXPECT_EQ(tiles, launched) << "blockscale S=1 M=" << m;
      const CaseResult d = verify(*reg.find("fp8_gemm_blockscale/f7"), blockscale_point(m, 256, 384, 2, false, dist), gpu);
      EXPECT_EQ(d.outcome, Outcome::pass) << "f7 M=" << m << ": " << d.reason;
    }
    for (std::int64_t m : {1, 3, 16}) {
      const CaseResult b = verify(*reg.find("fp8_gemm/small_m"), gemm_point(m, 1536, 6144, dist), gpu);
      EXPECT_EQ(b.outcome, Outcome::pass) << "small_m M=" << m << ": " << b.reason;
    }
  }
}

}  // namespace
}  // namespace fb
