// 16-byte vector access for bf16 rows and 8-byte stores for fp8: the widest single accesses both
// vendors issue per thread. Rows must be 16-byte aligned (K a multiple of 8).
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"

namespace fb {

struct Bf16x8 {
  uint4 words;  // 8 bf16, element 2i in the low half of word i
};

__device__ inline Bf16x8 load_bf16x8(const std::uint16_t* p) { return Bf16x8{*reinterpret_cast<const uint4*>(p)}; }
__device__ inline void store_bf16x8(std::uint16_t* p, const Bf16x8& v) { *reinterpret_cast<uint4*>(p) = v.words; }

__device__ inline std::uint32_t word(const Bf16x8& v, int i) {
  return i == 0 ? v.words.x : (i == 1 ? v.words.y : (i == 2 ? v.words.z : v.words.w));
}

// Element j (0..7) as fp32: exact widening.
__device__ inline float bf16x8_element(const Bf16x8& v, int j) {
  const std::uint32_t w = word(v, j / 2);
  return __uint_as_float(j % 2 ? (w & 0xFFFF0000u) : (w << 16));
}

__device__ inline void store_u8x8(std::uint8_t* p, const std::uint8_t (&b)[8]) {
  uint2 v;
  v.x = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
  v.y = b[4] | (b[5] << 8) | (b[6] << 16) | (static_cast<std::uint32_t>(b[7]) << 24);
  *reinterpret_cast<uint2*>(p) = v;
}

// Four byte pairs (element 2j in the low byte of pair j) as one 8-byte store.
__device__ inline void store_u16x4(std::uint8_t* p, const std::uint16_t (&h)[4]) {
  uint2 v;
  v.x = h[0] | (static_cast<std::uint32_t>(h[1]) << 16);
  v.y = h[2] | (static_cast<std::uint32_t>(h[3]) << 16);
  *reinterpret_cast<uint2*>(p) = v;
}

}  // namespace fb
