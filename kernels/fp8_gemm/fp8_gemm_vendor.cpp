// The vendor variant of the per-token x per-channel fp8 GEMM: cuBLASLt (NVIDIA), found by CMake
// (CUDA::cublasLt; FUSEBENCH_HAS_CUBLASLT). Row-major C[M][N] is cuBLASLt's column-major D[N][M]
// in the "TN" form fp8 needs on Hopper: A_lt = b ([N][K] row-major = K x N column-major, op T),
// B_lt = a ([M][K] row-major = K x M column-major, op N), m_lt = N, n_lt = M.
//
// Two forms (fp8_gemm_vendor.hpp), tried in order when a shape is first planned:
//   outer_vector   A/B scale mode OUTER_VEC_32F: cuBLASLt's A scale has N entries (b_scale), its
//                  B scale M entries (a_scale); bf16 D. One launch.
//   fp32_epilogue  unit scales, fp32 D into a buffer this file owns, then our epilogue kernel
//                  (fp8_gemm_vendor_epilogue.hip) in the contract's order. Two launches.
// The heuristic is asked with the scale pointers already set (placeholders: a mode other than
// scalar needs a pointer there, or cuBLASLt answers CUBLAS_STATUS_INVALID_VALUE, which is what the
// first version of this variant got on the H200 at every point). Fast accumulation stays off, so
// cuBLASLt promotes its fp8 partials into fp32 as our matrix-unit bound assumes.
// It has no emulation: it is checked against fp64 within the matrix-unit budget and against our
// variants within the same bound, and timed beside them. A point neither form runs is a skip with
// cuBLASLt's answers; one that runs and is wrong fails.
#include <string>

#include "core/errors.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/fp8_gemm/fp8_gemm_vendor.hpp"

#if FUSEBENCH_HAS_CUBLASLT
#include "kernels/common/cublaslt_context.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#endif

namespace fb {

const char* fp8_gemm_vendor_form_name(Fp8GemmVendorForm f) {
  switch (f) {
    case Fp8GemmVendorForm::outer_vector: return "outer-vector scales (one cuBLASLt call)";
    case Fp8GemmVendorForm::fp32_epilogue: return "fp32 output with unit scales, then the epilogue kernel (2 launches)";
    case Fp8GemmVendorForm::none: break;
  }
  return "none";
}

#if FUSEBENCH_HAS_CUBLASLT
namespace {

constexpr std::size_t kWorkspaceBytes = kCublasLtWorkspaceBytes;

struct Plan {
  Fp8GemmVendorForm form = Fp8GemmVendorForm::none;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::string error;  // non-empty: cuBLASLt cannot run this point (its answers)
};

struct Library {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  float* acc = nullptr;  // the fp32_epilogue form's D, grown at plan time to the largest M x N
  std::size_t acc_bytes = 0;
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

void release(Plan& p) {
  if (p.desc) cublasLtMatmulDescDestroy(p.desc);
  if (p.a) cublasLtMatrixLayoutDestroy(p.a);
  if (p.b) cublasLtMatrixLayoutDestroy(p.b);
  if (p.d) cublasLtMatrixLayoutDestroy(p.d);
  p.desc = nullptr;
  p.a = p.b = p.d = nullptr;
}

// Builds the descriptors of one form and asks the heuristic. Empty on success (p holds the plan),
// else cuBLASLt's answer (p released).
std::string try_form(Library& lib, Plan& p, Fp8GemmVendorForm form, std::int64_t m, std::int64_t n, std::int64_t k) {
  std::string error;
  auto check = [&error](cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS && error.empty()) error = cublaslt_status_text(what, s);
  };
  const bool outer = form == Fp8GemmVendorForm::outer_vector;
  check(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  if (error.empty()) {
    const cublasOperation_t trans = CUBLAS_OP_T, keep = CUBLAS_OP_N;
    const std::int8_t fast_accum = 0;
    check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)), "TRANSA");
    check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof(keep)), "TRANSB");
    check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof(fast_accum)),
          "FAST_ACCUM");
    if (outer) {
      const std::int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
      const void* placeholder = lib.workspace;  // replaced by the real vectors at launch
      check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof(mode)), "A_SCALE_MODE");
      check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof(mode)), "B_SCALE_MODE");
      check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &placeholder, sizeof(placeholder)),
            "A_SCALE_POINTER");
      check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &placeholder, sizeof(placeholder)),
            "B_SCALE_POINTER");
    }
    check(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_8F_E4M3, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(n), k),
          "layout A");
    check(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_8F_E4M3, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(m), k),
          "layout B");
    check(cublasLtMatrixLayoutCreate(&p.d, outer ? CUDA_R_16BF : CUDA_R_32F, static_cast<std::uint64_t>(n),
                                     static_cast<std::uint64_t>(m), n),
          "layout D");
  }
  cublasLtMatmulPreference_t pref = nullptr;
  if (error.empty()) {
    check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const std::size_t ws = kWorkspaceBytes;
    if (error.empty())
      check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
            "MAX_WORKSPACE_BYTES");
  }
  if (error.empty()) {
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lib.handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &result, &found);
    if (s != CUBLAS_STATUS_SUCCESS)
      error = cublaslt_status_text("cublasLtMatmulAlgoGetHeuristic", s);
    else if (found == 0)
      error = "cublasLtMatmulAlgoGetHeuristic found no algorithm";
    else
      p.algo = result.algo;
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (!error.empty()) release(p);
  return error;
}

