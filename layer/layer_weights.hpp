// Seeded, cheap random tensors for the layer step, made directly in their storage formats so the
// m31 sizes (128 experts x 1536 x 6144 MXFP4) take a second, not minutes: no host quantization.
// Every value is finite; the ranges keep each GEMM's outputs near unit size (layer/README.md).
#pragma once

#include <cstdint>
#include <vector>

#include "reference/codecs/fp8.hpp"

namespace fb {

using Bytes = std::vector<std::uint8_t>;

Bytes random_bf16_normal(std::int64_t count, double sigma, std::uint64_t seed, std::uint64_t stream);
Bytes random_f32_normal(std::int64_t count, double sigma, std::uint64_t seed, std::uint64_t stream);
// fp32 values in [base * 0.75, base * 1.25): per-channel and per-block weight scales.
Bytes random_f32_scales(std::int64_t count, double base, std::uint64_t seed, std::uint64_t stream);
// fp8 codes of N(0, 1) values (finite, well inside the flavour's range).
Bytes random_fp8(std::int64_t count, Fp8Flavour flavour, std::uint64_t seed, std::uint64_t stream);
// Packed e2m1 pairs: any byte is two finite e2m1 values (|v| <= 6).
Bytes random_e2m1_bytes(std::int64_t count, std::uint64_t seed, std::uint64_t stream);
// e8m0 scale bytes center - 1, center, center + 1 (2^(b - 127)).
Bytes random_e8m0(std::int64_t count, int center, std::uint64_t seed, std::uint64_t stream);

}  // namespace fb
