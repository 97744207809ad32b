// Reading ahead into L2 for row kernels whose blocks each load a few rows and then compute for a
// while: a block asks L2 for the rows of the block that will take its place on the SM (the next
// wave of blocks), so that block's loads hit L2 instead of waiting on HBM. No registers and no
// shared memory are held for it, and it changes no result (a prefetch has no effect but timing).
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"

namespace fb {

// L2 prefetch of the cache line holding p. NVIDIA: prefetch.global.L2. AMD has no such instruction
// on CDNA2/3: there it does nothing.
__device__ inline void prefetch_l2(const void* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" : : "l"(p));
#else
  (void)p;
#endif
}

// The block reads ahead the contiguous bytes [p, p + bytes) together: one 128-byte line per thread
// (a prefetch per thread of its own 16-byte loads would ask for each line 8 times and cost six
// instructions a thread: run b747399 measured that slower).
__device__ inline void prefetch_l2_block_range(const void* p, std::int64_t bytes) {
  for (std::int64_t offset = static_cast<std::int64_t>(threadIdx.x) * 128; offset < bytes;
       offset += static_cast<std::int64_t>(blockDim.x) * 128)
    prefetch_l2(static_cast<const char*>(p) + offset);
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
