// Block-wide reductions, written once. Max is exact and order-free, so the wave width (32 or 64)
// and the tree shape cannot change its result; sums need a canonical order and live elsewhere.
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"

namespace fb {

// Max over the 16 lanes of an aligned lane group (a group of 16 threads owning one 128-element
// fp8 group). Every lane gets the result.
__device__ inline std::uint32_t group16_max_u32(std::uint32_t v) {
#pragma unroll
  for (int mask = 8; mask > 0; mask >>= 1) {
    const std::uint32_t other = shfl_xor_u32(v, mask);
    v = other > v ? other : v;
  }
  return v;
}

// Per-half unsigned max of two pairs of 16-bit values (one instruction on NVIDIA).
__device__ inline std::uint32_t max_u16x2(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __vmaxu2(a, b);
#else
  const std::uint32_t alo = a & 0xFFFFu, blo = b & 0xFFFFu, ahi = a & 0xFFFF0000u, bhi = b & 0xFFFF0000u;
  return (ahi > bhi ? ahi : bhi) | (alo > blo ? alo : blo);
#endif
}

// group16_max_u32 for two 16-bit values per lane, each half maxed on its own.
__device__ inline std::uint32_t group16_max_u16x2(std::uint32_t v) {
#pragma unroll
  for (int mask = 8; mask > 0; mask >>= 1) v = max_u16x2(v, shfl_xor_u32(v, mask));
  return v;
}

// Max over aligned groups of kGroup threads (a power of two from 16 up to the whole block), each
// thread getting its own group's result. Inside a wave the exchange stays within the group;
// groups wider than a wave combine their waves through `scratch` (one word per wave). Whether a
// group fits in a wave is the same for every thread, so all threads reach the barriers or none.
template <int kGroup>
__device__ inline std::uint32_t grouped_max_u32(std::uint32_t v, std::uint32_t* scratch) {
  const int width = kGroup < warpSize ? kGroup : warpSize;
  constexpr int kMaxWidth = kGroup < kWidestWave ? kGroup : kWidestWave;  // a bound known at compile time
#pragma unroll
  for (int mask = kMaxWidth / 2; mask > 0; mask >>= 1) {
    if (mask >= width) continue;  // wave32 on a wave64 platform
    const std::uint32_t other = shfl_xor_u32(v, mask);
    v = other > v ? other : v;
  }
  if (kGroup <= warpSize) return v;
  if (threadIdx.x % warpSize == 0) scratch[threadIdx.x / warpSize] = v;
  __syncthreads();
  const int waves = kGroup / warpSize;
  const int first = static_cast<int>(threadIdx.x / kGroup) * waves;
  std::uint32_t m = 0;
  for (int w = 0; w < waves; ++w) m = scratch[first + w] > m ? scratch[first + w] : m;
  __syncthreads();
  return m;
}

}  // namespace fb
