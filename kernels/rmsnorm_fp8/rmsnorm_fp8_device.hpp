// Device-side RMSNorm row code shared by the plain norm kernel (chain) and the fused producers.
//
// One block of 128 threads per row. Thread t owns chunks t + 128 i (8 elements each): the even i
// are canonical partial t, the odd i partial t + 128 (kernels/common/canonical_sum.hpp), so the sum
// of squares needs no reordering. 128 threads rather than 256 give each thread twice the elements
// for the same per-row fixed cost (block reductions, barriers), which was a third of the fused
// producer's instructions. The first kCached chunks of each thread stay in registers as the loaded
// bf16 words (x, residual) between the sum and the output: rows up to 128 * 8 * kCached = 6144
// elements are read once. s = x + residual is recomputed from them after the sum (the same fp32
// add, the same value). The weight is read after the sum (an L1/L2 hit: every row reads the same
// weight), which keeps it out of the registers held across the reduction. Chunks past the cache
// are read again.
#pragma once

#include <type_traits>

#include "kernels/common/bf16_chunks.hpp"
#include "kernels/common/canonical_sum.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8_math.hpp"

namespace fb {

inline constexpr int kRmsnormThreads = kCanonicalThreads;  // 128: two canonical partials per thread
inline constexpr int kRmsnormMaxCached = 6;
// Blocks per SM the fused kernels ask the register allocator for (__launch_bounds__): 8 x 128
// threads (64 registers) without the residual, where the row is otherwise a few registers over
// and an SM would hold one row fewer (the 16-byte-vector kernels fit without spilling; nvcc
// -Xptxas -v); the residual kernels keep their registers (no cap).
template <bool kResidual>
inline constexpr int kRmsnormMinBlocks = kResidual ? 1 : 8;

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
// (as many as it owns, rounded up to 1, 2, 4 or kRmsnormMaxCached).
template <class Fn>
void with_rmsnorm_variant(const RmsnormFp8Params& p, Fn&& fn) {
  const std::int64_t per_thread = (rmsnorm_chunks(p.hidden) + kRmsnormThreads - 1) / kRmsnormThreads;
  auto with_cached = [&](auto vector, auto residual) {
    if (per_thread <= 1)
      fn(vector, residual, std::integral_constant<int, 1>{});
    else if (per_thread == 2)
      fn(vector, residual, std::integral_constant<int, 2>{});
    else if (per_thread <= 4)
      fn(vector, residual, std::integral_constant<int, 4>{});
    else
      fn(vector, residual, std::integral_constant<int, kRmsnormMaxCached>{});
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

// The loaded activation words of one chunk. `residual` is unused (and optimised away) without the
// residual.
struct RmsnormChunk {
  Bf16x8 x;
  Bf16x8 residual;
};

template <bool kVector, bool kResidual>
__device__ inline RmsnormChunk rmsnorm_load(const RmsnormArgs& a, std::int64_t row, int c) {
  const std::int64_t base = row * a.hidden;
  RmsnormChunk k;
  k.x = load_chunk<kVector>(a.x + base, c, a.hidden);
  if constexpr (kResidual) k.residual = load_chunk<kVector>(a.residual + base, c, a.hidden);
  return k;
}

template <bool kVector>
__device__ inline Bf16x8 rmsnorm_load_weight(const RmsnormArgs& a, int c) {
  return load_chunk<kVector>(a.weight, c, a.hidden);
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

// Pass A for one chunk: residual_out, and its squares added to its partial in order.
template <bool kVector, bool kResidual>
__device__ inline void rmsnorm_accumulate(const RmsnormArgs& a, std::int64_t row, int c, const RmsnormChunk& k,
                                          float& partial) {
  float s[8];
  rmsnorm_s<kResidual>(k, s);
  if constexpr (kResidual)
    store_chunk_bf16<kVector>(a.residual_out + row * a.hidden, c, a.hidden, pack_bf16x8<kVector>(s, c, a.hidden));
#pragma unroll
  for (int j = 0; j < 8; ++j) partial = partial + rmsnorm_square(s[j]);  // padding adds +0: exact
}

// Pass A: loads (the first kCached chunks into k[]), residual_out, the canonical sum of squares;
// returns r, computed once per row and the same in every thread.
template <bool kVector, bool kResidual, int kCached>
__device__ inline float rmsnorm_pass_a(const RmsnormArgs& a, std::int64_t row, RmsnormChunk (&k)[kCached],
                                       float* scratch) {
  const int chunks = static_cast<int>(rmsnorm_chunks(a.hidden));
  const int t = static_cast<int>(threadIdx.x);
  // Every load first: up to 2 * kCached independent 16-byte loads in flight. NOTE: the compiler
  // cannot tell residual_out from the inputs, so a load placed after a store would wait for it.
#pragma unroll
  for (int i = 0; i < kCached; ++i) {
    const int c = t + i * kRmsnormThreads;
    if (c < chunks) k[i] = rmsnorm_load<kVector, kResidual>(a, row, c);
  }
  float lo = 0.0f, hi = 0.0f;  // partials t and t + 128: chunk t + 128 i goes to lo for even i
#pragma unroll
  for (int i = 0; i < kCached; ++i) {
    const int c = t + i * kRmsnormThreads;
    if (c < chunks) rmsnorm_accumulate<kVector, kResidual>(a, row, c, k[i], i % 2 ? hi : lo);
  }
  for (int i = kCached, c = t + kCached * kRmsnormThreads; c < chunks; ++i, c += kRmsnormThreads)
    rmsnorm_accumulate<kVector, kResidual>(a, row, c, rmsnorm_load<kVector, kResidual>(a, row, c), i % 2 ? hi : lo);
  return canonical_block_sum(lo, hi, scratch,
                             [&](float ss) { return rmsnorm_inverse_rms(ss, a.hidden, a.eps); });
}

// bf16(y) of one chunk: s again from the loaded words, then y = (s * r) * (offset + w).
template <bool kVector, bool kResidual>
__device__ inline Bf16x8 rmsnorm_chunk_y(const RmsnormArgs& a, int c, const RmsnormChunk& k, const Bf16x8& weight,
                                         float r) {
  float s[8], w[8], y[8];
  rmsnorm_s<kResidual>(k, s);
  widen(weight, w);
#pragma unroll
  for (int j = 0; j < 8; ++j) y[j] = rmsnorm_y(s[j], r, rmsnorm_weight_factor(w[j], a.weight_offset));
  return pack_bf16x8<kVector>(y, c, a.hidden);
}

// The same for a chunk past the register cache: everything read again.
template <bool kVector, bool kResidual>
__device__ inline Bf16x8 rmsnorm_reload_y(const RmsnormArgs& a, std::int64_t row, int c, float r) {
  return rmsnorm_chunk_y<kVector, kResidual>(a, c, rmsnorm_load<kVector, kResidual>(a, row, c),
                                             rmsnorm_load_weight<kVector>(a, c), r);
}

}  // namespace fb
