// Turns a HIP/CUDA error into a DeviceError naming the call (one line, exit code 3).
#pragma once

#include <string>

#include "core/errors.hpp"
#include "kernels/common/hip_compat.hpp"

namespace fb {

inline void gpu_check(hipError_t status, const char* what) {
  if (status != hipSuccess) throw DeviceError(std::string(what) + ": " + hipGetErrorString(status));
}

// After a launch: a bad configuration shows up here, a fault inside the kernel at the next sync.
inline void gpu_check_launch(const char* kernel) { gpu_check(hipGetLastError(), kernel); }

}  // namespace fb
