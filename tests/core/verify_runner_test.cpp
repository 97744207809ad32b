// The verify runner catches each kind of broken kernel and names it: unwritten elements (poison
// survives: mistrusted), a chain mismatch, nondeterminism, a constant output, NaN; a correct kernel
// passes every check.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/errors.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"
#include "support/test_family.hpp"

namespace fb {
namespace {

using testing::Fault;

CaseResult verify(Fault fault, std::int64_t n = 256) {
  const KernelCase kc = testing::doubling_case(fault);
  Point p;
  p.set("N", n);
  Session cpu("cpu");
  return verify_case(kc, p, VerifyOptions{}, cpu);
}

// The test family with options, at N = 64 on the CPU.
CaseResult verify_with(Fault fault, const testing::TestCaseOptions& o) {
  Point p;
  p.set("N", std::int64_t{64});
  Session cpu("cpu");
  return verify_case(testing::doubling_case(fault, o), p, VerifyOptions{}, cpu);
}

const CheckResult* find(const CaseResult& r, const std::string& id, bool passed) {
  for (const CheckResult& c : r.checks)
    if (c.id == id && c.passed == passed) return &c;
  return nullptr;
}

TEST(VerifyRunner, CorrectKernelPassesEveryCheck) {
  const CaseResult r = verify(Fault::none);
  EXPECT_EQ(r.outcome, Outcome::pass) << r.reason;
  EXPECT_NE(find(r, "check/pair/fused~chain/bitwise", true), nullptr);
  EXPECT_NE(find(r, "check/fp64/fused", true), nullptr);
  EXPECT_NE(find(r, "check/fp64/chain", true), nullptr);
  EXPECT_NE(find(r, "check/repeat/fused", true), nullptr);
  EXPECT_EQ(r.fingerprints.size(), 2u);
  EXPECT_EQ(r.fingerprints[0].second, r.fingerprints[1].second);  // fused and chain bytes are the same
}

TEST(VerifyRunner, UnwrittenElementIsMistrustedNotPassed) {
  const CaseResult r = verify(Fault::skip_last_element);
  EXPECT_EQ(r.outcome, Outcome::mistrusted);
  const CheckResult* unwritten = find(r, "check/trust/unwritten", false);
  ASSERT_NE(unwritten, nullptr);
  EXPECT_TRUE(unwritten->mistrusted);
  EXPECT_NE(unwritten->message.find("1 elements never written"), std::string::npos) << unwritten->message;
  EXPECT_NE(unwritten->message.find("[N=255]"), std::string::npos) << unwritten->message;
  // The chain check also fails: the NaN poison never matches.
  const CheckResult* chain = find(r, "check/pair/fused~chain/bitwise", false);
  ASSERT_NE(chain, nullptr);
  EXPECT_NE(chain->message.find("[N=255]"), std::string::npos) << chain->message;
}

TEST(VerifyRunner, ChainMismatchFailsWithFirstMismatch) {
  const CaseResult r = verify(Fault::chain_off_by_one_ulp);
  EXPECT_EQ(r.outcome, Outcome::fail);
  const CheckResult* chain = find(r, "check/pair/fused~chain/bitwise", false);
  ASSERT_NE(chain, nullptr);
  EXPECT_NE(chain->message.find("1 of 256 elements differ"), std::string::npos) << chain->message;
  EXPECT_NE(chain->message.find("first at [N=5] (index 5)"), std::string::npos) << chain->message;
  EXPECT_NE(find(r, "check/fp64/chain", false), nullptr);  // and the chain is off fp64 by an ulp
}

TEST(VerifyRunner, NondeterministicKernelFailsRepeatability) {
  const CaseResult r = verify(Fault::nondeterministic);
  EXPECT_NE(r.outcome, Outcome::pass);
  const CheckResult* repeat = find(r, "check/repeat/fused", false);
  ASSERT_NE(repeat, nullptr);
  EXPECT_FALSE(repeat->mistrusted);
}

TEST(VerifyRunner, ConstantOutputForVariedInputsIsMistrusted) {
  const CaseResult r = verify(Fault::constant_output);
  EXPECT_EQ(r.outcome, Outcome::mistrusted);
  EXPECT_NE(find(r, "check/trust/uniform", false), nullptr);
}

TEST(VerifyRunner, NanOutputNeverPasses) {
  const CaseResult r = verify(Fault::nan_output);
  EXPECT_EQ(r.outcome, Outcome::fail);
  const CheckResult* fp64 = find(r, "check/fp64/fused", false);
  ASSERT_NE(fp64, nullptr);
  EXPECT_NE(fp64->message.find("NaN"), std::string::npos);
  EXPECT_NE(find(r, "check/pair/fused~chain/bitwise", false), nullptr);  // identical NaN bytes still do not match
}

TEST(VerifyRunner, InjectedFaultIsCaughtByTheChainCheck) {
  const KernelCase kc = testing::doubling_case(Fault::none);
  Point p;
  p.set("N", std::int64_t{64});
  Session cpu("cpu");
  VerifyOptions options;
  options.fault = FaultInjection::flip_fused_element;
  const CaseResult r = verify_case(kc, p, options, cpu);
  EXPECT_EQ(r.outcome, Outcome::fail);
  const CheckResult* chain = find(r, "check/pair/fused~chain/bitwise", false);
  ASSERT_NE(chain, nullptr);
  EXPECT_NE(chain->message.find("first at [N=32]"), std::string::npos) << chain->message;
}

TEST(VerifyRunner, NondeterministicKernelIsCheckedWithinItsBoundNotBitwise) {
  const KernelCase kc = testing::doubling_case(Fault::jitter, /*deterministic=*/false);
  Point p;
  p.set("N", std::int64_t{256});
  Session cpu("cpu");
  const CaseResult r = verify_case(kc, p, VerifyOptions{}, cpu);
  EXPECT_EQ(r.outcome, Outcome::pass) << r.reason;
  EXPECT_NE(find(r, "check/pair/fused~chain/bound", true), nullptr);
  EXPECT_EQ(find(r, "check/repeat/fused", true), nullptr);  // no bitwise repeat claim
  EXPECT_NE(find(r, "check/trust/unwritten", true), nullptr);
  // Unwritten elements are still caught without a repeat claim.
  const CaseResult broken = verify_case(testing::doubling_case(Fault::skip_last_element, false), p, VerifyOptions{}, cpu);
  EXPECT_EQ(broken.outcome, Outcome::mistrusted);
}

TEST(VerifyRunner, EveryDeclaredPairIsCheckedAndNamed) {
  testing::TestCaseOptions o;
  o.third_variant = true;
  const CaseResult good = verify_with(Fault::none, o);
  EXPECT_EQ(good.outcome, Outcome::pass) << good.reason;
  EXPECT_NE(find(good, "check/pair/twin~fused/bitwise", true), nullptr);
  EXPECT_NE(find(good, "check/fp64/twin", true), nullptr);
  EXPECT_NE(find(good, "check/repeat/twin", true), nullptr);
  EXPECT_EQ(good.fingerprints.size(), 3u);
  const CaseResult bad = verify_with(Fault::twin_off_by_one_ulp, o);
  EXPECT_EQ(bad.outcome, Outcome::fail);
  const CheckResult* twin = find(bad, "check/pair/twin~fused/bitwise", false);
  ASSERT_NE(twin, nullptr);
  EXPECT_NE(twin->message.find("first at [N=5]"), std::string::npos) << twin->message;
  EXPECT_NE(find(bad, "check/pair/fused~chain/bitwise", true), nullptr);  // the other pair still holds
}

// A variant that writes some of the outputs (VariantSpec::writes) is checked on those alone; the
// poison it leaves in the others would otherwise be mistrusted, which is what an undeclared one gets.
TEST(VerifyRunner, VariantThatWritesFewerOutputsIsCheckedOnThoseItDeclares) {
  testing::TestCaseOptions o;
  o.third_variant = true;
  o.second_output = true;
  const CaseResult good = verify_with(Fault::none, o);
  EXPECT_EQ(good.outcome, Outcome::pass) << good.reason;
  EXPECT_NE(find(good, "check/pair/twin~fused/bitwise", true), nullptr);
  std::size_t twin_repeats = 0, twin_prints = 0;
  for (const CheckResult& c : good.checks) twin_repeats += c.id == "check/repeat/twin" ? 1 : 0;
  for (const auto& [name, print] : good.fingerprints) twin_prints += name.starts_with("twin/") ? 1 : 0;
  EXPECT_EQ(twin_repeats, 1u);  // y only
  EXPECT_EQ(twin_prints, 1u);
  EXPECT_EQ(good.fingerprints.size(), 5u);  // fused y, z; chain y, z; twin y

  o.twin_declares_writes = false;
  const CaseResult undeclared = verify_with(Fault::none, o);
  EXPECT_NE(undeclared.outcome, Outcome::pass);
  EXPECT_NE(find(undeclared, "check/trust/unwritten", false), nullptr);
}

TEST(VerifyRunner, CheckBudgetTakesASeededSubsetButPairsStillCoverWholeOutputs) {
  testing::TestCaseOptions o;
  o.check_cost_per_element = 1000.0;  // 1024 elements: 1.0e6 operations per variant
  Point p;
  p.set("N", std::int64_t{1024});
  Session cpu("cpu");
  VerifyOptions v;
  v.check_budget = 1.0e5;  // a tenth: about 13 of 128 units
  const CaseResult r = verify_case(testing::doubling_case(Fault::none, o), p, v, cpu);
  EXPECT_EQ(r.outcome, Outcome::pass) << r.reason;
  EXPECT_FALSE(r.subset.full);
  EXPECT_EQ(r.subset.total, 128);
  EXPECT_GE(r.subset.units.size(), 2u);
  EXPECT_LT(r.subset.units.size(), 20u);
  EXPECT_EQ(r.subset.units.front(), 0);
  EXPECT_EQ(r.subset.units.back(), 127);
  EXPECT_TRUE(std::is_sorted(r.subset.units.begin(), r.subset.units.end()));
  // The same seed and point give the same subset; a full check ignores the budget.
  const CaseResult again = verify_case(testing::doubling_case(Fault::none, o), p, v, cpu);
  EXPECT_EQ(again.subset.units, r.subset.units);
  v.full_check = true;
  EXPECT_TRUE(verify_case(testing::doubling_case(Fault::none, o), p, v, cpu).subset.full);
  // A chain error outside the subset's units (element 5 lies in unit 0, which is always checked,
  // so use the pair check instead): the pair compares whole outputs whatever the subset.
  v.full_check = false;
  const CaseResult bad = verify_case(testing::doubling_case(Fault::chain_off_by_one_ulp, o), p, v, cpu);
  EXPECT_EQ(bad.outcome, Outcome::fail);
  EXPECT_NE(find(bad, "check/pair/fused~chain/bitwise", false), nullptr);
}

TEST(VerifyRunner, SubsetChoiceIsProportionalToTheBudget) {
  testing::TestCaseOptions o;
  o.check_cost_per_element = 1.0;
  Point p;
  p.set("N", std::int64_t{8000});
  const auto inst = testing::doubling_case(Fault::none, o).make(p);
  VerifyOptions v;
  v.check_budget = 8000.0 * 2;  // two variants at 8000 each: exactly affordable
  EXPECT_TRUE(choose_check_subset(*inst, 2, 7, v).full);
  v.check_budget = 8000.0 * 2 / 4;  // a quarter of the units
  const CheckSubset s = choose_check_subset(*inst, 2, 7, v);
  EXPECT_FALSE(s.full);
  EXPECT_EQ(static_cast<std::int64_t>(s.units.size()), 1000 / 4);
  EXPECT_NE(choose_check_subset(*inst, 2, 8, v).units, s.units);  // another seed, other units
}

TEST(VerifyRunner, InputSeedDependsOnRunSeedCaseAndPoint) {
  Point a, b;
  a.set("N", std::int64_t{8});
  b.set("N", std::int64_t{16});
  EXPECT_EQ(input_seed_for(1, "x/y", a), input_seed_for(1, "x/y", a));
  EXPECT_NE(input_seed_for(1, "x/y", a), input_seed_for(2, "x/y", a));
  EXPECT_NE(input_seed_for(1, "x/y", a), input_seed_for(1, "x/z", a));
  EXPECT_NE(input_seed_for(1, "x/y", a), input_seed_for(1, "x/y", b));
}

TEST(VerifyRunner, GpuBackendWithoutDeviceIsADeviceError) {
  if (::getenv("FUSEBENCH_TEST_HAS_GPU")) GTEST_SKIP() << "a GPU is present";
  try {
    Session gpu("gpu");
    GTEST_SKIP() << "a GPU is present";
  } catch (const DeviceError& e) {
    EXPECT_FALSE(std::string(e.what()).empty());
  }
}

}  // namespace
}  // namespace fb
