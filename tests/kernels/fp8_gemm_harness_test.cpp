// The fp8 GEMM cases through the harness (verify_case): odd points pass on the CPU backend, a NaN
// input fails (never a pass), F7 with a producer that does not zero its buffer fails, shapes the
// kernels cannot take are InputErrors, a prefill point is a skip on the CPU, and the block-scale
// GEMM's direct form is checked on the C it writes. On a GPU the same
// points pass on the device (every variant that runs there, vendor included where present).
#include <gtest/gtest.h>

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
TEST(Fp8GemmHarness, BlockscaleDirectIsCheckedOnCAloneAndSkipsSplitK) {
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
  const CaseResult split = verify(kc, blockscale_point(17, 384, 384, 2, true), cpu);
  EXPECT_EQ(split.outcome, Outcome::pass) << split.reason;
  bool skipped = false;
  for (const auto& [variant, why] : split.skipped_variants)
    skipped = skipped || (variant == "direct" && why.find("S=1 points only") != std::string::npos);
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
