// The fp8 GEMMs' vendor (cuBLASLt) variants. On the CPU: the weight scales are padded into the
// layout cuBLASLt documents for BLK128x128_32F (rows of round_up(K/128, 4), zeros in the pad: the
// K = 768 case PyTorch's wrapper gets wrong), the activation scales transpose into VEC128_32F's
// token-contiguous layout, and the variants are skips with their reasons where they cannot run
// (CPU backend, e4m3fnuz, split-K points) while the other variants still pass. On a GPU: the
// transpose kernel equals its host reference bitwise, and every point either runs the vendor
// within the fp64 budget (a pass, vendor included) or skips it with cuBLASLt's reason.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/registry.hpp"
#include "core/session.hpp"
#include "core/verify_runner.hpp"
#include "kernels/fp8_gemm/fp8_gemm_inputs.hpp"
#include "kernels/fp8_gemm/fp8_gemm_vendor.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_vendor.hpp"
#include "support/skip_without_gpu.hpp"

namespace fb {
namespace {

Point point(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t s = 0, const char* fp8 = "e4m3fn") {
  Point pt;
  pt.set("M", m);
  pt.set("N", n);
  pt.set("K", k);
  if (s > 0) pt.set("S", s);
  pt.set("fp8", std::string(fp8));
  pt.set("dist", std::string("normal"));
  return pt;
}

std::string skip_of(const CaseResult& r, const std::string& variant) {
  for (const auto& [name, why] : r.skipped_variants)
    if (name == variant) return why;
  return {};
}

const CheckResult* check_named(const CaseResult& r, const std::string& id) {
  for (const CheckResult& c : r.checks)
    if (c.id == id) return &c;
  return nullptr;
}

TEST(Fp8BlockscaleVendor, WeightScalesArePaddedToRowsOfFourKBlocks) {
  for (std::int64_t k : {128, 384, 768, 2048, 6144}) {
    const Fp8BlockscaleParams p{4, 384, k, 1, Fp8Flavour::e4m3fn};
    const std::int64_t kb = p.k_blocks(), row = blockscale_vendor_scale_row(kb);
    EXPECT_EQ(row % 4, 0);
    EXPECT_GE(row, kb);
    EXPECT_LT(row - kb, 4);
    std::vector<float> bs(p.n_blocks() * kb);
    fill_fp8_scales(bs.data(), static_cast<std::int64_t>(bs.size()), 7, 3);
    std::vector<float> out(p.n_blocks() * row, -1.0f);
    fp8_blockscale_vendor_pad_weight_scales(p, bs.data(), out.data());
    for (std::int64_t nb = 0; nb < p.n_blocks(); ++nb)
      for (std::int64_t j = 0; j < row; ++j)
        EXPECT_EQ(out[nb * row + j], j < kb ? bs[nb * kb + j] : 0.0f) << "K=" << k << " nb=" << nb << " j=" << j;
  }
  EXPECT_EQ(blockscale_vendor_scale_row(6), 8);  // K = 768: the shared expert's down projection
}

TEST(Fp8BlockscaleVendor, ActivationScalesTransposeToTokenContiguous) {
  const Fp8BlockscaleParams p{5, 256, 768, 1, Fp8Flavour::e4m3fn};
  std::vector<float> as(p.rows * p.k_blocks());
  for (std::size_t i = 0; i < as.size(); ++i) as[i] = static_cast<float>(i);
  std::vector<float> out(as.size(), -1.0f);
  fp8_blockscale_vendor_k_major_scales(p, as.data(), out.data());
  for (std::int64_t m = 0; m < p.rows; ++m)
    for (std::int64_t kb = 0; kb < p.k_blocks(); ++kb) EXPECT_EQ(out[kb * p.rows + m], as[m * p.k_blocks() + kb]);
}

TEST(Fp8GemmVendor, IsASkipWithItsReasonOnTheCpuAndTheOtherVariantsStillPass) {
  Registry reg;
  register_all_families(reg);
  Session cpu("cpu");
  const CaseResult a = verify_case(*reg.find("fp8_gemm/ptpc"), point(5, 128, 256), VerifyOptions{}, cpu);
  EXPECT_EQ(a.outcome, Outcome::pass) << a.reason;
  EXPECT_NE(skip_of(a, "vendor").find("GPU only"), std::string::npos) << skip_of(a, "vendor");
  const CaseResult b = verify_case(*reg.find("fp8_gemm_blockscale/gemm"), point(4, 256, 768, 1), VerifyOptions{}, cpu);
  EXPECT_EQ(b.outcome, Outcome::pass) << b.reason;
  EXPECT_NE(skip_of(b, "vendor").find("GPU only"), std::string::npos) << skip_of(b, "vendor");
}

TEST(Fp8BlockscaleVendor, RefusesWhatItCannotRunWithAReason) {
  Registry reg;
  register_all_families(reg);
  const KernelCase& kc = *reg.find("fp8_gemm_blockscale/gemm");
  const VariantId vendor = kc.variant_id("vendor");
  EXPECT_FALSE(kc.variants[vendor].has_emulation);
  EXPECT_EQ(kc.variants[vendor].launches, 2);  // the scales' transpose, the GEMM
  auto reason = [&](const Point& pt) { return kc.make(pt)->variant_skip_reason(vendor, Backend::gpu); };
  EXPECT_NE(reason(point(4, 256, 768, 2)).find("S=1"), std::string::npos);
  EXPECT_NE(reason(point(4, 256, 768, 1, "e4m3fnuz")).find("OCP e4m3"), std::string::npos);
  EXPECT_NE(reason(point(4, 256, 16384, 1)).find("K <= 8192"), std::string::npos);
  // The padded weight scales are a prepared weight input of the case, sized for cuBLASLt.
  const auto inputs = kc.make(point(4, 256, 768, 1))->inputs();
  ASSERT_EQ(inputs.size(), 5u);
  EXPECT_EQ(inputs[4].name, "b_scale_lt");
  EXPECT_TRUE(inputs[4].weight);
  EXPECT_EQ(inputs[4].elements(), 2 * 8);
}

#if FUSEBENCH_HAS_GPU
TEST(Fp8BlockscaleVendorGpu, TransposeKernelEqualsItsHostReference) {
  FB_SKIP_WITHOUT_GPU();
  for (std::int64_t m : {1, 3, 4, 192, 1000}) {
    const Fp8BlockscaleParams p{m, 256, 6144, 1, Fp8Flavour::e4m3fn};
    std::vector<float> as(p.rows * p.k_blocks());
    fill_fp8_scales(as.data(), static_cast<std::int64_t>(as.size()), 11, 1);
    std::vector<float> want(as.size()), got(as.size());
    fp8_blockscale_vendor_k_major_scales(p, as.data(), want.data());
    void* in = gpu::allocate(as.size() * 4);
    void* out = gpu::allocate(as.size() * 4);
    gpu::copy_to_device(in, as.data(), as.size() * 4);
    gpu::fill_bytes(out, 0xFF, as.size() * 4, nullptr);
    fp8_blockscale_vendor_transpose_scales_launch(p, static_cast<const float*>(in), static_cast<float*>(out), nullptr);
    gpu::synchronize(nullptr);
    gpu::copy_to_host(got.data(), out, got.size() * 4);
    gpu::release(in);
    gpu::release(out);
    EXPECT_EQ(got, want) << "M=" << m;
  }
}

// Every point: the vendor runs and the whole case passes with its fp64 check among the checks, or
// it is a skip carrying the vendor's reason. Printed, so the GPU log says which.
TEST(Fp8BlockscaleVendorGpu, RunsWithinTheFp64BudgetOrSkipsWithTheVendorsReason) {
  FB_SKIP_WITHOUT_GPU();
  Registry reg;
  register_all_families(reg);
  Session gpu("gpu");
  const KernelCase& kc = *reg.find("fp8_gemm_blockscale/gemm");
  struct Shape {
    std::int64_t n, k;
  };
  for (const Shape s : {Shape{256, 384}, Shape{256, 768}, Shape{6144, 768}, Shape{2304, 6144}, Shape{6144, 2048}}) {
    for (std::int64_t m : {3, 4, 16, 100, 192}) {
      const CaseResult r = verify_case(kc, point(m, s.n, s.k, 1), VerifyOptions{}, gpu);
      const std::string what = "M=" + std::to_string(m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k);
      const std::string why = skip_of(r, "vendor");
      const CheckResult* fp64 = check_named(r, "check/fp64/vendor");
      std::printf("blockscale vendor %s: %s\n", what.c_str(),
                  !why.empty() ? ("skipped: " + why).c_str() : (fp64 && fp64->passed ? "ran, fp64 pass" : "ran, FAILED"));
      EXPECT_EQ(r.outcome, Outcome::pass) << what << ": " << r.reason;
      if (why.empty()) {
        ASSERT_NE(fp64, nullptr) << what;
        EXPECT_TRUE(fp64->passed) << what << ": " << fp64->message;
      }
    }
  }
}

TEST(Fp8GemmVendorGpu, RunsWithinTheFp64BudgetInOneOfItsFormsOrSkipsWithTheVendorsReason) {
  FB_SKIP_WITHOUT_GPU();
  Registry reg;
  register_all_families(reg);
  Session gpu("gpu");
  const KernelCase& kc = *reg.find("fp8_gemm/ptpc");
  struct Shape {
    std::int64_t n, k;
  };
  for (const Shape s : {Shape{1536, 6144}, Shape{6144, 768}, Shape{256, 384}}) {
    for (std::int64_t m : {1, 3, 16, 192}) {
      const CaseResult r = verify_case(kc, point(m, s.n, s.k), VerifyOptions{}, gpu);
      const std::string what = "M=" + std::to_string(m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k);
      const std::string why = skip_of(r, "vendor");
      const Fp8GemmVendorForm form = fp8_gemm_vendor_form({m, s.n, s.k, Fp8Flavour::e4m3fn});
      std::printf("ptpc vendor %s: %s\n", what.c_str(),
                  !why.empty() ? ("skipped: " + why).c_str() : fp8_gemm_vendor_form_name(form));
      EXPECT_EQ(r.outcome, Outcome::pass) << what << ": " << r.reason;
      if (why.empty()) {
        EXPECT_NE(form, Fp8GemmVendorForm::none) << what;
        const CheckResult* fp64 = check_named(r, "check/fp64/vendor");
        ASSERT_NE(fp64, nullptr) << what;
        EXPECT_TRUE(fp64->passed) << what << ": " << fp64->message;
      }
    }
  }
}
#endif  // FUSEBENCH_HAS_GPU

}  // namespace
}  // namespace fb
