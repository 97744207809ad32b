// The current GPU's multiprocessor count (SMs on NVIDIA, CUs on AMD), read once per process, for
// launchers that shape their grids by it. Only a grid depends on it, never a result: any count
// gives the same bytes. 132 (an H100 or H200) where the runtime cannot say.
#pragma once

#include "kernels/common/hip_compat.hpp"

namespace fb {

inline int device_multiprocessors() {
  static const int count = [] {
    int device = 0, n = 0;
    const bool known = hipGetDevice(&device) == hipSuccess &&
                       hipDeviceGetAttribute(&n, hipDeviceAttributeMultiprocessorCount, device) == hipSuccess;
    return known && n > 0 ? n : 132;
  }();
  return count;
}

}  // namespace fb
