// Seeded fp8 operands and fp32 scales for the fp8 GEMM cases (per token x per channel and
// block-scale alike).
//
// Values: the point's distribution times 32, encoded to fp8 (saturating): normal inputs use about
// 5 of e4m3's binades, outlier channels saturate. Scales: 2^-7 (1 + U[0, 1)), any fp32 in that range.
// Edge rows (dist = edge), on the first rows of the matrix: all +MAX (saturated), all zero,
// alternating +-MAX, all the smallest subnormal, then normal rows. NaN (dist = nan): one NaN code in
// the middle row of A.
#pragma once

#include <cstdint>

#include "core/inputs.hpp"
#include "reference/codecs/fp8.hpp"

namespace fb {

inline constexpr const char* kFp8GemmEdgeText =
    "edge rows: +MAX, zero, alternating +-MAX, smallest subnormal, then normal(sigma 32)";

void fill_fp8_operand(std::uint8_t* q, std::int64_t rows, std::int64_t cols, Distribution d, Fp8Flavour f,
                      std::uint64_t seed, std::uint64_t stream);
void fill_fp8_scales(float* s, std::int64_t count, std::uint64_t seed, std::uint64_t stream);
std::uint8_t fp8_nan_code(Fp8Flavour f);

}  // namespace fb
