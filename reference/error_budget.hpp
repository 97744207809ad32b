// Relative error budgets of fp32 computations against their fp64 value, built step by step from
// the rounding of each operation (standard model: fl(a op b) = (a op b)(1 + d), |d| <= u), and the
// output bounds they imply. Used by the references of the producers (F1, F2) to derive bounds
// instead of typing them in.
#pragma once

#include <cmath>
#include <cstdint>

namespace fb {

inline constexpr double kF32UnitRoundoff = 0x1.0p-24;   // u: one fp32 rounding, relative
inline constexpr double kBf16UnitRoundoff = 0x1.0p-8;   // one bf16 rounding (8 significant bits)

// (1 + a)(1 + b) - 1: two relative errors in sequence.
inline double compose_rel(double a, double b) { return a + b + a * b; }

// gamma_m = m u / (1 - m u): m roundings in sequence (a sum of non-negative terms whose longest
// path has m adds is within gamma_m of the exact sum, relatively).
inline double gamma_rel(std::int64_t m) {
  const double mu = static_cast<double>(m) * kF32UnitRoundoff;
  return mu / (1.0 - mu);
}

// |sqrt(1 +- e) - 1| <= e / (2 - e).
inline double sqrt_rel(double e) { return e / (2.0 - e); }

// |1 / (1 +- e) - 1| <= e / (1 - e).
inline double reciprocal_rel(double e) { return e / (1.0 - e); }

// Ulps of bf16 between RN_bf16(v) and RN_bf16(ref) when |v - ref| <= rel |ref|. The bf16 spacing at
// ref is at least 2^-8 |ref| above the binade start and 2^-9 |ref| below it, so an interval of
// relative width <= 2^-9 holds at most one rounding midpoint: 1 ulp. Wider: one more per 2^-9.
inline std::int64_t bf16_ulp_bound(double rel) {
  if (rel <= 0x1.0p-9) return 1;
  return static_cast<std::int64_t>(std::floor(rel * 0x1.0p9)) + 1;
}

}  // namespace fb