// The fp32_epilogue form's buffer: grown here, at plan time (before any graph capture), never in a launch.
std::string reserve_acc(Library& lib, std::int64_t m, std::int64_t n) {
  const std::size_t need = static_cast<std::size_t>(m) * static_cast<std::size_t>(n) * sizeof(float);
  if (need <= lib.acc_bytes) return {};
  if (lib.acc) {
    cudaDeviceSynchronize();  // the old buffer may still be read by queued work
    cudaFree(lib.acc);
    lib.acc = nullptr;
    lib.acc_bytes = 0;
  }
  void* p = nullptr;
  if (cudaMalloc(&p, need) != cudaSuccess) {
    cudaGetLastError();
    return "no device memory for the fp32 output of the fallback form (" + std::to_string(need) + " bytes)";
  }
  lib.acc = static_cast<float*>(p);
  lib.acc_bytes = need;
  return {};
}

Plan make_plan(Library& lib, std::int64_t m, std::int64_t n, std::int64_t k) {
  Plan p;
  const std::string outer = try_form(lib, p, Fp8GemmVendorForm::outer_vector, m, n, k);
  if (outer.empty()) {
    p.form = Fp8GemmVendorForm::outer_vector;
    return p;
  }
  const std::string fp32 = try_form(lib, p, Fp8GemmVendorForm::fp32_epilogue, m, n, k);
  if (fp32.empty()) {
    if (std::string why = reserve_acc(lib, m, n); !why.empty()) {
      release(p);
      p.error = std::move(why);
      return p;
    }
    p.form = Fp8GemmVendorForm::fp32_epilogue;
    return p;
  }
  p.error = "cuBLASLt runs neither form here: outer-vector scales: " + outer + "; fp32 output: " + fp32;
  return p;
}

Plan& plan_for(Library& lib, const Fp8GemmParams& q) {
  auto key = std::make_tuple(q.rows, q.cols, q.depth);
  auto it = lib.plans.find(key);
  if (it == lib.plans.end()) it = lib.plans.emplace(key, make_plan(lib, q.rows, q.cols, q.depth)).first;
  return it->second;
}

