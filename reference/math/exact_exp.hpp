// The project's exp and sigmoid: one implementation for host and device (semantics section 1).
//
// Made only of IEEE-exact operations (+ - * and explicit fma), so the CPU emulation, NVIDIA and AMD
// give the same bits. Vendor exp intrinsics differ between platforms and are not used.
//
//   k = nearest integer to x / ln2      (magic-number add: exact ops, ties to even)
//   r = x - k ln2                       (Cody-Waite: ln2 split in two, each step one fma)
//   p = e^r on [-ln2/2, ln2/2]          (degree-7 Taylor polynomial, Horner with fma)
//   exp(x) = (p * 2^a) * 2^b            a = floor(k/2), b = k - a: the first multiply is exact,
//                                       so p * 2^k is rounded once (only if subnormal or overflow)
//
// Accuracy: at most 0.94 ulp from exp in double over every fp32 in [-104, 89] (measured by
// tests/reference/exact_exp_test, which asserts <= 1 ulp), so results are faithfully rounded;
// overflow gives +inf and results below 2^-150 give 0, with subnormal results kept.
//
// No range branches: x is clamped to [-104, 89], where the same arithmetic already gives 0 below
// -103.97 and +inf above 88.72; 2^a and 2^b come from t's bits, not a float-to-int conversion.
// Same bits as the earlier branchy form on every fp32 (tests/reference/exact_exp_test keeps it as
// the oracle), in 25 PTX instructions instead of 37.
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

namespace detail {
// kClampBelow = false only for callers whose x is never below -104 unless NaN: the lower clamp is
// then the identity, so the bits are those of exact_exp.
template <bool kClampBelow>
FB_HD float exact_exp_impl(float x) {
  const float kRoundMagic = 12582912.0f;              // 1.5 * 2^23: adding it rounds to an integer
  const float kLog2e = 1.44269502162933349609375f;
  const float kLn2Hi = 0.693145751953125f;            // 15 significant bits: k * kLn2Hi is exact
  const float kLn2Lo = 1.42860676533018704503775e-06f;
  // fmax/fmin-shaped (a NaN becomes the bound; the NaN itself is returned by the last line).
  float xc = x;
  if constexpr (kClampBelow) xc = xc > -104.0f ? xc : -104.0f;
  xc = xc < 89.0f ? xc : 89.0f;
  const float t = xc * kLog2e + kRoundMagic;          // t = 1.5 * 2^23 + k, k in [-150, 128]
  const float kf = t - kRoundMagic;
  float r = fma32(-kf, kLn2Hi, xc);
  r = fma32(-kf, kLn2Lo, r);
  float p = 1.98412701138295233249664e-04f;           // 1/7!
  p = fma32(p, r, 1.38888892251998186111450e-03f);    // 1/6!
  p = fma32(p, r, 8.33333376795053482055664e-03f);    // 1/5!
  p = fma32(p, r, 4.16666679084300994873047e-02f);    // 1/4!
  p = fma32(p, r, 1.66666671633720397949219e-01f);    // 1/3!
  p = fma32(p, r, 0.5f);
  p = fma32(p, r, 1.0f);
  p = fma32(p, r, 1.0f);
  // bits(t) = 0x4B400000 + k, so s = bits(t) << 22 = k << 22: bits 23.. hold a = floor(k/2),
  // bit 22 holds k & 1 = b - a. a, b in [-75, 64]: 2^a, 2^b normal, p * 2^a (p in [0.70, 1.42]) exact.
  const std::uint32_t s = float_bits(t) << 22;
  const std::uint32_t odd = s & 0x00400000u;
  const float two_a = bits_float(s - odd + 0x3F800000u);
  const float two_b = bits_float(s + odd + 0x3F800000u);
  const float e = (p * two_a) * two_b;
  return x != x ? x + x : e;                          // NaN stays NaN
}
}  // namespace detail

FB_HD float exact_exp(float x) { return detail::exact_exp_impl<true>(x); }

// 1 / (1 + e^-z), with the project exp and an IEEE division.
FB_HD float exact_sigmoid(float z) { return 1.0f / (1.0f + exact_exp(-z)); }

// exact_sigmoid for z <= 104 or NaN (swiglu_oai: z = 1.702 g with g <= 7), one instruction fewer.
FB_HD float exact_sigmoid_z_at_most_104(float z) { return 1.0f / (1.0f + detail::exact_exp_impl<false>(-z)); }

}  // namespace fb
