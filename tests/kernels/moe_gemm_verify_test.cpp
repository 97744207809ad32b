// MoE GEMM cases through the verify runner: the harness's own checks (output poison, pair claims,
// fp64 bounds, repeatability, case checks) pass on odd CPU points and fail on a NaN scale. The
// arithmetic and the kernels' indexing are tested in moe_gemm_test.cpp.
#include <gtest/gtest.h>

#include "core/registry.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"

namespace fb {
namespace {

// Every axis set (the runner takes points as the scenario resolves them).
Point point(const KernelCase& kc, std::int64_t T, const char* dist) {
  Point p;
  p.set("T", T);
  p.set("E", std::int64_t{9});
  p.set("k", std::int64_t{4});
  p.set("K", std::int64_t{288});
  p.set("I", std::int64_t{96});
  p.set("B", std::int64_t{32});
  p.set("routing", std::string("uniform"));
  if (kc.axis("activation")) p.set("activation", std::string("swiglu_oai"));
  p.set("dist", std::string(dist));
  return p;
}

TEST(MoeGemmVerify, OddPointsPassOnTheCpu) {
  Registry reg;
  register_all_families(reg);
  Session cpu("cpu");
  for (const char* name : {"moe_gemm/stage1", "moe_gemm/stage2", "moe_gemm/shared_fold"})
    for (const char* dist : {"normal", "edge"}) {
      const KernelCase& kc = *reg.find(name);
      const CaseResult r = verify_case(kc, point(kc, 40, dist), VerifyOptions{}, cpu);
      EXPECT_EQ(r.outcome, Outcome::pass) << name << " " << dist << ": " << r.reason;
    }
}

TEST(MoeGemmVerify, NanScaleFailsThePoint) {
  Registry reg;
  register_all_families(reg);
  Session cpu("cpu");
  for (const char* name : {"moe_gemm/stage1", "moe_gemm/stage2", "moe_gemm/shared_fold"}) {
    const KernelCase& kc = *reg.find(name);
    const CaseResult r = verify_case(kc, point(kc, 7, "nan"), VerifyOptions{}, cpu);
    EXPECT_EQ(r.outcome, Outcome::fail) << name << ": " << r.reason;
  }
}

}  // namespace
}  // namespace fb
