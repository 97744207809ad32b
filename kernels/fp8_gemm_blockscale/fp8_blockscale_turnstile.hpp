// The per-tile turnstile that adds split-K slices into the fp32 buffer in slice order (device side).
//
// Slice s of a tile waits (one thread) until the tile's ticket reads turn s (slice 0 never waits),
// the block adds its slice into acc, every thread fences its stores, and one thread hands the turn
// to slice s + 1. acc is read and written through volatile pointers, so the values come from L2
// (where the previous slice's fenced stores are), never from a stale L1 line.
// Progress: the grid's slice index is its slowest dimension, so every block of slice s - 1 is
// dispatched before any block of slice s that waits on it (in-order block dispatch).
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_math.hpp"

namespace fb {

__device__ inline void turnstile_wait(std::uint32_t* ticket, std::uint32_t epoch, std::int64_t slice) {
  if (slice > 0 && threadIdx.x == 0) {
    const std::uint32_t want = blockscale_ticket(epoch, slice);
    while (atomicAdd(ticket, 0u) != want) {
#if defined(__HIPCC__)
      __builtin_amdgcn_s_sleep(1);
#else
      __nanosleep(64);
#endif
    }
    __threadfence();
  }
  __syncthreads();
}

__device__ inline void turnstile_pass(std::uint32_t* ticket, std::uint32_t epoch, std::int64_t slice) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) atomicExch(ticket, blockscale_ticket(epoch, slice + 1));
}

// One element's share of the turnstile: acc = acc + part; the last slice also writes C.
__device__ inline void turnstile_add(float* acc, std::uint16_t* c, std::int64_t index, float part, bool last) {
  volatile float* v = acc + index;
  const float sum = *v + part;
  *v = sum;
  if (last) c[index] = bf16_from_float(sum);
}

}  // namespace fb
