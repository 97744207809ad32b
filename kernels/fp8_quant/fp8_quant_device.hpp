// Device-side pieces shared by the fused fp8 quant kernels, their chain, and every producer that
// ends in an fp8 quant epilogue (F1, F2): template dispatch over the options, 8-wide quantize-store.
#pragma once

#include <type_traits>

#include "kernels/common/bf16_chunks.hpp"
#include "kernels/common/block_reduce.hpp"
#include "kernels/common/vector_io.hpp"
#include "kernels/fp8_quant/fp8_quant_math.hpp"

namespace fb {

// Option dispatch: turns run-time options into template arguments, so the per-element code has no
// branches on them.
template <class Fn>
void with_fp8_format(Fp8Flavour flavour, Fn&& fn) {
  if (flavour == Fp8Flavour::e4m3fn)
    fn(Fp8E4m3fnFormat{});
  else
    fn(Fp8E4m3fnuzFormat{});
}

template <class Fn>
void with_scale_format(ScaleFormat format, Fn&& fn) {
  if (format == ScaleFormat::f32)
    fn(std::integral_constant<ScaleFormat, ScaleFormat::f32>{});
  else
    fn(std::integral_constant<ScaleFormat, ScaleFormat::e8m0>{});
}

template <class Fn>
void with_scale_layout(ScaleLayout layout, Fn&& fn) {
  if (layout == ScaleLayout::row_major)
    fn(std::integral_constant<ScaleLayout, ScaleLayout::row_major>{});
  else
    fn(std::integral_constant<ScaleLayout, ScaleLayout::k_major>{});
}

// Threads per row for a row of `vectors` 16-byte vectors: the fewest (a power of two, 32 to 256)
// that hold it in at most `per_thread` vectors each.
inline int row_threads_for(std::int64_t vectors, int per_thread) {
  const std::int64_t need = (vectors + per_thread - 1) / per_thread;
  return need <= 32 ? 32 : need <= 64 ? 64 : need <= 128 ? 128 : 256;
}

// The same as a template argument.
template <class Fn>
void with_row_threads(std::int64_t vectors, int per_thread, Fn&& fn) {
  switch (row_threads_for(vectors, per_thread)) {
    case 32:
      fn(std::integral_constant<int, 32>{});
      break;
    case 64:
      fn(std::integral_constant<int, 64>{});
      break;
    case 128:
      fn(std::integral_constant<int, 128>{});
      break;
    default:
      fn(std::integral_constant<int, 256>{});
  }
}

// The |bf16| maxima of a chunk's even and odd elements, as a pair of 16-bit values: |bf16| compare
// as unsigned 16-bit integers, so the halves are maxed pairwise first.
__device__ inline std::uint32_t bf16x8_abs_max_halves(const Bf16x8& v) {
  constexpr std::uint32_t kAbs = 0x7FFF7FFFu;
  return max_u16x2(max_u16x2(v.words.x & kAbs, v.words.y & kAbs), max_u16x2(v.words.z & kAbs, v.words.w & kAbs));
}

// The amax bits (as fp32 bits, like bf16x2_abs_max_bits) of 8 bf16, widened once.
__device__ inline std::uint32_t bf16x8_abs_max_bits(const Bf16x8& v) {
  const std::uint32_t m = bf16x8_abs_max_halves(v);
  return max_u32(m << 16, m & 0xFFFF0000u);
}

// The same amax as 16-bit |bf16| bits (bit 15 clear): bf16x8_abs_max_bits(v) == this << 16.
__device__ inline std::uint32_t bf16x8_abs_max_u16(const Bf16x8& v) {
  const std::uint32_t m = bf16x8_abs_max_halves(v);
  return max_u32(m & 0xFFFFu, m >> 16);
}

// `inverse` must come from the amax of a set holding v (every caller's row or group). Then a
// finite, nonzero inverse means a finite amax: no element is NaN or inf and no product is NaN, so
// the encode can skip its NaN handling. Otherwise (NaN or inf in the set: inverse NaN or 0) the
// full encode runs. The branch is uniform over the row or group.
template <class Format, bool kNoNan>
__device__ inline void quantize_store_bf16x8_as(const Bf16x8& v, float inverse, std::uint8_t* dst) {
  std::uint16_t pairs[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float lo = bf16x8_element(v, 2 * j) * inverse, hi = bf16x8_element(v, 2 * j + 1) * inverse;
    pairs[j] = kNoNan ? fp8x2_encode_no_nan<Format>(lo, hi) : fp8x2_encode<Format>(lo, hi);
  }
  store_u16x4(dst, pairs);
}

// `inverse` must come from the amax of a set holding v (every caller's row or group). Then a
// finite, nonzero inverse means a finite amax: no element is NaN or inf and no product is NaN, so
// the encode can skip its NaN handling. A NaN or inf in the set makes the inverse NaN or 0.
FB_HD bool fp8_inverse_is_finite(float inverse) { return inverse > 0.0f && inverse < bits_float(0x7F800000u); }

// One chunk with the check per call (uniform over the row or group). Producers with several chunks
// per thread rather branch once for all of them, keeping the hot loop free of the full encode.
template <class Format>
__device__ inline void quantize_store_bf16x8(const Bf16x8& v, float inverse, std::uint8_t* dst) {
  if (fp8_inverse_is_finite(inverse))
    quantize_store_bf16x8_as<Format, true>(v, inverse, dst);
  else
    quantize_store_bf16x8_as<Format, false>(v, inverse, dst);
}

// fp8 bytes of a chunk of bf16 values under one inverse scale (8-byte store on the vector path).
// kNoNan: the caller has checked fp8_inverse_is_finite(inverse) (see quantize_store_bf16x8).
template <class Format, bool kVector, bool kNoNan = false>
__device__ inline void store_chunk_fp8(std::uint8_t* row, std::int64_t c, std::int64_t n, const Bf16x8& v,
                                       float inverse) {
  if constexpr (kVector) {
    if constexpr (kNoNan)
      quantize_store_bf16x8_as<Format, true>(v, inverse, row + c * 8);
    else
      quantize_store_bf16x8<Format>(v, inverse, row + c * 8);
  } else {
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (c * 8 + j < n) row[c * 8 + j] = fp8_encode<Format>(bf16x8_element(v, j) * inverse);
  }
}

// Where an fp8 epilogue writes, with its options as run-time values (the producers' kernels).
struct Fp8Outputs {
  std::uint8_t* q;
  void* scales;
  std::int64_t rows;
  ScaleFormat format;
  ScaleLayout layout;
};

// The 1x128 epilogue of one 8-value chunk (chunk c of row `row`, rows of n values): the group's
// amax over its 16 aligned lanes, the bytes, and the group's scale from lane 0 of the 16. Every
// lane must call it (the shuffle needs them all); `in` says whether the chunk exists.
template <class Format>
__device__ inline void quantize_group_chunk(const Fp8Outputs& d, std::int64_t row, std::int64_t c, std::int64_t n,
                                            bool in, const Bf16x8& y) {
  const std::uint32_t amax = group16_max_u32(in ? bf16x8_abs_max_bits(y) : 0u);
  if (!in) return;
  const Fp8Scale scale = fp8_scale_from_amax_bits(amax, Format::kFlavour, d.format);
  quantize_store_bf16x8<Format>(y, scale.inverse, d.q + row * n + c * 8);
  if (threadIdx.x % 16 == 0)
    fp8_store_scale(d.scales, fp8_scale_index(row, c / 16, d.rows, n / kFp8GroupSize, d.layout), scale, d.format);
}

// The 1x128 epilogue of kChunks chunks per thread at once (chunk c[i] of row `row`, each group
// owned by 16 aligned lanes as in quantize_group_chunk, for every i). A wave holds
// G = warpSize / 16 groups side by side per i, so G * kChunks groups in all: they are dealt one
// per lane (lane L takes group slot L % G of chunk index L / G), each scale is computed once, and
// every lane takes its groups' inverses back by shuffles. Against quantize_group_chunk per chunk,
// the scale math (a divide) runs once per wave instead of kChunks times. Every lane must call it,
// and a wave's chunks must be consecutive in its lanes (c[i] of lane L = c[i] of lane 0 + L), so a
// group's chunk follows from its first lane's number.
//
// Two chunks' amaxes travel in one word: 15 bits each (|bf16| bits) plus bit 15 set where the chunk
// exists (the same in all 16 lanes of a group), so one 16-lane max and one shuffle serve two chunks.
template <class Format, int kChunks>
__device__ inline void quantize_group_chunks(const Fp8Outputs& d, std::int64_t row, std::int64_t n,
                                             const int (&c)[kChunks], const bool (&in)[kChunks],
                                             const Bf16x8 (&y)[kChunks]) {
  static_assert(kChunks <= 16, "one group per lane: G * kChunks <= warpSize");
  constexpr std::uint32_t kExists = 0x8000u;
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  const int per_wave = warpSize / 16;
  const int job = lane / per_wave, job_slot = lane % per_wave;
  const int job_lane = job_slot * 16;  // the first lane of the job's group
  std::uint32_t job_field = 0;         // kExists | amax bits of the job's group; 0: no group
  int job_chunk = 0;
#pragma unroll
  for (int i = 0; i < kChunks; i += 2) {
    std::uint32_t pair = in[i] ? kExists | bf16x8_abs_max_u16(y[i]) : 0u;
    if (i + 1 < kChunks && in[i + 1]) pair |= (kExists | bf16x8_abs_max_u16(y[i + 1])) << 16;
    pair = shfl_u32(group16_max_u16x2(pair), job_lane);
    if (job == i) {
      job_field = pair & 0xFFFFu;
      job_chunk = c[i] - lane + job_lane;
    }
    if (i + 1 < kChunks && job == i + 1) {
      job_field = pair >> 16;
      job_chunk = c[i + 1] - lane + job_lane;
    }
  }
  const Fp8Scale scale = fp8_scale_from_amax_bits((job_field & ~kExists) << 16, Format::kFlavour, d.format);
  if (job_field & kExists)
    fp8_store_scale(d.scales, fp8_scale_index(row, job_chunk / 16, d.rows, n / kFp8GroupSize, d.layout), scale,
                    d.format);
  float inverse[kChunks];
  bool finite = true;
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    inverse[i] = __uint_as_float(shfl_u32(__float_as_uint(scale.inverse), i * per_wave + lane / 16));
    finite = finite && fp8_inverse_is_finite(inverse[i]);
  }
  // One branch for all chunks: the hot loop stays free of the full encode.
  if (finite) {
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      if (in[i]) quantize_store_bf16x8_as<Format, true>(y[i], inverse[i], d.q + row * n + c[i] * 8);
  } else {
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      if (in[i]) quantize_store_bf16x8<Format>(y[i], inverse[i], d.q + row * n + c[i] * 8);
  }
}

inline unsigned grid_for(std::int64_t work, std::int64_t per_block) {
  return static_cast<unsigned>((work + per_block - 1) / per_block);
}

}  // namespace fb
