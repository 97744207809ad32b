// The `edge` input distribution of SwiGLU -> fp8: rows that hit the clamps, the sigmoid's fp32
// corners and the fp8 epilogue's corners (floor scale, saturation, exact ties).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/swiglu_fp8/swiglu_fp8.hpp"

namespace fb {

inline constexpr const char* swiglu_edge_rows_text =
    "normal, with rows cycling (row % 8) through: all +0 (floor scale, bytes 0); gate and up at and past the "
    "clamps (gate 7, 7.0625, 8, 100, 1e4, -7, -60, -1e4; up +-7, +-7.5, +-100, 0, -1); one gate = up = 2^20 "
    "per 128 columns (saturates to +-MAX); bf16(out) on exact fp8 ties at scale 1/64 (inputs searched "
    "through the activation); bf16 subnormal inputs; gates where sigmoid is an fp32 subnormal or exactly 0 "
    "(exp(-z) overflows); gates 20..83 (sigmoid exactly 1 in fp32); a normal row";

// One (gate, up) pair per target: bf16 inputs whose bf16(out) is exactly the target, found by
// searching the activation (out is monotonic in up for a fixed gate). Targets with no pair are
// left out.
struct SwigluInputPair {
  std::uint16_t gate;
  std::uint16_t up;
  float out;
};
std::vector<SwigluInputPair> swiglu_pairs_for(const std::vector<float>& targets, SwigluActivation activation);

// The targets of the tie row: the amax MAX/64 (scale exactly 1/64), then signed fp8 ties / 64.
std::vector<float> swiglu_tie_targets(Fp8Flavour flavour);

// Rewrites rows of gate_up (bf16 [rows][2d], already filled with the normal distribution) in place.
void apply_swiglu_edge_rows(std::uint16_t* gate_up, std::int64_t rows, std::int64_t d, SwigluActivation activation,
                            Fp8Flavour flavour);

}  // namespace fb
