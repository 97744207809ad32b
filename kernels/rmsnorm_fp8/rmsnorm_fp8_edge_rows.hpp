// The `edge` input distribution of RMSNorm -> fp8: rows whose normalised values hit the corners of
// the fp8 epilogue (floor scale, saturation, exact ties) and of the norm itself (cancellation,
// subnormal inputs, a sum of squares spread over 2^64).
#pragma once

#include <cstdint>
#include <vector>

#include "reference/codecs/fp8.hpp"

namespace fb {

inline constexpr const char* rmsnorm_edge_rows_text =
    "normal, weights with offset + w = 1, and rows cycling (row % 8) through: all +0 (floor scale, bytes 0); "
    "one +-2^50 per 128 columns (its group saturates to +-MAX, the rest ~1e-14); exact fp8 ties "
    "(mean s^2 = 256, so r = 1/16 exactly, and amax = MAX/64: scale 1/64); residual = -x (s = +0) or "
    "+0/-0 without residual; bf16 subnormals; magnitudes spread over 2^-16..2^16; every |s| = 2^40 "
    "(every byte +-MAX); a normal row";

// The s values (x + residual) of one 128-column group of the exact-tie row, for an fp8 flavour:
// entry 0 is the group's amax (y = MAX/64), then ties in the fp8 domain q = y * 64 (34, 38, 68, 76,
// 136 [, 152, 432 for e4m3fn]: each exactly halfway, signs alternating), then fillers that make
// the group's sum of squares exactly 256 * 128. Every value is a multiple of 1/2 below 2^8, so
// every square and every partial sum of the canonical order is exact in fp32.
std::vector<float> rmsnorm_tie_group(Fp8Flavour flavour);

// Rewrites rows of x and residual (null without residual; both already filled with the normal
// distribution) and sets the weights so that weight_offset + w = 1, in place.
void apply_rmsnorm_edge_rows(std::uint16_t* x, std::uint16_t* residual, std::uint16_t* weight, std::int64_t rows,
                             std::int64_t hidden, float weight_offset, Fp8Flavour flavour);

}  // namespace fb
