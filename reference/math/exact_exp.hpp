// The project's exp and sigmoid: one implementation for host and device
// (docs/numeric-contract.md#one-result-on-every-platform).
//
// Made only of IEEE-exact operations (+ - * and explicit fma), so the CPU emulation, NVIDIA and AMD
// give the same bits. Vendor exp intrinsics differ between platforms and are not used.
//
//   k = nearest integer to x log2e      (one fma with a magic number: ties to even)
//   r = x - k ln2                       (Cody-Waite: ln2 split in two, each step one fma)
//   p = e^r on [-ln2/2, ln2/2]          (degree-6 minimax polynomial, Horner with fma)
//   exp(x) = (p * 2^a) * 2^b            a = floor(k/2), b = k - a: the first multiply is exact,
//                                       so p * 2^k is rounded once (only if subnormal or overflow)
//
// Accuracy: at most 0.90 ulp from exp in double over every fp32 in [-104, 89] (measured by
// tests/reference/exact_exp_test, which asserts <= 1 ulp), so results are faithfully rounded;
// overflow gives +inf and results below 2^-150 give 0, with subnormal results kept.
//
// No range branches: x is clamped to [-104, 89], where the same arithmetic already gives 0 below
// -103.97 and +inf above 88.72; 2^a and 2^b come from t's bits, not a float-to-int conversion.
// Same bits as the branchy form on every fp32 (tests/reference/exact_exp_test keeps it as the
// oracle of the range logic).
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

namespace detail {
inline constexpr float kExpRoundMagic = 12582912.0f;    // 1.5 * 2^23: adding it rounds to an integer
inline constexpr float kExpLog2e = 1.44269502162933349609375f;
inline constexpr float kExpLn2Hi = 0.693145751953125f;  // 15 significant bits: k * kExpLn2Hi is exact
inline constexpr float kExpLn2Lo = 1.42860676533018704503775e-06f;

// t = 1.5 * 2^23 + k with k = round(x / ln2), and r = x - k ln2 (Cody-Waite: two fma).
struct ExpReduced {
  float t;
  float r;
};
FB_HD ExpReduced exp_reduce(float x) {
  const float t = fma32(x, kExpLog2e, kExpRoundMagic);  // k rounded from the exact product
  const float kf = t - kExpRoundMagic;
  float r = fma32(-kf, kExpLn2Hi, x);
  r = fma32(-kf, kExpLn2Lo, r);
  return {t, r};
}

// s * e^r on [-ln2/2, ln2/2] for s = 1 or 2: 1 + r + r^2 q(r), q of degree 4 fitted to e^r's
// relative error (weighted minimax, coefficients rounded to fp32: at most 0.063 ulp before the
// Horner roundings), Horner with fma. With every coefficient times s, each fma gives s times its
// s = 1 result exactly (no value here is near the subnormal or overflow range), so s = 2 yields
// exactly 2p.
FB_HD float exp_polynomial(float r, float s) {
  float p = s * 1.3814595295116305e-03f;
  p = fma32(p, r, s * 8.368718437850475e-03f);
  p = fma32(p, r, s * 4.166838526725769e-02f);
  p = fma32(p, r, s * 1.666652113199234e-01f);
  p = fma32(p, r, s * 4.999999403953552e-01f);
  p = fma32(p, r, s);
  return fma32(p, r, s);
}

FB_HD float exact_exp_impl(float x) {
  // fmax/fmin-shaped (a NaN becomes the bound; the NaN itself is returned by the last line).
  float xc = x > -104.0f ? x : -104.0f;
  xc = xc < 89.0f ? xc : 89.0f;
  const ExpReduced red = exp_reduce(xc);                // k in [-150, 128]
  const float p = exp_polynomial(red.r, 1.0f);
  // bits(t) = 0x4B400000 + k, so s = bits(t) << 22 = k << 22: bits 23.. hold a = floor(k/2),
  // bit 22 holds k & 1 = b - a. a, b in [-75, 64]: 2^a, 2^b normal, p * 2^a (p in [0.70, 1.42]) exact.
  const std::uint32_t s = float_bits(red.t) << 22;
  const std::uint32_t odd = s & 0x00400000u;
  const float two_a = bits_float(s - odd + 0x3F800000u);
  const float two_b = bits_float(s + odd + 0x3F800000u);
  const float e = (p * two_a) * two_b;
  return x != x ? x + x : e;                          // NaN stays NaN
}
}  // namespace detail

FB_HD float exact_exp(float x) { return detail::exact_exp_impl(x); }

// 1 / (1 + e^-z), with the project exp and an IEEE division.
FB_HD float exact_sigmoid(float z) { return 1.0f / (1.0f + exact_exp(-z)); }

// exact_sigmoid(z) for z <= 86, bit for bit (tests/reference/exact_exp_test sweeps every fp32
// z <= 86), in fewer instructions, for callers whose z is bounded (swiglu_oai: z = 1.702 g, g <= 7):
//  - x = -z >= -86: exp's lower clamp is dead and k >= -124, so 2^(k-1) is a normal fp32, and
//    p * 2^k is (2p) * 2^(k-1), with 2p exact from exp_polynomial(r, 2), so the denominator
//    1 + p * 2^k is one fma and one shift-add instead of two multiplies, two shift-adds and an add.
//  - no NaN select: a NaN z takes the clamp as z = -inf does and gives +0 on every platform.
//    Callers must carry the NaN in another operand (swiglu_oai multiplies by g, which is that NaN).
// Its denominator 1 + e^-z, for callers that form several before dividing: the divide's slow-path
// branch splits the code, so denominators computed first can overlap each other.
//
// Without exp's upper clamp, for callers that know z >= -89 (where the clamp x < 89 ? x : 89 is the
// identity): the same bits as sigmoid_denominator_z_at_most_86 there, one instruction fewer.
FB_HD float sigmoid_denominator_z_from_minus_89_to_86(float z) {
  const detail::ExpReduced red = detail::exp_reduce(-z);
  // bits(t) << 23 = k << 23 (mod 2^32), plus the bits of 2^-1: the bits of 2^(k-1).
  const float two_k_minus_1 = bits_float((float_bits(red.t) << 23) + 0x3F000000u);
  // (2p) * 2^(k-1) is exact (a normal times a normal power of two) or overflows to +inf, so one fma
  // rounds 1 + e^-z exactly as the multiply then the add would.
  return fma32(detail::exp_polynomial(red.r, 2.0f), two_k_minus_1, 1.0f);
}

FB_HD float sigmoid_denominator_z_at_most_86(float z) {
  const float x = -z;
  return sigmoid_denominator_z_from_minus_89_to_86(-(x < 89.0f ? x : 89.0f));
}

FB_HD float exact_sigmoid_z_at_most_86(float z) { return 1.0f / sigmoid_denominator_z_at_most_86(z); }

}  // namespace fb
