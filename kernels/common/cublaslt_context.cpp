#include "kernels/common/cublaslt_context.hpp"

#if FUSEBENCH_HAS_CUBLASLT
#include <cuda_runtime.h>

#include <mutex>

namespace fb {

const CublasLtContext& cublaslt_context() {
  static CublasLtContext context;
  static std::once_flag once;
  std::call_once(once, [] {
    if (const cublasStatus_t s = cublasLtCreate(&context.handle); s != CUBLAS_STATUS_SUCCESS) {
      context.error = std::string("cublasLtCreate failed: ") + cublasLtGetStatusName(s);
      return;
    }
    if (cudaMalloc(&context.workspace, kCublasLtWorkspaceBytes) != cudaSuccess)
      context.error = "no memory for the cuBLASLt workspace";
  });
  return context;
}

std::string cublaslt_status_text(const char* what, cublasStatus_t status) {
  return std::string(what) + " returned " + cublasLtGetStatusName(status);
}

}  // namespace fb
#endif
