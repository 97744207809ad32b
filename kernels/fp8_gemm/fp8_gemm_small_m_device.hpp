// F8's kernel body as a block-level device function, so that a bigger kernel (the one-launch decode
// router of F4) can run it inside its own launch: a block of kFp8GemmSmallMThreads threads computes
// kFp8GemmSmallMColumns output columns for every row (at most 16 rows), streaming each weight row
// once. The sum is the canonical order of fp8_gemm_math.hpp: a group of 16 lanes takes one column,
// lane l owning partial l (chunks l, l + 16, ...), and the halving tree runs over the lanes (lane
// masks below 16 stay inside an aligned group of 16 on wave32 and wave64 alike).
//
// The mapping (only the mapping; the order above is the contract), chosen so the weight streams at
// memory speed:
// - every lane issues the loads of all its weight chunks of a span (kFp8GemmSmallMSpan = 24
//   chunks: K = 6144 is one span) before it uses any, so a block has its whole 48 KB of weight in
//   flight at once (16-byte loads; a 16-lane group reads 256 contiguous bytes per chunk step);
// - A is decoded to fp32 once per block into shared memory, in phases of kPhase chunks per lane
//   (at most 32 KB), the next phase's bytes fetched into registers while the current one computes;
//   lanes read it as float4 in a lane-major layout (consecutive lanes, consecutive 16 bytes: no bank
//   conflicts);
// - one fma per product: a product of two fp8 values is exact in fp32 (4 x 4 significant bits,
//   magnitudes within 2^-20 .. 2^18), so fma(a, b, p) rounds once, exactly as p + a * b does.
#pragma once

#include <type_traits>

#include "kernels/common/hip_compat.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/fp8_gemm/fp8_gemm_math.hpp"
#include "kernels/fp8_gemm/fp8_gemm_small_m_tile.hpp"

namespace fb {

inline constexpr int kFp8GemmSmallMThreads = 128;
inline constexpr int kFp8GemmSmallMColumns = kFp8GemmSmallMThreads / kFp8GemmPartials;  // one per 16 lanes
inline constexpr int kFp8GemmSmallMSpan = 24;      // weight chunks per lane in flight (K = 6144: one span)
inline constexpr int kFp8GemmSmallMSmemBytes = 32768;  // A's fp32 phase buffer, at most

// Chunks per lane of one A phase for a row tile: the largest divisor of the span whose phase
// (rows x 16 lanes x chunks x 64 bytes) fits the buffer.
constexpr int fp8_gemm_small_m_phase(int rows) {
  constexpr int kDivisors[] = {24, 12, 8, 6, 4, 3, 2, 1};
  for (int p : kDivisors)
    if (rows * kFp8GemmPartials * p * 64 <= kFp8GemmSmallMSmemBytes) return p;
  return 1;
}

// The shared memory a block of the body needs (float4 units), for the caller to provide.
inline constexpr int kFp8GemmSmallMSmemVec4 = kFp8GemmSmallMSmemBytes / 16;

// Rows [row0, row0 + tile) of a GEMM as a GEMM of their own (same columns and K): what one row
// tile's blocks compute. Bits do not depend on the tiling (each output's order is its own).
FB_HD void fp8_gemm_row_slice(Fp8GemmParams& p, Fp8GemmBuffers& b, std::int64_t row0, std::int64_t tile) {
  b.a += row0 * p.depth;
  b.a_scale += row0;
  b.c += row0 * p.cols;
  p.rows = p.rows - row0 < tile ? p.rows - row0 : tile;
}

// 16 fp8 bytes (one uint4) to 16 fp32 values, exactly.
template <class Format>
__device__ inline void fp8x16_to_float(const uint4& v, float* out) {
  const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    fp8x2_to_float<Format>(static_cast<std::uint16_t>(words[w] & 0xFFFFu), out[4 * w], out[4 * w + 1]);
    fp8x2_to_float<Format>(static_cast<std::uint16_t>(words[w] >> 16), out[4 * w + 2], out[4 * w + 3]);
  }
}

