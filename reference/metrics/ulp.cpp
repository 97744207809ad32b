#include "reference/metrics/ulp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/fp8.hpp"

namespace fb {
namespace {

struct Grid {
  int mantissa_bits;
  int min_exponent;    // exponent of the smallest normal
  double max_finite;
  bool saturating;
  int sign_bit;        // position of the sign in the code
};

Grid grid_of(UlpFormat f) {
  switch (f) {
    case UlpFormat::f32: return {23, -126, static_cast<double>(std::numeric_limits<float>::max()), false, 31};
    case UlpFormat::bf16: return {7, -126, 3.38953138925153547590470800371487866880e38, false, 15};
    case UlpFormat::fp8_e4m3fn: return {3, -6, 448.0, true, 7};
    case UlpFormat::fp8_e4m3fnuz: return {3, -7, 240.0, true, 7};
  }
  return {23, -126, 0, false, 31};
}

}  // namespace

double round_to_format(double value, UlpFormat format) {
  if (std::isnan(value)) return value;
  const Grid g = grid_of(format);
  const double a = std::fabs(value);
  double r;
  if (std::isinf(a)) {
    r = g.saturating ? g.max_finite : a;
  } else if (a == 0.0) {
    r = 0.0;
  } else {
    int e2 = 0;
    std::frexp(a, &e2);  // a = f * 2^e2, f in [0.5, 1)
    const int quantum = std::max(e2 - 1, g.min_exponent) - g.mantissa_bits;
    r = std::ldexp(std::nearbyint(std::ldexp(a, -quantum)), quantum);  // exact scaling, one RNE
    if (r > g.max_finite) {
      // Past the largest finite value: saturate, or follow IEEE (inf unless it rounded down to max).
      const double half_step = std::ldexp(1.0, std::ilogb(g.max_finite) - g.mantissa_bits - 1);
      r = g.saturating ? g.max_finite
                       : (a < g.max_finite + half_step ? g.max_finite : std::numeric_limits<double>::infinity());
    }
  }
  return std::copysign(r, value);
}

std::uint32_t format_code(UlpFormat format, double value) {
  const float f = static_cast<float>(round_to_format(value, format));  // exact: the value is on the grid
  switch (format) {
    case UlpFormat::f32: return float_bits(f);
    case UlpFormat::bf16: return bf16_from_float(f);
    case UlpFormat::fp8_e4m3fn: return fp8_e4m3fn_from_float(f);
    case UlpFormat::fp8_e4m3fnuz: return fp8_e4m3fnuz_from_float(f);
  }
  return 0;
}

std::int64_t format_ordinal(UlpFormat format, std::uint32_t code) {
  const int sign_bit = grid_of(format).sign_bit;
  const std::int64_t magnitude = code & ((1u << sign_bit) - 1u);
  return ((code >> sign_bit) & 1u) ? -magnitude : magnitude;
}

std::int64_t ulp_distance(UlpFormat format, std::uint32_t code, double ref) {
  return std::llabs(format_ordinal(format, code) - format_ordinal(format, format_code(format, ref)));
}

}  // namespace fb
