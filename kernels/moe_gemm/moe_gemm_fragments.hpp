// The fp8 (e4m3) MMA fragments of one 32-element MX block, as kernels/moe_gemm/moe_gemm_exact.hpp
// lays them out (the permutation of k is explained there). Host and device (FB_HD), so the CPU
// tests can simulate the MMA on exactly what the kernels feed it.
#pragma once

#include <cstring>

#include "kernels/moe_gemm/moe_gemm_math.hpp"

namespace fb {

FB_HD std::uint32_t load_u32(const std::uint8_t* p) {
#if FB_DEVICE_PASS
  return *reinterpret_cast<const std::uint32_t*>(p);
#else
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#endif
}

// The A fragment of one 32-K block for lane (group, quad): rows `group` and `group + 8` start at
// row_lo / row_hi (the block's 16 bytes; nullptr: a sentinel row, all zero).
struct MxAFragment {
  std::uint32_t a[4];
};

// From the lane's two e2m1 words (bytes 4 quad .. 4 quad + 3 of rows group and group + 8): the
// pipelined K loop loads the words blocks ahead and converts them just before the MMA.
FB_HD MxAFragment mx_a_fragment_from_words(std::uint32_t lo, std::uint32_t hi) {
  MxAFragment f;
  e2m1x8_to_e4m3x8(lo, f.a[0], f.a[2]);
  e2m1x8_to_e4m3x8(hi, f.a[1], f.a[3]);
  return f;
}

FB_HD MxAFragment mx_a_fragment(const std::uint8_t* row_lo, const std::uint8_t* row_hi, int quad) {
  return mx_a_fragment_from_words(row_lo ? load_u32(row_lo + 4 * quad) : 0u, row_hi ? load_u32(row_hi + 4 * quad) : 0u);
}

// The B fragment of column `group` (its block's 16 bytes start at col).
struct MxBFragment {
  std::uint32_t b[2];
};

FB_HD MxBFragment mx_b_fragment_from_word(std::uint32_t word) {
  MxBFragment f;
  e2m1x8_to_e4m3x8(word, f.b[0], f.b[1]);  // code 0 is e4m3 +0: a zero word is a zero (padding) operand
  return f;
}

FB_HD MxBFragment mx_b_fragment(const std::uint8_t* col, int quad) { return mx_b_fragment_from_word(load_u32(col + 4 * quad)); }

}  // namespace fb
