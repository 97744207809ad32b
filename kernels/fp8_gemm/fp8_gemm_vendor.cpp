// The vendor variant of the per-token x per-channel fp8 GEMM: cuBLASLt (NVIDIA), found by CMake
// (CUDA::cublasLt; FUSEBENCH_HAS_CUBLASLT), with outer-vector fp32 scales: each (n, m) element of
// the product times b_scale[n] and a_scale[m]. Row-major C[M][N] is cuBLASLt's column-major
// D[N][M] = op(B)^T-style "TN" product: A_lt = b ([N][K] row-major = K x N column-major,
// transposed), B_lt = a ([M][K] row-major = K x M column-major). It has no emulation: it is checked
// against fp64 within the matrix-unit budget and against our variants within the same bound, and
// timed beside them. Where the build has no cuBLASLt, or cuBLASLt has no algorithm for the point,
// the variant is a skip with that reason; where it runs and is wrong, it fails.
#include <string>

#include "core/errors.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"

#if FUSEBENCH_HAS_CUBLASLT
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <tuple>
#endif

namespace fb {

#if FUSEBENCH_HAS_CUBLASLT
namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;

struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::string error;  // non-empty: cuBLASLt cannot run this point (why)
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
    if (cublasLtCreate(&lib.handle) != CUBLAS_STATUS_SUCCESS) {
      lib.error = "cublasLtCreate failed";
      return;
    }
    if (cudaMalloc(&lib.workspace, kWorkspaceBytes) != cudaSuccess) lib.error = "no memory for the cuBLASLt workspace";
  });
  return lib;
}

std::string status_text(const char* what, cublasStatus_t s) { return std::string(what) + " returned status " + std::to_string(static_cast<int>(s)); }

Plan make_plan(Library& lib, std::int64_t m, std::int64_t n, std::int64_t k) {
  Plan p;
  auto check = [&p](cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS && p.error.empty()) p.error = status_text(what, s);
    return p.error.empty();
  };
  if (!check(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate")) return p;
  const cublasOperation_t trans = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  const cublasLtMatmulMatrixScale_t outer = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)), "TRANSA");
  check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof(keep)), "TRANSB");
  check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &outer, sizeof(outer)), "A_SCALE_MODE");
  check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &outer, sizeof(outer)), "B_SCALE_MODE");
  check(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_8F_E4M3, k, n, k), "layout A");
  check(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_8F_E4M3, k, m, k), "layout B");
  check(cublasLtMatrixLayoutCreate(&p.d, CUDA_R_16BF, n, m, n), "layout D");
  if (!p.error.empty()) return p;
  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "preference");
  const std::size_t ws = kWorkspaceBytes;
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)), "workspace");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (p.error.empty()) {
    const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lib.handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &result, &found);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0)
      p.error = "cuBLASLt has no fp8 algorithm with outer-vector scales for this point (" +
                status_text("cublasLtMatmulAlgoGetHeuristic", s) + ", " + std::to_string(found) + " found)";
    else
      p.algo = result.algo;
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  return p;
}

Plan& plan_for(const Fp8GemmParams& q) {
  Library& lib = library();
  std::lock_guard<std::mutex> lock(lib.mutex);
  auto key = std::make_tuple(q.rows, q.cols, q.depth);
  auto it = lib.plans.find(key);
  if (it == lib.plans.end()) it = lib.plans.emplace(key, make_plan(lib, q.rows, q.cols, q.depth)).first;
  return it->second;
}

}  // namespace

std::string fp8_gemm_vendor_unavailable(const Fp8GemmParams& p) {
  if (p.flavour != Fp8Flavour::e4m3fn) return "cuBLASLt takes OCP e4m3 only (fp8=e4m3fnuz)";
  if (p.depth % 16 != 0 || p.cols % 16 != 0) return "cuBLASLt fp8 needs N and K multiples of 16";
  Library& lib = library();
  if (!lib.error.empty()) return lib.error;
  return plan_for(p).error;
}

void fp8_gemm_vendor_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream) {
  if (const std::string why = fp8_gemm_vendor_unavailable(p); !why.empty()) throw DeviceError("cuBLASLt: " + why);
  Library& lib = library();
  Plan& plan = plan_for(p);
  const void* a_scale = b.b_scale;  // cuBLASLt's A is our B: its outer vector has N entries
  const void* b_scale = b.a_scale;
  cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof(a_scale));
  cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof(b_scale));
  const float alpha = 1.0f, beta = 0.0f;
  const cublasStatus_t s =
      cublasLtMatmul(lib.handle, plan.desc, &alpha, b.b, plan.a, b.a, plan.b, &beta, b.c, plan.d, b.c, plan.d, &plan.algo,
                     lib.workspace, kWorkspaceBytes, static_cast<cudaStream_t>(stream));
  if (s != CUBLAS_STATUS_SUCCESS) throw DeviceError(status_text("cublasLtMatmul", s));
}

#else

std::string fp8_gemm_vendor_unavailable(const Fp8GemmParams&) {
  return "this build has no cuBLASLt (CUDA::cublasLt not found, or not a CUDA build)";
}

void fp8_gemm_vendor_launch(const Fp8GemmParams& p, const Fp8GemmBuffers&, void*) {
  throw DeviceError("cuBLASLt: " + fp8_gemm_vendor_unavailable(p));
}

#endif

}  // namespace fb
