// F8's kernel body as a block-level device function, so that a bigger kernel (the one-launch decode
// router of F4) can run it inside its own launch: a block of kFp8GemmSmallMThreads threads computes
// kFp8GemmSmallMColumns output columns for every row (at most 16 rows), streaming each weight row
// once. The sum is the canonical order of fp8_gemm_math.hpp: a group of 16 lanes takes one column,
// lane l owning partial l (chunks l, l + 16, ...), and the halving tree runs over the lanes (lane
// masks below 16 stay inside an aligned group of 16 on wave32 and wave64 alike).
#pragma once

#include "kernels/common/hip_compat.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/fp8_gemm/fp8_gemm_math.hpp"

namespace fb {

inline constexpr int kFp8GemmSmallMThreads = 128;
inline constexpr int kFp8GemmSmallMColumns = kFp8GemmSmallMThreads / kFp8GemmPartials;  // one per 16 lanes
inline constexpr int kFp8GemmSmallMBatch = 6;  // weight chunks in flight per lane (K = 6144: 24 chunks, 4 batches)

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

// Columns [column0, column0 + kFp8GemmSmallMColumns) of C for rows 0 .. p.rows - 1 (p.rows <= 16).
// Every thread of the block must call it (the tree shuffles across lanes); columns past N are
// computed on zeros and not stored. A, B rows 16-byte aligned (K % 16 == 0, aligned bases).
template <class Format>
__device__ inline void fp8_gemm_small_m_block(const Fp8GemmParams& p, const Fp8GemmBuffers& b, std::int64_t column0) {
  const int lane = static_cast<int>(threadIdx.x % kFp8GemmPartials);
  const std::int64_t n = column0 + threadIdx.x / kFp8GemmPartials;
  const bool live = n < p.cols;
  const int rows = static_cast<int>(p.rows);
  const std::int64_t chunks = p.depth / kFp8GemmChunk;
  const uint4* brow = reinterpret_cast<const uint4*>(b.b + (live ? n : 0) * p.depth);
  const uint4* a = reinterpret_cast<const uint4*>(b.a);

  float acc[kFp8GemmSmallMMaxRows];
#pragma unroll
  for (int m = 0; m < kFp8GemmSmallMMaxRows; ++m) acc[m] = 0.0f;

  // Weight chunks are loaded kFp8GemmSmallMBatch at a time before any is used, so that many
  // 16-byte loads per lane are in flight (the kernel streams the weight once: latency is the
  // limit); the adds still go chunk by chunk in increasing order, as the canonical order says.
  for (std::int64_t c0 = lane; c0 < chunks; c0 += kFp8GemmPartials * kFp8GemmSmallMBatch) {
    uint4 wq[kFp8GemmSmallMBatch];
#pragma unroll
    for (int i = 0; i < kFp8GemmSmallMBatch; ++i) {
      const std::int64_t c = c0 + i * kFp8GemmPartials;
      wq[i] = live && c < chunks ? brow[c] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int i = 0; i < kFp8GemmSmallMBatch; ++i) {
      const std::int64_t c = c0 + i * kFp8GemmPartials;
      if (c < chunks) {
        float w[kFp8GemmChunk];
        fp8x16_to_float<Format>(wq[i], w);
#pragma unroll
        for (int m = 0; m < kFp8GemmSmallMMaxRows; ++m) {
          if (m < rows) {
            float x[kFp8GemmChunk];
            fp8x16_to_float<Format>(a[m * chunks + c], x);
            acc[m] = fp8_gemm_chunk_add(acc[m], x, w);
          }
        }
      }
    }
  }

  // Step 3, across the 16 lanes: lane j < h adds lane j + h's partial (lane j ^ h).
#pragma unroll
  for (int m = 0; m < kFp8GemmSmallMMaxRows; ++m) {
    if (m < rows) {
      float s = acc[m];
#pragma unroll
      for (int h = kFp8GemmPartials / 2; h > 0; h /= 2) s = s + __uint_as_float(shfl_xor_u32(__float_as_uint(s), h));
      if (live && lane == 0) b.c[m * p.cols + n] = fp8_gemm_epilogue(s, b.b_scale[n], b.a_scale[m]);
    }
  }
}

}  // namespace fb
