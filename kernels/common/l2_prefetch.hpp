// Reading ahead into L2 for row kernels whose blocks each load a few rows and then compute for a
// while: a block asks L2 for the rows of the block that will take its place on the SM (the next
// wave of blocks), so that block's loads hit L2 instead of waiting on HBM. No registers and no
// shared memory are held for it, and it changes no result (a prefetch has no effect but timing).
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"

namespace fb {

// L2 prefetch of the 16 bytes at p (its cache line). NVIDIA: prefetch.global.L2. AMD has no such
// instruction on CDNA2/3: there it does nothing.
__device__ inline void prefetch_l2(const void* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" : : "l"(p));
#else
  (void)p;
#endif
}

// The rows one wave of blocks covers: SMs x blocks per SM x rows per block, the distance from a
// block's rows to those of the block that follows it on its SM. The device's SM count is read
// once per process (fusebench runs on one device).
inline std::int64_t rows_per_wave(int blocks_per_sm, int rows_per_block) {
  static const int multiprocessors = [] {
    int device = 0, count = 0;
    if (hipGetDevice(&device) != hipSuccess ||
        hipDeviceGetAttribute(&count, hipDeviceAttributeMultiprocessorCount, device) != hipSuccess)
      return 0;  // no read-ahead rather than a wrong one
    return count;
  }();
  return static_cast<std::int64_t>(multiprocessors) * blocks_per_sm * rows_per_block;
}

}  // namespace fb
