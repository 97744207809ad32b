// The arithmetic of the block-scale fp8 GEMM shared by kernels and emulation.
//
// Canonical order of one output (the plain kernel and fp8_blockscale_canonical_emu):
//   for each slice s = 0 .. S-1 (its blocks kb in increasing order):
//     dot = +0; dot = dot + A[m][k] * B[n][k] for k = 128 kb .. 128 kb + 127 in order (exact products)
//     part = part + fl(fl(dot * a_s[m][kb]) * b_s[n / 128][kb])        (part starts at +0)
//   acc[m][n] = acc[m][n] + part_s, in slice order, starting from what acc holds (+0 by contract)
//   C = bf16_rne(acc[m][n]) after the last slice.
// Blocked order (the matrix-unit kernel): the same with dot replaced by the block's partial from
// the matrix unit (emulated: the exact dot rounded once to fp32).
// Longest chain of fp32 adds on a product's path: 128 (dot) + KB (slice parts) + S (slices).
#pragma once

#include <cstdint>

#include "reference/codecs/bf16.hpp"

namespace fb {

// One block's promotion: part + (dot * a_s) * b_s, left to right as the Triton kernels and DeepGEMM.
FB_HD float blockscale_promote(float part, float dot, float a_scale, float b_scale) {
  const float scaled = dot * a_scale;
  return part + scaled * b_scale;
}

// Ticket values: the launch's epoch in the high 24 bits, the slice whose turn it is in the low 8.
// Slice 0 never waits and writes turn 1; slice s >= 1 waits for turn s; the last writes turn S,
// which no slice of any launch waits for, so stale tickets from earlier launches (or any content
// of a fresh workspace, barring a 2^-24 coincidence with this launch's epoch) never match.
FB_HD std::uint32_t blockscale_ticket(std::uint32_t epoch, std::int64_t turn) {
  return (epoch << 8) | static_cast<std::uint32_t>(turn);
}

}  // namespace fb
