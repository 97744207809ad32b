// Device-side RMSNorm row code shared by the plain norm kernel (chain) and the fused producers.
//
// One block of 256 threads per row. Thread t owns chunks t, t + 256, ... (8 elements each), which
// is exactly partial t of the canonical sum (kernels/common/canonical_sum.hpp), so the sum of
// squares needs no reordering. The first kCached chunks of each thread stay in registers as fp32 s
// between the sum and the output (rows up to 256 * 8 * kCached = 8192 elements are read once);
// chunks past that are read again and recomputed, giving the same values.
#pragma once

#include <type_traits>

#include "kernels/common/bf16_chunks.hpp"
#include "kernels/common/canonical_sum.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8_math.hpp"

namespace fb {

inline constexpr int kRmsnormThreads = kCanonicalPartials;  // one partial per thread
inline constexpr int kRmsnormMaxCached = 4;

// What a row kernel reads and writes, outside the fp8 epilogue. Null residual: no residual add and
// no residual_out. Null out: no bf16 out.
struct RmsnormArgs {
  const std::uint16_t* x;
  const std::uint16_t* residual;
  const std::uint16_t* weight;
  std::uint16_t* residual_out;
  std::uint16_t* out;
  std::int64_t hidden;
  float weight_offset;
  float eps;
};

inline RmsnormArgs rmsnorm_args(const RmsnormFp8Params& p, const RmsnormFp8Buffers& b, std::uint16_t* out) {
  return RmsnormArgs{b.x,   p.residual ? b.residual : nullptr, b.weight, p.residual ? b.residual_out : nullptr,
                     out,   p.hidden,                          p.weight_offset, p.eps};
}

inline std::int64_t rmsnorm_chunks(std::int64_t hidden) { return (hidden + 7) / 8; }

// Chunks each thread keeps in registers: as many as it owns, at most kRmsnormMaxCached. Turned into
// a template argument, so the register arrays have fixed size.
template <class Fn>
void with_cached_chunks(std::int64_t hidden, Fn&& fn) {
  const std::int64_t per_thread = (rmsnorm_chunks(hidden) + kRmsnormThreads - 1) / kRmsnormThreads;
  if (per_thread <= 1)
    fn(std::integral_constant<int, 1>{});
  else if (per_thread == 2)
    fn(std::integral_constant<int, 2>{});
  else if (per_thread == 3)
    fn(std::integral_constant<int, 3>{});
  else
    fn(std::integral_constant<int, 4>{});
}

// s of one chunk from its loaded x (and residual): f32(x) (+ f32(residual)).
__device__ inline void rmsnorm_s_of(const Bf16x8& x, const Bf16x8* residual, float (&s)[8]) {
  widen(x, s);
  if (residual) {
    float r[8];
    widen(*residual, r);
#pragma unroll
    for (int j = 0; j < 8; ++j) s[j] = rmsnorm_add(s[j], r[j]);
  }
}

// s of chunk c of a row, loaded and computed.
template <bool kVector>
__device__ inline void rmsnorm_chunk_s(const RmsnormArgs& a, std::int64_t row, std::int64_t c, float (&s)[8]) {
  const std::int64_t base = row * a.hidden;
  const Bf16x8 x = load_chunk<kVector>(a.x + base, c, a.hidden);
  Bf16x8 r = zero_bf16x8();
  if (a.residual) r = load_chunk<kVector>(a.residual + base, c, a.hidden);
  rmsnorm_s_of(x, a.residual ? &r : nullptr, s);
}

// Pass A: s of every chunk the thread owns (the first kCached kept in s[] together with their
// weights), residual_out written, the canonical sum of squares; returns r (every thread).
template <bool kVector, int kCached>
__device__ inline float rmsnorm_pass_a(const RmsnormArgs& a, std::int64_t row, float (&s)[kCached][8],
                                       Bf16x8 (&w)[kCached], float* scratch) {
  const std::int64_t n = a.hidden;
  const std::int64_t chunks = rmsnorm_chunks(n);
  const std::int64_t base = row * n;
  float partial = 0.0f;
  auto accumulate = [&](std::int64_t c, const float (&v)[8]) {
    if (a.residual_out) store_chunk_bf16<kVector>(a.residual_out + base, c, n, pack_bf16x8(v, c, n));
#pragma unroll
    for (int j = 0; j < 8; ++j) partial = partial + rmsnorm_square(v[j]);  // padding adds +0: exact
  };
  // Loads first: up to 3 * kCached independent 16-byte loads in flight. NOTE: the residual_out
  // stores could alias the inputs as far as the compiler knows, so loads placed after them would
  // wait for them.
  Bf16x8 xv[kCached], rv[kCached];
#pragma unroll
  for (int k = 0; k < kCached; ++k) {
    const std::int64_t c = threadIdx.x + static_cast<std::int64_t>(k) * kRmsnormThreads;
    rv[k] = zero_bf16x8();
    if (c < chunks) {
      xv[k] = load_chunk<kVector>(a.x + base, c, n);
      if (a.residual) rv[k] = load_chunk<kVector>(a.residual + base, c, n);
      w[k] = load_chunk<kVector>(a.weight, c, n);  // used after the sum
    }
  }
#pragma unroll
  for (int k = 0; k < kCached; ++k) {
    const std::int64_t c = threadIdx.x + static_cast<std::int64_t>(k) * kRmsnormThreads;
    if (c < chunks) {
      rmsnorm_s_of(xv[k], a.residual ? &rv[k] : nullptr, s[k]);
      accumulate(c, s[k]);
    }
  }
  for (std::int64_t c = threadIdx.x + kCached * kRmsnormThreads; c < chunks; c += kRmsnormThreads) {
    float v[8];
    rmsnorm_chunk_s<kVector>(a, row, c, v);
    accumulate(c, v);
  }
  return rmsnorm_inverse_rms(canonical_block_sum(partial, scratch), n, a.eps);
}

// bf16(y) of one chunk from its s, weights and r.
__device__ inline Bf16x8 rmsnorm_chunk_y(const RmsnormArgs& a, std::int64_t c, const float (&s)[8],
                                         const Bf16x8& w, float r) {
  float wf[8], y[8];
  widen(w, wf);
#pragma unroll
  for (int j = 0; j < 8; ++j) y[j] = rmsnorm_y(s[j], r, rmsnorm_weight_factor(wf[j], a.weight_offset));
  return pack_bf16x8(y, c, a.hidden);
}

// bf16(y) of a chunk past the register cache: read and recompute.
template <bool kVector>
__device__ inline Bf16x8 rmsnorm_chunk_y_reread(const RmsnormArgs& a, std::int64_t row, std::int64_t c, float r) {
  float s[8];
  rmsnorm_chunk_s<kVector>(a, row, c, s);
  return rmsnorm_chunk_y(a, c, s, load_chunk<kVector>(a.weight, c, a.hidden), r);
}

}  // namespace fb
