// The one cuBLASLt handle and workspace of a process, shared by the fp8 GEMMs' vendor variants
// (kernels/fp8_gemm/fp8_gemm_vendor.cpp, kernels/fp8_gemm_blockscale/fp8_blockscale_vendor.cpp).
// Only in CUDA builds that found cuBLASLt (FUSEBENCH_HAS_CUBLASLT, kernels/CMakeLists.txt).
#pragma once

#if FUSEBENCH_HAS_CUBLASLT
#include <cublasLt.h>

#include <cstddef>
#include <string>

namespace fb {

inline constexpr std::size_t kCublasLtWorkspaceBytes = 32u << 20;

struct CublasLtContext {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;  // kCublasLtWorkspaceBytes of device memory
  std::string error;          // non-empty: no handle or no workspace (why); the variants skip
};

// Made on first use (thread-safe), kept for the process.
const CublasLtContext& cublaslt_context();

// "<what> returned <cuBLASLt's status name>", for skip reasons and DeviceError lines.
std::string cublaslt_status_text(const char* what, cublasStatus_t status);

}  // namespace fb
#endif