// Columns [column0, column0 + kThreads / 16) of C for rows 0 .. p.rows - 1 (p.rows <= kRows <= 16),
// by kThreads threads (the block: 128 in F8's own launch, 256 inside F4's). Every thread of the
// block must call it (barriers, and the tree shuffles across lanes);
// columns past N are computed on zeros and not stored, rows past M on zero rows and not stored.
// `smem`: kFp8GemmSmallMSmemVec4 float4 of shared memory, free for the body's use during the call.
// A, B rows 16-byte aligned (K % 16 == 0, aligned bases).
template <class Format, int kRows, int kThreads = kFp8GemmSmallMThreads>
__device__ inline void fp8_gemm_small_m_block(const Fp8GemmParams& p, const Fp8GemmBuffers& b, std::int64_t column0,
                                              float4* smem) {
  constexpr int kPhase = fp8_gemm_small_m_phase(kRows);
  constexpr int kPhases = kFp8GemmSmallMSpan / kPhase;
  constexpr int kPhaseChunks = kFp8GemmPartials * kPhase;  // chunks of K one phase covers
  constexpr int kUnits = kRows * kPhaseChunks;              // 16-byte pieces of A per phase
  constexpr int kUnitsPerThread = (kUnits + kThreads - 1) / kThreads;
  constexpr int kSpanChunks = kFp8GemmPartials * kFp8GemmSmallMSpan;
  static_assert(kRows >= 1 && kRows <= kFp8GemmSmallMMaxRows, "row tile");
  static_assert(kUnits * 4 <= kFp8GemmSmallMSmemVec4, "A phase fits the buffer");
  static_assert(kThreads % kFp8GemmPartials == 0, "whole 16-lane groups");

  const int lane = static_cast<int>(threadIdx.x % kFp8GemmPartials);
  const std::int64_t n = column0 + threadIdx.x / kFp8GemmPartials;
  const bool live = n < p.cols;
  const int rows = static_cast<int>(p.rows);
  const std::int64_t chunks = p.depth / kFp8GemmChunk;
  const uint4* brow = reinterpret_cast<const uint4*>(b.b + (live ? n : 0) * p.depth);
  const uint4* a = reinterpret_cast<const uint4*>(b.a);

  // A's bytes of phase `ph` of span `span` for this thread's units (zeros past M rows or K).
  auto fetch_a = [&](std::int64_t span, int ph, uint4 (&out)[kUnitsPerThread]) {
#pragma unroll
    for (int i = 0; i < kUnitsPerThread; ++i) {
      const int u = static_cast<int>(threadIdx.x) + i * kThreads;
      const int m = u / kPhaseChunks, q = u % kPhaseChunks;
      const std::int64_t c = span * kSpanChunks + ph * kPhaseChunks + q;
      out[i] = u < kUnits && m < rows && c < chunks ? a[m * chunks + c] : make_uint4(0, 0, 0, 0);
    }
  };
  // Decoded into the lane-major layout: float4 h (0..3) of chunk q of row m at (m * 4 + h) * kPhaseChunks + q.
  auto store_a = [&](const uint4 (&in)[kUnitsPerThread]) {
#pragma unroll
    for (int i = 0; i < kUnitsPerThread; ++i) {
      const int u = static_cast<int>(threadIdx.x) + i * kThreads;
      if (u >= kUnits) continue;
      const int m = u / kPhaseChunks, q = u % kPhaseChunks;
      float v[kFp8GemmChunk];
      fp8x16_to_float<Format>(in[i], v);
#pragma unroll
      for (int h = 0; h < 4; ++h)
        smem[(m * 4 + h) * kPhaseChunks + q] = make_float4(v[4 * h], v[4 * h + 1], v[4 * h + 2], v[4 * h + 3]);
    }
  };

  float acc[kRows];
#pragma unroll
  for (int m = 0; m < kRows; ++m) acc[m] = 0.0f;

  const std::int64_t spans = (chunks + kSpanChunks - 1) / kSpanChunks;
  uint4 an[kUnitsPerThread];
  fetch_a(0, 0, an);
  for (std::int64_t span = 0; span < spans; ++span) {
    // Every weight chunk of this lane in the span, in flight together.
    uint4 wq[kFp8GemmSmallMSpan];
#pragma unroll
    for (int i = 0; i < kFp8GemmSmallMSpan; ++i) {
      const std::int64_t c = span * kSpanChunks + lane + i * kFp8GemmPartials;
      wq[i] = live && c < chunks ? brow[c] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int ph = 0; ph < kPhases; ++ph) {
      __syncthreads();  // the previous phase's readers are done with the buffer
      store_a(an);
      __syncthreads();
      if (ph + 1 < kPhases)
        fetch_a(span, ph + 1, an);
      else if (span + 1 < spans)
        fetch_a(span + 1, 0, an);
#pragma unroll
      for (int i = 0; i < kPhase; ++i) {
        const int wi = ph * kPhase + i;
        const std::int64_t c = span * kSpanChunks + lane + wi * kFp8GemmPartials;
        if (c >= chunks) continue;
        float w[kFp8GemmChunk];
        fp8x16_to_float<Format>(wq[wi], w);
        const int q = lane + i * kFp8GemmPartials;
#pragma unroll
        for (int m = 0; m < kRows; ++m) {
          float s = acc[m];
#pragma unroll
          for (int h = 0; h < 4; ++h) {
            const float4 x = smem[(m * 4 + h) * kPhaseChunks + q];
            s = __fmaf_rn(x.x, w[4 * h], s);
            s = __fmaf_rn(x.y, w[4 * h + 1], s);
            s = __fmaf_rn(x.z, w[4 * h + 2], s);
            s = __fmaf_rn(x.w, w[4 * h + 3], s);
          }
          acc[m] = s;
        }
      }
    }
  }
  __syncthreads();  // the buffer is the caller's again

  // Step 3, across the 16 lanes: lane j < h adds lane j + h's partial (lane j ^ h).
#pragma unroll
  for (int m = 0; m < kRows; ++m) {
    float s = acc[m];
#pragma unroll
    for (int h = kFp8GemmPartials / 2; h > 0; h /= 2) s = s + __uint_as_float(shfl_xor_u32(__float_as_uint(s), h));
    if (live && lane == 0 && m < rows) b.c[m * p.cols + n] = fp8_gemm_epilogue(s, b.b_scale[n], b.a_scale[m]);
  }
}

// The row tile (fp8_gemm_small_m_row_tile of p) as a template argument.
template <class Fn>
void with_fp8_gemm_small_m_rows(const Fp8GemmParams& p, Fn&& fn) {
  switch (fp8_gemm_small_m_row_tile(p.rows, p.row_tile)) {
    case 1: fn(std::integral_constant<int, 1>{}); break;
    case 2: fn(std::integral_constant<int, 2>{}); break;
    case 3: fn(std::integral_constant<int, 3>{}); break;
    case 4: fn(std::integral_constant<int, 4>{}); break;
    case 8: fn(std::integral_constant<int, 8>{}); break;
    default: fn(std::integral_constant<int, 16>{}); break;
  }
}

}  // namespace fb
