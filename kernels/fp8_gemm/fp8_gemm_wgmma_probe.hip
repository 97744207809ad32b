#include "kernels/fp8_gemm/fp8_gemm_wgmma_probe.hpp"

#include <mutex>

#include "kernels/common/flag_probe.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_device.hpp"

namespace fb {
namespace {

__global__ void wgmma_probe_kernel(int* out) { *out = FB_WGMMA_AVAILABLE; }

std::string probe() {
#if defined(__HIPCC__)
  return "no wgmma on AMD (the MFMA fp8 path is not written yet)";
#else
  return run_flag_probe(wgmma_probe_kernel, "wgmma", "this build has no sm_90a code for this device (wgmma needs sm_90a)");
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
