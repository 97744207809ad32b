// The `edge` input distribution of fp8 quant: rows that hit the format's corners.
#pragma once

#include <cstdint>

#include "reference/codecs/fp8.hpp"

namespace fb {

inline constexpr const char* fp8_edge_rows_text =
    "normal, with rows cycling (row % 8) through: all +0 (scale from the 1e-10 floor); one +-huge value per "
    "group (saturates to +-MAX); exact fp8 ties at scale 1; fp8 subnormals at scale 1; alternating +0/-0; "
    "bf16 subnormals; amax = 4*MAX (e8m0 exactly a power of two); a normal row";

// Rewrites rows of x (bf16 [rows][cols], already filled with the normal distribution) in place.
void apply_fp8_edge_rows(std::uint16_t* x, std::int64_t rows, std::int64_t cols, std::int64_t group,
                         Fp8Flavour flavour);

}  // namespace fb