std::string shape_refusal(const Fp8GemmParams& p) {
  if (p.flavour != Fp8Flavour::e4m3fn) return "cuBLASLt takes OCP e4m3 only (fp8=e4m3fnuz)";
  if (p.depth % 16 != 0 || p.cols % 16 != 0) return "cuBLASLt fp8 needs N and K multiples of 16";
  if (p.rows <= 0) return "no rows";
  return {};
}

}  // namespace

std::string fp8_gemm_vendor_unavailable(const Fp8GemmParams& p) {
  if (std::string why = shape_refusal(p); !why.empty()) return why;
  Library& lib = library();
  if (!lib.error.empty()) return lib.error;
  std::lock_guard<std::mutex> lock(lib.mutex);
  return plan_for(lib, p).error;
}

Fp8GemmVendorForm fp8_gemm_vendor_form(const Fp8GemmParams& p) {
  if (!fp8_gemm_vendor_unavailable(p).empty()) return Fp8GemmVendorForm::none;
  Library& lib = library();
  std::lock_guard<std::mutex> lock(lib.mutex);
  return plan_for(lib, p).form;
}

int fp8_gemm_vendor_launches(const Fp8GemmParams& p) {
  return fp8_gemm_vendor_form(p) == Fp8GemmVendorForm::fp32_epilogue ? 2 : 1;
}

void fp8_gemm_vendor_launch(const Fp8GemmParams& p, const Fp8GemmBuffers& b, void* stream) {
  if (const std::string why = fp8_gemm_vendor_unavailable(p); !why.empty()) throw DeviceError("cuBLASLt: " + why);
  Library& lib = library();
  std::lock_guard<std::mutex> lock(lib.mutex);
  Plan& plan = plan_for(lib, p);
  const float alpha = 1.0f, beta = 0.0f;
  const auto s = static_cast<cudaStream_t>(stream);
  if (plan.form == Fp8GemmVendorForm::outer_vector) {
    const void* a_scale = b.b_scale;  // cuBLASLt's A is our B: its outer vector has N entries
    const void* b_scale = b.a_scale;
    cublasStatus_t st = cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof(a_scale));
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof(b_scale));
    if (st != CUBLAS_STATUS_SUCCESS) throw DeviceError("cuBLASLt: " + cublaslt_status_text("setting the scale pointers", st));
    st = cublasLtMatmul(lib.handle, plan.desc, &alpha, b.b, plan.a, b.a, plan.b, &beta, b.c, plan.d, b.c, plan.d, &plan.algo,
                        lib.workspace, kWorkspaceBytes, s);
    if (st != CUBLAS_STATUS_SUCCESS) throw DeviceError("cuBLASLt: " + cublaslt_status_text("cublasLtMatmul", st));
    return;
  }
  const cublasStatus_t st = cublasLtMatmul(lib.handle, plan.desc, &alpha, b.b, plan.a, b.a, plan.b, &beta, lib.acc, plan.d,
                                           lib.acc, plan.d, &plan.algo, lib.workspace, kWorkspaceBytes, s);
  if (st != CUBLAS_STATUS_SUCCESS) throw DeviceError("cuBLASLt: " + cublaslt_status_text("cublasLtMatmul (fp32 output)", st));
  fp8_gemm_vendor_epilogue_launch(p, lib.acc, b, stream);
}

#else

std::string fp8_gemm_vendor_unavailable(const Fp8GemmParams&) {
  return "this build has no cuBLASLt (CUDA::cublasLt not found, or not a CUDA build; hipBLASLt is not wired yet)";
}

Fp8GemmVendorForm fp8_gemm_vendor_form(const Fp8GemmParams&) { return Fp8GemmVendorForm::none; }

int fp8_gemm_vendor_launches(const Fp8GemmParams&) { return 1; }

void fp8_gemm_vendor_launch(const Fp8GemmParams& p, const Fp8GemmBuffers&, void*) {
  throw DeviceError("cuBLASLt: " + fp8_gemm_vendor_unavailable(p));
}

#endif

}  // namespace fb
