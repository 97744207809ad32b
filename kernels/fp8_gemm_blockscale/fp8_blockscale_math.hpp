// The arithmetic of the block-scale fp8 GEMM shared by kernels and emulation.
//
// Canonical order of one output (the plain kernel and fp8_blockscale_canonical_emu):
//   for each slice s = 0 .. S-1 (its blocks kb in increasing order):
//     dot = +0; dot = dot + A[m][k] * B[n][k] for k = 128 kb .. 128 kb + 127 in order (exact products)
//     part = fma(dot, fl(a_s[m][kb] * b_s[n / 128][kb]), part)        (part starts at +0; one rounding)
//   acc[m][n] = acc[m][n] + part_s, in slice order, starting from what acc holds (+0 by contract)
//   C = bf16_rne(acc[m][n]) after the last slice.
// Blocked order (the matrix-unit kernel): the same with dot replaced by the block's partial from
// the matrix unit (emulated: the exact dot rounded once to fp32).
// Longest chain of fp32 adds on a product's path: 128 (dot) + KB (slice parts) + S (slices).
#pragma once

#include <cstdint>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/host_device.hpp"

namespace fb {

// One block's promotion, DeepGEMM's form: the two scales' product rounded once, then one fused
// multiply-add, part + dot * scale rounded once. A kernel computes the product once per row and
// block and then spends one instruction per element (the matrix-unit kernel: 64 per thread and
// block). Until run 58 the order was part + fl(fl(dot * a_s) * b_s): three instructions and three
// roundings per element, and the promotion was the block-scale kernel's extra cost per block over
// the general GEMM's.
FB_HD float blockscale_scale(float a_scale, float b_scale) { return a_scale * b_scale; }
FB_HD float blockscale_promote_scaled(float part, float dot, float scale) { return fma32(dot, scale, part); }
FB_HD float blockscale_promote(float part, float dot, float a_scale, float b_scale) {
  return blockscale_promote_scaled(part, dot, blockscale_scale(a_scale, b_scale));
}

// C of the direct form (S = 1, no acc): bf16(+0 + part), the bits the acc form writes after a
// memset (+0 + part is part but for -0, which becomes +0; part is never -0 anyway, since it
// starts at +0 and each fma adds to it).
// Two adjacent columns in one word, `lo` in the low half: the same bits through bf16x2_from_float
// (one conversion instruction for a pair on NVIDIA; run 70's profile put the software rounding of
// the direct epilogue at about 1300 instructions a unit and warp).
FB_HD std::uint32_t blockscale_direct_c_pair(float lo, float hi) { return bf16x2_from_float(0.0f + lo, 0.0f + hi); }

// Ticket values: the launch's epoch in the high 24 bits, the slice whose turn it is in the low 8.
// Slice 0 never waits and writes turn 1; slice s >= 1 waits for turn s; the last writes turn S,
// which no slice of any launch waits for, so stale tickets from earlier launches (or any content
// of a fresh workspace, barring a 2^-24 coincidence with this launch's epoch) never match.
FB_HD std::uint32_t blockscale_ticket(std::uint32_t epoch, std::int64_t turn) {
  return (epoch << 8) | static_cast<std::uint32_t>(turn);
}

}  // namespace fb
