// The per-tile turnstile that adds split-K slices into the fp32 buffer in slice order (device side).
//
// Slice s of a tile waits (thread 0) until the tile's ticket reads turn s (slice 0 never waits),
// the block adds its slice into acc, a CTA barrier collects every thread's stores, and thread 0
// fences and hands the turn to slice s + 1 (on NVIDIA the barrier-then-one-fence pattern of a grid
// barrier: the CTA barrier orders the other threads' stores before thread 0's fence and ticket
// store, causality order being transitive; on the waiting side thread 0's read of the ticket and
// its fence come before the CTA barrier that releases the other threads' loads). On NVIDIA acc is
// read and written at L2 (`.cg`), never from an L1 line that an earlier slice on this SM could
// have left; on AMD through volatile pointers, and every thread fences before the barrier (the
// pattern kernels/router/router_device.hpp keeps on AMD: LLVM's AMDGPU sequences for "stores,
// workgroup barrier, another thread's agent-scope release" needed fixes in 2025, llvm-project PRs
// 160501 and 161638).
// Progress: the plain kernel's grid has the slice as its slowest dimension, so every block of
// slice s - 1 is dispatched before any block of slice s that waits on it (in-order block
// dispatch); the persistent wgmma kernel's argument is in fp8_blockscale_schedule.hpp.
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_math.hpp"

namespace fb {

// The one thread's halves of the turnstile, for kernels whose barrier is not __syncthreads (the
// wgmma kernel's consumer warpgroups, without the producer that runs ahead): turnstile_spin waits
// for turn `slice` and fences (call it, then the barrier that releases the other threads);
// turnstile_hand_on fences and hands the turn on (call it after the barrier that collects the
// other threads' stores; on AMD every thread fences before that barrier as well, see above).
__device__ inline void turnstile_spin(std::uint32_t* ticket, std::uint32_t epoch, std::int64_t slice) {
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
__device__ inline void turnstile_hand_on(std::uint32_t* ticket, std::uint32_t epoch, std::int64_t slice) {
  __threadfence();
  atomicExch(ticket, blockscale_ticket(epoch, slice + 1));
}

__device__ inline void turnstile_wait(std::uint32_t* ticket, std::uint32_t epoch, std::int64_t slice) {
  if (slice > 0 && threadIdx.x == 0) turnstile_spin(ticket, epoch, slice);
  __syncthreads();
}

__device__ inline void turnstile_pass(std::uint32_t* ticket, std::uint32_t epoch, std::int64_t slice) {
#if defined(__HIPCC__)
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) atomicExch(ticket, blockscale_ticket(epoch, slice + 1));
#else
  // Until run 57 every thread fenced (a gpu-scope fence and an L1 invalidation in each of 384
  // threads, 5 % of the wgmma kernel's samples at K = 768 in run 58p); one fence after the barrier
  // orders the same stores.
  __syncthreads();
  if (threadIdx.x == 0) turnstile_hand_on(ticket, epoch, slice);
#endif
}

// One element's share of the turnstile, in two halves: read acc (at L2), then acc = acc + part and,
// for the last slice, C. A thread with many elements (the wgmma kernel's 64) reads them all before
// it writes any, so the reads are in flight together.
__device__ inline float turnstile_read(const float* acc, std::int64_t index) {
#if defined(__HIPCC__)
  return *static_cast<const volatile float*>(acc + index);
#else
  return __ldcg(acc + index);
#endif
}
__device__ inline void turnstile_store(float* acc, std::int64_t index, float sum) {
#if defined(__HIPCC__)
  *static_cast<volatile float*>(acc + index) = sum;
#else
  __stcg(acc + index, sum);
#endif
}
__device__ inline void turnstile_write(float* acc, std::uint16_t* c, std::int64_t index, float prior, float part,
                                       bool last) {
  const float sum = prior + part;
  turnstile_store(acc, index, sum);
  if (last) c[index] = bf16_from_float(sum);
}
__device__ inline void turnstile_add(float* acc, std::uint16_t* c, std::int64_t index, float part, bool last) {
  turnstile_write(acc, c, index, turnstile_read(acc, index), part, last);
}

// The same for two adjacent elements of a row (index even, acc 8-byte and c 4-byte aligned): one
// 8-byte access to acc and one 4-byte store to C instead of two each. The wgmma kernel's epilogue
// (run 58p, K = 768: the 64 scalar volatile loads and stores of a thread were 46 % of its
// consumer warps' samples).
__device__ inline float2 turnstile_read_pair(const float* acc, std::int64_t index) {
#if defined(__HIPCC__)
  const volatile float* at = acc + index;
  return make_float2(at[0], at[1]);
#else
  return __ldcg(reinterpret_cast<const float2*>(acc + index));
#endif
}
__device__ inline void turnstile_write_pair(float* acc, std::uint16_t* c, std::int64_t index, float2 prior,
                                            float part_lo, float part_hi, bool last) {
  const float lo = prior.x + part_lo, hi = prior.y + part_hi;
#if defined(__HIPCC__)
  volatile float* at = acc + index;
  at[0] = lo;
  at[1] = hi;
#else
  __stcg(reinterpret_cast<float2*>(acc + index), make_float2(lo, hi));
#endif
  if (last)
    *reinterpret_cast<std::uint32_t*>(c + index) =
        bf16_from_float(lo) | (static_cast<std::uint32_t>(bf16_from_float(hi)) << 16);
}

}  // namespace fb
