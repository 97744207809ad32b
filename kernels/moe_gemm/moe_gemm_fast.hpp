// The `fast` variant of the MoE GEMMs: the price of exactness, measured. Host and device (FB_HD),
// shared by the wgmma engine (moe_gemm_wgmma.hip) and the CPU emulation (moe_gemm_emu.cpp).
//
// The exact variant promotes every 32-K MX block on the CUDA cores (four operations, or one, per
// output and block), because MX scales change every 32 elements and a matrix unit's accumulator
// cannot carry a scale that changes along K. `fast` moves the scales out of the K loop instead:
//   - each row (a weight row, an activation row) takes its largest block scale byte c;
//   - a block with scale byte s becomes e4m3 bytes of its values times 2^(s - c + 6): exact for
//     s >= c - 12 (u = s - c + 12 in 0..12, e2m1x8_to_e4m3x8_by_table's range: the largest value,
//     6 * 2^6 = 384, stays below e4m3's 448, the smallest, 0.5 * 2^-6, is e4m3's 2^-7); a block more
//     than 12 binades below its row's largest is dropped (its values become +-0);
//   - the matrix unit sums 128 K (four k32 steps from zero) per partial, the partials are added in
//     fp32 in K order on the CUDA cores (one add per output and 128 K, not four fmas), and the sum
//     is scaled once: (acc * 2^(c_a - 133)) * 2^(c_w - 133).
// So a product is exact in the operands and the error is the matrix unit's accumulation inside a
// 128-K partial (not IEEE: the fp8 GEMMs' model, 2^-13 per k32 step), the fp32 adds of the partials,
// the two scalings, and the dropped blocks (scale 2^(s - 127) at most 2^-13 of the row's largest
// block scale, so each value at most 6 * 2^(c - 140)). reference/moe_gemm_ref.cpp derives the bound from
// exactly these steps. A scale byte 0xFF (NaN) is its row's largest: its factor is NaN, and so is
// every output of the row, as in the exact variant.
//
// The CPU emulation forms each partial exactly (integers) and rounds it once to fp32, then the same
// adds and scalings: the GPU is within the matrix unit's bound of it, not bitwise.
#pragma once

#include <cstdint>

#include "kernels/moe_gemm/moe_gemm_math.hpp"

namespace fb {

inline constexpr int kMxFastWindow = 12;    // binades below a row's largest block scale kept exactly
inline constexpr int kMxFastGroupK = 128;   // K per matrix-unit partial: four k32 steps
inline constexpr int kMxFastGroupBlocks = kMxFastGroupK / 32;

// u of a block with scale byte s in a row whose largest scale byte is c (s <= c): s - c + 12, or -1
// where the block is dropped.
FB_HD int mx_fast_shift(std::uint32_t s, std::uint32_t c) {
  const int u = static_cast<int>(s) - static_cast<int>(c) + kMxFastWindow;
  return u < 0 ? -1 : u;
}

// The conversion table of such a block: each e4m3 byte is the code's value times 2^(u - 6); a
// dropped block's table maps every code to +-0.
FB_HD E2m1E4m3Table mx_fast_table(std::uint32_t s, std::uint32_t c) {
  const int u = mx_fast_shift(s, c);
  return u < 0 ? E2m1E4m3Table{0u, 0u} : e2m1_e4m3_table(static_cast<std::uint32_t>(u));
}

// 2^(c - 133): an operand byte times it is the value times 2^(s - 127). Exact for every c (2^-133
// is an fp32 subnormal); NaN for c = 0xFF.
FB_HD float mx_fast_row_factor(std::uint32_t c) { return mx_scale_float(c) * 0x1p-6f; }

// The end of a fast dot product: the fp32 sum of the partials, scaled by the two rows' factors.
FB_HD float mx_fast_finish(float acc, float factor_a, float factor_w) { return (acc * factor_a) * factor_w; }

// The largest byte of a 32-bit word of scale bytes, and of a running maximum.
FB_HD std::uint32_t mx_max_scale_byte(std::uint32_t running, std::uint32_t word) {
#pragma unroll
  for (int b = 0; b < 4; ++b) {
    const std::uint32_t s = (word >> (8 * b)) & 0xFFu;
    running = s > running ? s : running;
  }
  return running;
}

}  // namespace fb
