// 8-element chunks of a bf16 row: the unit of work of the row producers (F1, F2). A chunk is one
// 16-byte load when the row length n is a multiple of 8 (kVector); otherwise element by element,
// with the elements past n read as +0 and never written. Both paths give the same values: only the
// memory access differs.
#pragma once

#include <cstdint>

#include "kernels/common/vector_io.hpp"
#include "reference/codecs/bf16.hpp"

namespace fb {

__device__ inline Bf16x8 zero_bf16x8() { return Bf16x8{make_uint4(0, 0, 0, 0)}; }

// Chunk c (elements 8c .. 8c+7) of a row of n bf16.
template <bool kVector>
__device__ inline Bf16x8 load_chunk(const std::uint16_t* row, std::int64_t c, std::int64_t n) {
  if constexpr (kVector) {
    return load_bf16x8(row + c * 8);
  } else {
    std::uint16_t e[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) e[j] = c * 8 + j < n ? row[c * 8 + j] : std::uint16_t{0};
    Bf16x8 v;
    v.words.x = e[0] | (static_cast<std::uint32_t>(e[1]) << 16);
    v.words.y = e[2] | (static_cast<std::uint32_t>(e[3]) << 16);
    v.words.z = e[4] | (static_cast<std::uint32_t>(e[5]) << 16);
    v.words.w = e[6] | (static_cast<std::uint32_t>(e[7]) << 16);
    return v;
  }
}

// Exact widening of the 8 elements to fp32.
__device__ inline void widen(const Bf16x8& v, float (&f)[8]) {
#pragma unroll
  for (int j = 0; j < 8; ++j) f[j] = bf16x8_element(v, j);
}

// 8 fp32 to bf16 by the hardware's pair conversion (vector path), with no NaN test: every non-NaN
// value rounds as the codec rounds it (bf16x2_from_float_no_nan, device-swept over all 2^32), and a
// NaN takes the platform's bytes (NVIDIA's pair conversion writes the quiet NaN 0x7FFF). Callers
// whose values come from arithmetic may use it as is: the contract leaves a NaN computed in fp32 to
// the platform (docs/numeric-contract.md#number-formats; x86 and NVIDIA already disagree on the NaN
// an operation returns), which saves F2's fast path one instruction per element. pack_bf16x8 tests
// first.
__device__ inline Bf16x8 pack_bf16x8_platform_nan(const float (&f)[8]) {
  Bf16x8 v;
  v.words.x = bf16x2_from_float_no_nan(f[0], f[1]);
  v.words.y = bf16x2_from_float_no_nan(f[2], f[3]);
  v.words.z = bf16x2_from_float_no_nan(f[4], f[5]);
  v.words.w = bf16x2_from_float_no_nan(f[6], f[7]);
  return v;
}

// Rounds 8 fp32 to bf16 (RNE, the codec's rule). On the element path, elements past n are packed
// as +0, so they add nothing to an amax.
template <bool kVector>
__device__ inline Bf16x8 pack_bf16x8(const float (&f)[8], std::int64_t c, std::int64_t n) {
  Bf16x8 v;
  bool any_nan = false;
#pragma unroll
  for (int j = 0; j < 8; j += 2) any_nan = any_nan || f[j] != f[j] || f[j + 1] != f[j + 1];  // one test per pair
  if (kVector && !any_nan) {  // pairs: the hardware conversion where there is one
    v = pack_bf16x8_platform_nan(f);
  } else {  // the element path, and chunks holding a NaN (one test per chunk keeps the loop short)
    std::uint32_t b[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) b[j] = kVector || c * 8 + j < n ? bf16_from_float(f[j]) : 0u;
    v.words.x = b[0] | (b[1] << 16);
    v.words.y = b[2] | (b[3] << 16);
    v.words.z = b[4] | (b[5] << 16);
    v.words.w = b[6] | (b[7] << 16);
  }
  return v;
}

template <bool kVector>
__device__ inline void store_chunk_bf16(std::uint16_t* row, std::int64_t c, std::int64_t n, const Bf16x8& v) {
  if constexpr (kVector) {
    *reinterpret_cast<uint4*>(row + c * 8) = v.words;
  } else {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const std::uint32_t w = word(v, j / 2);
      if (c * 8 + j < n) row[c * 8 + j] = static_cast<std::uint16_t>(j % 2 ? w >> 16 : w & 0xFFFFu);
    }
  }
}

}  // namespace fb
