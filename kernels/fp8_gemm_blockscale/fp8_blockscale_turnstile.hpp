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

// One element's share of the turnstile, in two halves: read acc (volatile: from L2, never a stale
// L1 line), then acc = acc + part and, for the last slice, C. A thread with many elements (the
// wgmma kernel's 64) reads them all before it writes any, so the reads are in flight together:
// one L2 round trip rather than one per element (runs 50 and 52: 1.08-1.13x at 32768 rows,
// K = 6144 and 2048).
__device__ inline float turnstile_read(const float* acc, std::int64_t index) {
  return *static_cast<const volatile float*>(acc + index);
}
__device__ inline void turnstile_write(float* acc, std::uint16_t* c, std::int64_t index, float prior, float part,
                                       bool last) {
  const float sum = prior + part;
  *static_cast<volatile float*>(acc + index) = sum;
  if (last) c[index] = bf16_from_float(sum);
}
__device__ inline void turnstile_add(float* acc, std::uint16_t* c, std::int64_t index, float part, bool last) {
  turnstile_write(acc, c, index, turnstile_read(acc, index), part, last);
}

}  // namespace fb
