// Device pieces of the all-reduce kernels: the rank barrier and the phase loops, shared by the
// simulated launches (no barrier: the stream orders the ranks) and the real-rank launch.
//
// Work mapping, the same with and without barriers: within a slice, block b takes units
// b*T + t, b*T + t + B*T, ... (T threads, B blocks; a unit is 8 elements for the vector paths,
// one element for the scalar path, one group of 32 for the quantized phases). Every phase of every
// rank uses it, so what block b of rank r reads from a peer was written by block b of that peer:
// per-block barriers are enough, no grid-wide one is needed.
#pragma once

// The runtime first: the codecs use its bit-cast intrinsics in device code.
#include "kernels/common/hip_compat.hpp"

#include "kernels/allreduce/allreduce_math.hpp"
#include "kernels/allreduce/allreduce_ranks.hpp"

namespace fb {

inline constexpr int kAllreduceThreads = 256;

// All ranks' block `blockIdx.x` meet here. Thread p < R signals peer p and waits for it; on a
// timeout it records the peer in this rank's error word and lets the block go on (its results are
// then void: the host reads the error word and ends the run).
__device__ inline void allreduce_barrier(const AllreduceBarrierArgs& bar, int rank, int ranks) {
  __shared__ std::uint32_t epoch;
  __syncthreads();
  const int b = blockIdx.x;
  if (threadIdx.x == 0) {
    AllreduceSignals* own = bar.signals[rank];
    epoch = own->counter[b] + 1u;
    own->counter[b] = epoch;
  }
  __syncthreads();
  const int p = threadIdx.x;
  if (p < ranks) {
    __threadfence_system();  // this block's writes before the signal
    volatile std::uint32_t* theirs = &bar.signals[p]->flags[b][rank];
    *theirs = epoch;
    volatile std::uint32_t* mine = &bar.signals[rank]->flags[b][p];
    const long long start = clock64();
    // Epochs only grow; a peer may already be one barrier ahead, never behind once it signalled.
    while (static_cast<int>(*mine - epoch) < 0) {
      if (clock64() - start > bar.timeout_cycles) {
        atomicExch(&bar.signals[rank]->error, static_cast<std::uint32_t>(p + 1));
        break;
      }
    }
    __threadfence_system();  // the peer's writes before ours read them
  }
  __syncthreads();
}

__device__ inline uint4 allreduce_sum_x8(const AllreduceRankView& v, int ranks, std::int64_t e) {
  float acc[8];
  for (int r = 0; r < ranks; ++r) {
    const uint4 w = *reinterpret_cast<const uint4*>(v.x[r] + e);
    const std::uint32_t ws[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float f = __uint_as_float(j % 2 ? (ws[j / 2] & 0xFFFF0000u) : (ws[j / 2] << 16));
      acc[j] = r == 0 ? f : acc[j] + f;
    }
  }
  uint4 o;
  o.x = bf16_from_float(acc[0]) | (static_cast<std::uint32_t>(bf16_from_float(acc[1])) << 16);
  o.y = bf16_from_float(acc[2]) | (static_cast<std::uint32_t>(bf16_from_float(acc[3])) << 16);
  o.z = bf16_from_float(acc[4]) | (static_cast<std::uint32_t>(bf16_from_float(acc[5])) << 16);
  o.w = bf16_from_float(acc[6]) | (static_cast<std::uint32_t>(bf16_from_float(acc[7])) << 16);
  return o;
}

// Reduce elements [begin, end) of every rank into this rank's output (kVec: 8 at a time; begin,
// end and every buffer 16-byte aligned).
template <bool kVec>
__device__ inline void allreduce_reduce_range(const AllreduceParams& p, const AllreduceRankView& v, std::int64_t begin,
                                              std::int64_t end) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (kVec) {
    for (std::int64_t e = begin + 8 * first; e < end; e += 8 * step)
      *reinterpret_cast<uint4*>(v.out[v.rank] + e) = allreduce_sum_x8(v, p.ranks, e);
  } else {
    for (std::int64_t e = begin + first; e < end; e += step)
      v.out[v.rank][e] = bf16_from_float(allreduce_rank_sum(v, p.ranks, e));
  }
}

// Copy elements [begin, end) of rank `owner`'s output into this rank's.
template <bool kVec>
__device__ inline void allreduce_copy_range(const AllreduceRankView& v, int owner, std::int64_t begin,
                                            std::int64_t end) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (kVec) {
    for (std::int64_t e = begin + 8 * first; e < end; e += 8 * step)
      *reinterpret_cast<uint4*>(v.out[v.rank] + e) = *reinterpret_cast<const uint4*>(v.out[owner] + e);
  } else {
    for (std::int64_t e = begin + first; e < end; e += step) v.out[v.rank][e] = v.out[owner][e];
  }
}

// Groups of slice s, by the block mapping above.
template <class Fn>
__device__ inline void allreduce_for_slice_groups(const AllreduceParams& p, int s, Fn fn) {
  const std::int64_t g0 = p.slice_begin(s) / kAllreduceGroup;
  const std::int64_t g1 = (p.slice_end(s) + kAllreduceGroup - 1) / kAllreduceGroup;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t g = g0 + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < g1; g += step) fn(g);
}

}  // namespace fb
