// Seeded input generation, identical on every machine.
//
// Values come from a counter-based hash (splitmix64 of seed, stream and element index), so any
// element can be made independently (in parallel) and the same seed gives the same bytes
// everywhere. No libm call is involved: "normal" is the Irwin-Hall sum of four uniforms, scaled to
// unit variance, which is made of + and * only.
//
// Distributions (the `dist` axis of every case):
//   normal     Irwin-Hall(4) with sigma 1, rounded to the tensor's dtype
//   uniform    uniform in [-1, 1)
//   outliers   normal, with one column in 64 (chosen by hash) scaled by 32, like LLM activation channels
//   edge       family-defined rows that hit the format's corners (zeros, saturation, ties, subnormals)
//   nan        normal with one NaN per tensor: must be reported, never pass
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace fb {

enum class Distribution { normal, uniform, outliers, edge, nan };

Distribution distribution_from_name(const std::string& name);
const char* distribution_name(Distribution d);
std::vector<std::string> distribution_names(bool with_edge = true);
std::string distribution_text(Distribution d);

std::uint64_t mix64(std::uint64_t x);
// A value in [0, 1) with 53 random bits, for element `index` of `stream`.
double uniform01(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);

// One value of the distribution (before rounding to a dtype). `column` drives the outlier channels.
double draw(Distribution d, std::uint64_t seed, std::uint64_t stream, std::uint64_t index, std::int64_t column);

// Fill a bf16 or f32 tensor of extents [rows][cols] (the last dim is the column).
// `edge` and `nan` draw like `normal`: the family applies its own edge rows and NaN afterwards.
void fill_tensor(HostTensor& t, Distribution d, std::uint64_t seed, std::uint64_t stream, double scale = 1.0);

}  // namespace fb
