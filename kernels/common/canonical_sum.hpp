// The canonical fp32 sum of a row (docs/numeric-contract.md#one-result-on-every-platform): one
// order, fixed by the row length alone, shared by every GPU kernel (block of 128 threads) and its
// CPU twin. First user: the RMSNorm sum of squares (F1); written for any per-element term.
//
// Order, for a row of n terms t_0 .. t_{n-1}:
//   1. chunks of 8 consecutive terms are dealt round-robin to 256 partials: term i belongs to
//      partial j = (i / 8) % 256;
//   2. each partial starts at +0 and adds its terms in increasing i, one fp32 add per term (the
//      term itself is computed before, e.g. s*s as its own fp32 multiply: no fma);
//   3. the 256 partials are combined by a halving tree: p[j] = p[j] + p[j + h] for j < h, with
//      h = 128, 64, 32, 16, 8, 4, 2, 1; the sum is p[0].
// The order depends on n only: never on block size, wave size or grid. An empty partial stays +0,
// and +0 + x == x, so short rows (n < 2048) need no special case.
//
// On the GPU a block of 128 threads takes a row: thread t owns partials t and t + 128, accumulates
// each in increasing chunk order, then calls canonical_block_sum() (below).
#pragma once

#include <cstdint>

#include "reference/codecs/host_device.hpp"

namespace fb {

inline constexpr int kCanonicalPartials = 256;
inline constexpr int kCanonicalChunk = 8;

// The partial that term i belongs to.
FB_HD int canonical_partial_of(std::int64_t i) {
  return static_cast<int>((i / kCanonicalChunk) % kCanonicalPartials);
}

// Host twin, step 3: the halving tree over 256 partials (overwrites them), returns the sum.
inline float canonical_tree_sum(float* partials) {
  for (int half = kCanonicalPartials / 2; half > 0; half /= 2)
    for (int j = 0; j < half; ++j) partials[j] = partials[j] + partials[j + half];
  return partials[0];
}

// Host twin, steps 1-3: the canonical sum of term(0) .. term(n-1), each term an fp32.
template <class Term>
float canonical_row_sum(std::int64_t n, Term&& term) {
  float partials[kCanonicalPartials] = {};
  for (std::int64_t i = 0; i < n; ++i) {
    float& p = partials[canonical_partial_of(i)];
    p = p + term(i);
  }
  return canonical_tree_sum(partials);
}

}  // namespace fb

#if defined(__CUDACC__) || defined(__HIPCC__)
#include "kernels/common/hip_compat.hpp"

namespace fb {

// A block of 128 threads computes the sum: thread t holds partials t ("lo") and t + 128 ("hi"),
// i.e. chunks t, t + 256, ... and t + 128, t + 384, ... Two partials per thread halve the fixed
// per-row cost each thread pays (barriers, the finishing math) per element it owns.
inline constexpr int kCanonicalThreads = kCanonicalPartials / 2;
// Shared memory the block sum needs: one word per thread plus the broadcast slot.
inline constexpr int kCanonicalScratch = kCanonicalThreads + 1;

// Step 3 on the GPU, then `finish(sum)` evaluated once (by thread 0) and broadcast to every
// thread: per-row scalar math (a divide, a sqrt) is not repeated by all 128 threads. Tree step
// h = 128 is lo + hi inside the thread; h = 64 and 32 cross waves through `scratch`
// (__shared__ float[kCanonicalScratch]); h = 16..1 are xor shuffles among lanes 0..31, one wave on
// wave32 and wave64 alike (lane j reads lane j + h for j < h; fp32 + commutes, so the butterfly's
// mirrored sums are the same values). Safe to call again on the same scratch without a barrier in
// between: the slot is read after this call's last barrier and rewritten only after the next
// call's first two.
template <class Finish>
__device__ inline float canonical_block_sum(float lo, float hi, float* scratch, Finish&& finish) {
  const int t = threadIdx.x;
  scratch[t] = lo + hi;
  __syncthreads();
  if (t < 64) scratch[t] = scratch[t] + scratch[t + 64];
  __syncthreads();
  if (t < 32) {
    float v = scratch[t] + scratch[t + 32];
#pragma unroll
    for (int h = 16; h > 0; h >>= 1) v = v + __uint_as_float(shfl_xor_u32(__float_as_uint(v), h));
    if (t == 0) scratch[kCanonicalThreads] = finish(v);
  }
  __syncthreads();
  return scratch[kCanonicalThreads];
}

}  // namespace fb
#endif
