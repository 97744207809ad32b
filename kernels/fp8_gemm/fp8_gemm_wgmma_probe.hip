#include "kernels/fp8_gemm/fp8_gemm_wgmma_probe.hpp"

#include <mutex>

#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_device.hpp"

namespace fb {
namespace {

__global__ void wgmma_probe_kernel(int* out) { *out = FB_WGMMA_AVAILABLE; }

std::string probe() {
#if defined(__HIPCC__)
  return "no wgmma on AMD (the MFMA fp8 path is not written yet)";
#else
  int* flag = nullptr;
  if (hipMalloc(&flag, sizeof(int)) != hipSuccess) return "could not allocate the wgmma probe's flag";
  int value = 0;
  hipError_t status = hipMemsetAsync(flag, 0, sizeof(int), nullptr);
  if (status == hipSuccess) {
    wgmma_probe_kernel<<<1, 1>>>(flag);
    status = hipGetLastError();
  }
  if (status == hipSuccess) status = hipMemcpy(&value, flag, sizeof(int), hipMemcpyDeviceToHost);
  hipFree(flag);
  if (status != hipSuccess) return std::string("the wgmma probe failed: ") + hipGetErrorString(status);
  return value == 1 ? std::string() : std::string("this build has no sm_90a code for this device (wgmma needs sm_90a)");
#endif
}

}  // namespace

std::string wgmma_device_unavailable() {
  static std::once_flag once;
  static std::string why;
  std::call_once(once, [] { why = probe(); });
  return why;
}

}  // namespace fb
