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
template <class Fn>
void with_row_threads(std::int64_t vectors, int per_thread, Fn&& fn) {
  const std::int64_t need = (vectors + per_thread - 1) / per_thread;
  if (need <= 32)
    fn(std::integral_constant<int, 32>{});
  else if (need <= 64)
    fn(std::integral_constant<int, 64>{});
  else if (need <= 128)
    fn(std::integral_constant<int, 128>{});
  else
    fn(std::integral_constant<int, 256>{});
}

__device__ inline std::uint32_t bf16x8_abs_max_bits(const Bf16x8& v) {
  return max_u32(max_u32(bf16x2_abs_max_bits(v.words.x), bf16x2_abs_max_bits(v.words.y)),
                 max_u32(bf16x2_abs_max_bits(v.words.z), bf16x2_abs_max_bits(v.words.w)));
}

template <class Format>
__device__ inline void quantize_store_bf16x8(const Bf16x8& v, float inverse, std::uint8_t* dst) {
  std::uint16_t pairs[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    pairs[j] = fp8x2_encode<Format>(bf16x8_element(v, 2 * j) * inverse, bf16x8_element(v, 2 * j + 1) * inverse);
  store_u16x4(dst, pairs);
}

// fp8 bytes of a chunk of bf16 values under one inverse scale (8-byte store on the vector path).
template <class Format, bool kVector>
__device__ inline void store_chunk_fp8(std::uint8_t* row, std::int64_t c, std::int64_t n, const Bf16x8& v,
                                       float inverse) {
  if constexpr (kVector) {
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

inline unsigned grid_for(std::int64_t work, std::int64_t per_block) {
  return static_cast<unsigned>((work + per_block - 1) / per_block);
}

}  // namespace fb
