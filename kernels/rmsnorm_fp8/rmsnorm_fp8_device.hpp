// Device-side RMSNorm row code shared by the plain norm kernel (chain) and the fused producers.
//
// One block of 256 threads per row. Thread t owns chunks t, t + 256, ... (8 elements each), which
// is exactly partial t of the canonical sum (kernels/common/canonical_sum.hpp), so the sum of
// squares needs no reordering. The first kCached chunks of each thread stay in registers as the
// loaded bf16 words (x, residual, weight) between the sum and the output: rows up to
// 256 * 8 * kCached = 8192 elements are read once. s = x + residual is recomputed from them after
// the sum (the same fp32 add, the same value). Chunks past the cache are read again.
#pragma once

#include <type_traits>

#include "kernels/common/bf16_chunks.hpp"
#include "kernels/common/canonical_sum.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8_math.hpp"

namespace fb {

inline constexpr int kRmsnormThreads = kCanonicalPartials;  // one partial per thread
inline constexpr int kRmsnormMaxCached = 4;

// What a row kernel reads and writes, outside the fp8 epilogue. Null out: no bf16 out.
struct RmsnormArgs {
  const std::uint16_t* x;
  const std::uint16_t* residual;  // used only by kResidual kernels, with residual_out
  const std::uint16_t* weight;
  std::uint16_t* residual_out;
  std::uint16_t* out;
  std::int64_t hidden;
  float weight_offset;
  float eps;
};

inline RmsnormArgs rmsnorm_args(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b, std::uint16_t* out) {
  return RmsnormArgs{b.x, b.residual, b.weight, b.residual_out, out, p.hidden, p.weight_offset, p.eps};
}

FB_HD std::int64_t rmsnorm_chunks(std::int64_t hidden) { return (hidden + 7) / 8; }

// Template arguments of a row kernel from the problem: the access path (16-byte vectors when the
// row length is a multiple of 8), the residual add, and the chunks each thread keeps in registers
// (as many as it owns, at most kRmsnormMaxCached).
template <class Fn>
void with_rmsnorm_variant(const RmsnormFp8Params& p, Fn&& fn) {
  const std::int64_t per_thread = (rmsnorm_chunks(p.hidden) + kRmsnormThreads - 1) / kRmsnormThreads;
  auto with_cached = [&](auto vector, auto residual) {
    if (per_thread <= 1)
      fn(vector, residual, std::integral_constant<int, 1>{});
    else if (per_thread == 2)
      fn(vector, residual, std::integral_constant<int, 2>{});
    else if (per_thread == 3)
      fn(vector, residual, std::integral_constant<int, 3>{});
    else
      fn(vector, residual, std::integral_constant<int, 4>{});
  };
  auto with_residual = [&](auto vector) {
    if (p.residual)
      with_cached(vector, std::true_type{});
    else
      with_cached(vector, std::false_type{});
  };
  if (p.hidden % 8 == 0)
    with_residual(std::true_type{});
  else
    with_residual(std::false_type{});
}

// The loaded words of one chunk. `residual` is unused (and optimised away) without the residual.
struct RmsnormChunk {
  Bf16x8 x;
  Bf16x8 residual;
  Bf16x8 weight;
};

template <bool kVector, bool kResidual>
__device__ inline RmsnormChunk rmsnorm_load(const RmsnormArgs& a, std::int64_t row, std::int64_t c) {
  const std::int64_t base = row * a.hidden;
  RmsnormChunk k;
  k.x = load_chunk<kVector>(a.x + base, c, a.hidden);
  if constexpr (kResidual) k.residual = load_chunk<kVector>(a.residual + base, c, a.hidden);
  k.weight = load_chunk<kVector>(a.weight, c, a.hidden);
  return k;
}

// s = f32(x) (+ f32(residual)): one fp32 add.
template <bool kResidual>
__device__ inline void rmsnorm_s(const RmsnormChunk& k, float (&s)[8]) {
  widen(k.x, s);
  if constexpr (kResidual) {
    float r[8];
    widen(k.residual, r);
#pragma unroll
    for (int j = 0; j < 8; ++j) s[j] = rmsnorm_add(s[j], r[j]);
  }
}

// Pass A for one chunk: residual_out, and its squares added to the thread's partial in order.
template <bool kVector, bool kResidual>
__device__ inline void rmsnorm_accumulate(const RmsnormArgs& a, std::int64_t row, std::int64_t c,
                                          const RmsnormChunk& k, float& partial) {
  float s[8];
  rmsnorm_s<kResidual>(k, s);
  if constexpr (kResidual)
    store_chunk_bf16<kVector>(a.residual_out + row * a.hidden, c, a.hidden, pack_bf16x8<kVector>(s, c, a.hidden));
#pragma unroll
  for (int j = 0; j < 8; ++j) partial = partial + rmsnorm_square(s[j]);  // padding adds +0: exact
}

// Pass A: loads (the first kCached chunks into k[]), residual_out, the canonical sum of squares;
// returns r, the same in every thread.
template <bool kVector, bool kResidual, int kCached>
__device__ inline float rmsnorm_pass_a(const RmsnormArgs& a, std::int64_t row, RmsnormChunk (&k)[kCached],
                                       float* scratch) {
  const std::int64_t chunks = rmsnorm_chunks(a.hidden);
  // Every load first: up to 3 * kCached independent 16-byte loads in flight. NOTE: the compiler
  // cannot tell residual_out from the inputs, so a load placed after a store would wait for it.
#pragma unroll
  for (int i = 0; i < kCached; ++i) {
    const std::int64_t c = threadIdx.x + static_cast<std::int64_t>(i) * kRmsnormThreads;
    if (c < chunks) k[i] = rmsnorm_load<kVector, kResidual>(a, row, c);
  }
  float partial = 0.0f;
#pragma unroll
  for (int i = 0; i < kCached; ++i) {
    const std::int64_t c = threadIdx.x + static_cast<std::int64_t>(i) * kRmsnormThreads;
    if (c < chunks) rmsnorm_accumulate<kVector, kResidual>(a, row, c, k[i], partial);
  }
  for (std::int64_t c = threadIdx.x + kCached * kRmsnormThreads; c < chunks; c += kRmsnormThreads)
    rmsnorm_accumulate<kVector, kResidual>(a, row, c, rmsnorm_load<kVector, kResidual>(a, row, c), partial);
  return rmsnorm_inverse_rms(canonical_block_sum(partial, scratch), a.hidden, a.eps);
}

// bf16(y) of one chunk: s again from the loaded words, then y = (s * r) * (offset + w).
template <bool kVector, bool kResidual>
__device__ inline Bf16x8 rmsnorm_chunk_y(const RmsnormArgs& a, std::int64_t c, const RmsnormChunk& k, float r) {
  float s[8], w[8], y[8];
  rmsnorm_s<kResidual>(k, s);
  widen(k.weight, w);
#pragma unroll
  for (int j = 0; j < 8; ++j) y[j] = rmsnorm_y(s[j], r, rmsnorm_weight_factor(w[j], a.weight_offset));
  return pack_bf16x8<kVector>(y, c, a.hidden);
}

}  // namespace fb
