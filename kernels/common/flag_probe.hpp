// Does this device run the code a kernel needs? A probe kernel of one thread writes 1 to a flag
// when it was compiled with that code (an architecture macro), 0 otherwise; run_flag_probe launches
// it once and says why not, in one line (empty: it runs). So a build without the code for this
// device skips the variant with its reason instead of running an empty kernel. NVIDIA only: on AMD
// the callers say why before calling it. Include from .hip sources.
#pragma once

#include <string>

#include "kernels/common/hip_compat.hpp"

namespace fb {

template <class Kernel>
std::string run_flag_probe(Kernel kernel, const std::string& what, const std::string& missing) {
  int* flag = nullptr;
  if (hipMalloc(&flag, sizeof(int)) != hipSuccess) return "could not allocate the " + what + " probe's flag";
  int value = 0;
  hipError_t status = hipMemsetAsync(flag, 0, sizeof(int), nullptr);
  if (status == hipSuccess) {
    kernel<<<1, 1>>>(flag);
    status = hipGetLastError();
  }
  if (status == hipSuccess) status = hipMemcpy(&value, flag, sizeof(int), hipMemcpyDeviceToHost);
  (void)hipFree(flag);  // nothing to do if the free fails: the probe's answer is in hand
  if (status != hipSuccess) return "the " + what + " probe failed: " + hipGetErrorString(status);
  return value == 1 ? std::string() : missing;
}

}  // namespace fb
