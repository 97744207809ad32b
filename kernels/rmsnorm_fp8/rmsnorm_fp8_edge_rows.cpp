#include "kernels/rmsnorm_fp8/rmsnorm_fp8_edge_rows.hpp"

#include <cmath>
#include <stdexcept>

#include "reference/codecs/bf16.hpp"

namespace fb {
namespace {

constexpr std::int64_t kGroup = 128;
// Mean of s^2 in the tie row: r = 1/16 exactly, as 256 + eps rounds to 256 for eps < 2^-16 (half an ulp).
constexpr double kMeanSquare = 256.0;

// Up to four integers in [0, limit] whose squares sum to `units`.
std::vector<std::int64_t> four_squares(std::int64_t units, std::int64_t limit) {
  for (std::int64_t a = std::min<std::int64_t>(limit, static_cast<std::int64_t>(std::sqrt(units))); a >= 0; --a)
    for (std::int64_t b = std::min(a, static_cast<std::int64_t>(std::sqrt(units - a * a))); b >= 0; --b)
      for (std::int64_t c = std::min(b, static_cast<std::int64_t>(std::sqrt(units - a * a - b * b))); c >= 0; --c) {
        const std::int64_t rest = units - a * a - b * b - c * c;
        const auto d = static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(rest))));
        if (d * d == rest && d <= c) return {a, b, c, d};
      }
  throw std::logic_error("rmsnorm edge rows: no four-square filler");
}

}  // namespace

std::vector<float> rmsnorm_tie_group(Fp8Flavour flavour) {
  const bool fn = flavour == Fp8Flavour::e4m3fn;
  // y = s / 16 and q = y * 64, so s = q / 4; the amax y = MAX / 64 gives the scale 1/64 exactly.
  const float amax = fp8_max(flavour) / 4.0f;
  std::vector<float> s{amax};
  const std::vector<float> ties = fn ? std::vector<float>{34, 38, 68, 76, 136, 152, 432}
                                     : std::vector<float>{34, 38, 68, 76, 136};
  for (std::size_t i = 0; i < ties.size(); ++i) s.push_back((i % 2 ? -1.0f : 1.0f) * ties[i] / 4.0f);
  // Fillers, in units of 1/2 (their squares in units of 1/4), none above the amax.
  double sum = 0.0;
  for (float v : s) sum += static_cast<double>(v) * v;
  auto units = static_cast<std::int64_t>((kMeanSquare * kGroup - sum) * 4.0);
  const auto limit = static_cast<std::int64_t>(2.0f * amax);
  while (units > 2 * limit * limit) {
    s.push_back(-amax);
    units -= limit * limit;
  }
  int sign = 1;
  for (std::int64_t a : four_squares(units, limit))
    if (a > 0) s.push_back(static_cast<float>(sign = -sign) * static_cast<float>(a) / 2.0f);
  return s;
}

void apply_rmsnorm_edge_rows(std::uint16_t* x, std::uint16_t* residual, std::uint16_t* weight, std::int64_t rows,
                             std::int64_t hidden, float weight_offset, Fp8Flavour flavour) {
  for (std::int64_t c = 0; c < hidden; ++c) weight[c] = bf16_from_float(1.0f - weight_offset);
  // NOTE: the tie row is exact only while every canonical partial sum fits 24 bits: hidden <= 8192.
  const bool ties_fit = hidden % kGroup == 0 && hidden <= 8192;
  const std::vector<float> tie = rmsnorm_tie_group(flavour);
  // Sets s = v: x = v (no residual), or x = v/2 and residual = v/2 (both exact).
  auto set_s = [&](std::int64_t i, float v) {
    if (residual) {
      x[i] = bf16_from_float(v / 2.0f);
      residual[i] = bf16_from_float(v / 2.0f);
    } else {
      x[i] = bf16_from_float(v);
    }
  };

  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t base = r * hidden;
    const int pattern = static_cast<int>(r % 8);
    for (std::int64_t c = 0; c < hidden; ++c) {
      const std::int64_t i = base + c;
      const std::int64_t in_group = c % kGroup;
      switch (pattern) {
        case 0: set_s(i, 0.0f); break;
        case 1:
          if (in_group == 5) x[i] = bf16_from_float(std::ldexp((c / kGroup) % 2 ? -1.0f : 1.0f, 50));
          break;
        case 2:
          if (ties_fit) set_s(i, in_group < static_cast<std::int64_t>(tie.size()) ? tie[in_group] : 0.0f);
          break;
        case 3:
          if (residual)
            residual[i] = static_cast<std::uint16_t>(x[i] ^ 0x8000u);  // s = x - x = +0
          else
            x[i] = c % 2 ? 0x8000 : 0x0000;
          break;
        case 4:
          x[i] = static_cast<std::uint16_t>((x[i] & 0x8000) | (1 + (c % 0x7F)));  // bf16 subnormal
          if (residual) residual[i] = static_cast<std::uint16_t>((residual[i] & 0x8000) | (1 + (c % 0x3F)));
          break;
        case 5: {
          const float spread = std::ldexp(1.0f, static_cast<int>(c % 33) - 16);
          x[i] = bf16_from_float(bf16_to_float(x[i]) * spread);
          if (residual) residual[i] = bf16_from_float(bf16_to_float(residual[i]) * spread);
          break;
        }
        case 6: set_s(i, std::ldexp(c % 2 ? -1.0f : 1.0f, 40)); break;
        default: break;
      }
    }
  }
}

}  // namespace fb
