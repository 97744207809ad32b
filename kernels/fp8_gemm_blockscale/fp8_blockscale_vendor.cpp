// The block-scale GEMM's vendor variant: cuBLASLt with VEC128_32F (1x128 activation scales) and
// BLK128x128_32F (128x128 weight scales), found by CMake (CUDA::cublasLt; FUSEBENCH_HAS_CUBLASLT).
// Operand mapping and the scale layouts: fp8_blockscale_vendor.hpp. cuBLASLt runs these modes on
// sm_90 only (cuBLAS 12.9+); where the build has no cuBLASLt, or cuBLASLt has no algorithm for a
// point, the variant is a skip carrying the reason; where it runs and is wrong, it fails.
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_vendor.hpp"

#include "core/errors.hpp"

#if FUSEBENCH_HAS_CUBLASLT
#include "kernels/common/cublaslt_context.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <tuple>
#endif

namespace fb {

void fp8_blockscale_vendor_pad_weight_scales(const Fp8BlockscaleParams& p, const float* b_scale, float* out) {
  const std::int64_t kb = p.k_blocks(), row = blockscale_vendor_scale_row(kb);
  for (std::int64_t nb = 0; nb < p.n_blocks(); ++nb)
    for (std::int64_t j = 0; j < row; ++j) out[nb * row + j] = j < kb ? b_scale[nb * kb + j] : 0.0f;
}

void fp8_blockscale_vendor_k_major_scales(const Fp8BlockscaleParams& p, const float* a_scale, float* out) {
  const std::int64_t kb = p.k_blocks();
  for (std::int64_t m = 0; m < p.rows; ++m)
    for (std::int64_t j = 0; j < kb; ++j) out[j * p.rows + m] = a_scale[m * kb + j];
}

#if FUSEBENCH_HAS_CUBLASLT
namespace {

constexpr std::size_t kWorkspaceBytes = kCublasLtWorkspaceBytes;

struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::string error;  // non-empty: cuBLASLt cannot run this point (its answer)
};

struct Library {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::string error;
  std::mutex mutex;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, Plan> plans;
};

Library& library() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    const CublasLtContext& shared = cublaslt_context();
    lib.handle = shared.handle;
    lib.workspace = shared.workspace;
    lib.error = shared.error;
  });
  return lib;
}

Plan make_plan(Library& lib, std::int64_t m, std::int64_t n, std::int64_t k) {
  Plan p;
  auto check = [&p](cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS && p.error.empty()) p.error = cublaslt_status_text(what, s);
  };
  check(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  if (p.error.empty()) {
    const cublasOperation_t trans = CUBLAS_OP_T, keep = CUBLAS_OP_N;
    const std::int32_t weight_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    const std::int32_t activation_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    const std::int8_t fast_accum = 0;
    // A mode other than scalar needs its pointer set before the heuristic (cuBLASLt answers
    // INVALID_VALUE otherwise); the real scales replace these placeholders at launch.
    const void* placeholder = lib.workspace;
    check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)), "TRANSA");
    check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof(keep)), "TRANSB");
    check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof(fast_accum)),
          "FAST_ACCUM");
    check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &weight_mode, sizeof(weight_mode)),
          "A_SCALE_MODE (BLK128x128_32F)");
    check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &activation_mode,
                                         sizeof(activation_mode)),
          "B_SCALE_MODE (VEC128_32F)");
    check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &placeholder, sizeof(placeholder)),
          "A_SCALE_POINTER");
    check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &placeholder, sizeof(placeholder)),
          "B_SCALE_POINTER");
    check(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_8F_E4M3, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(n), k),
          "layout A");
    check(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_8F_E4M3, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(m), k),
          "layout B");
    check(cublasLtMatrixLayoutCreate(&p.d, CUDA_R_16BF, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(m), n),
          "layout D");
  }
  cublasLtMatmulPreference_t pref = nullptr;
  if (p.error.empty()) {
    check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const std::size_t ws = kWorkspaceBytes;
    if (p.error.empty())
      check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
            "MAX_WORKSPACE_BYTES");
  }
  if (p.error.empty()) {
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lib.handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &result, &found);
    if (s != CUBLAS_STATUS_SUCCESS)
      p.error = "cuBLASLt has no 1x128 x 128x128 block-scale algorithm here (" +
                cublaslt_status_text("cublasLtMatmulAlgoGetHeuristic", s) + ")";
    else if (found == 0)
      p.error = "cuBLASLt has no 1x128 x 128x128 block-scale algorithm here (the heuristic found none)";
    else
      p.algo = result.algo;
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  return p;
}

Plan& plan_for(Library& lib, const Fp8BlockscaleParams& q) {
  auto key = std::make_tuple(q.rows, q.cols, q.depth);
  auto it = lib.plans.find(key);
  if (it == lib.plans.end()) it = lib.plans.emplace(key, make_plan(lib, q.rows, q.cols, q.depth)).first;
  return it->second;
}

}  // namespace

std::string fp8_blockscale_vendor_unavailable(const Fp8BlockscaleParams& p) {
  if (p.flavour != Fp8Flavour::e4m3fn) return "cuBLASLt takes OCP e4m3 only (fp8=e4m3fnuz)";
  if (p.rows <= 0) return "no rows";
  Library& lib = library();
  if (!lib.error.empty()) return lib.error;
  std::lock_guard<std::mutex> lock(lib.mutex);
  return plan_for(lib, p).error;
}

void fp8_blockscale_vendor_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleVendorBuffers& b, void* stream) {
  if (const std::string why = fp8_blockscale_vendor_unavailable(p); !why.empty()) throw DeviceError("cuBLASLt: " + why);
  fp8_blockscale_vendor_transpose_scales_launch(p, b.a_scale, b.a_scale_k_major, stream);
  Library& lib = library();
  std::lock_guard<std::mutex> lock(lib.mutex);
  Plan& plan = plan_for(lib, p);
  const void* weight_scales = b.b_scale_lt;  // cuBLASLt's A is our B
  const void* activation_scales = b.a_scale_k_major;
  cublasStatus_t st =
      cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &weight_scales, sizeof(weight_scales));
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &activation_scales,
                                        sizeof(activation_scales));
  if (st != CUBLAS_STATUS_SUCCESS) throw DeviceError("cuBLASLt: " + cublaslt_status_text("setting the scale pointers", st));
  const float alpha = 1.0f, beta = 0.0f;
  st = cublasLtMatmul(lib.handle, plan.desc, &alpha, b.b, plan.a, b.a, plan.b, &beta, b.c, plan.d, b.c, plan.d, &plan.algo,
                      lib.workspace, kWorkspaceBytes, static_cast<cudaStream_t>(stream));
  if (st != CUBLAS_STATUS_SUCCESS) throw DeviceError("cuBLASLt: " + cublaslt_status_text("cublasLtMatmul", st));
}

#else

std::string fp8_blockscale_vendor_unavailable(const Fp8BlockscaleParams&) {
  return "this build has no cuBLASLt (CUDA::cublasLt not found, or not a CUDA build; hipBLASLt is not wired yet)";
}

void fp8_blockscale_vendor_launch(const Fp8BlockscaleParams& p, const Fp8BlockscaleVendorBuffers&, void*) {
  throw DeviceError("cuBLASLt: " + fp8_blockscale_vendor_unavailable(p));
}

#endif

}  // namespace fb
