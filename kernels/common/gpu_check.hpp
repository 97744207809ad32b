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

// Multiprocessors (SMs, CUs) of device 0, for persistent grids (132 if the query fails).
inline int device_multiprocessors() {
  static const int count = [] {
    int n = 0;
    return hipDeviceGetAttribute(&n, hipDeviceAttributeMultiprocessorCount, 0) == hipSuccess && n > 0 ? n : 132;
  }();
  return count;
}

}  // namespace fb
