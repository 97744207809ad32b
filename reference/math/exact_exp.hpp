// The project's exp and sigmoid: one implementation for host and device (semantics section 1).
//
// Made only of IEEE-exact operations (+ - * and explicit fma), so the CPU emulation, NVIDIA and AMD
// give the same bits. Vendor exp intrinsics differ between platforms and are not used.
//
//   k = nearest integer to x / ln2      (magic-number add: exact ops, ties to even)
//   r = x - k ln2                       (Cody-Waite: ln2 split in two, each step one fma)
//   p = e^r on [-ln2/2, ln2/2]          (degree-7 Taylor polynomial, Horner with fma)
//   exp(x) = p * 2^k                    (exact power-of-two multiplies; one rounding if subnormal)
//
// Accuracy: at most 0.94 ulp from exp in double over every fp32 in [-104, 89] (measured by
// tests/reference/exact_exp_test, which asserts <= 1 ulp), so results are faithfully rounded;
// overflow gives +inf and results below 2^-150 give 0, with subnormal results kept.
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

FB_HD float exact_exp(float x) {
  if (x != x) return x + x;                          // NaN stays NaN
  if (x > 88.72283935546875f) return bits_float(0x7F800000u);   // e^x rounds to +inf
  if (x < -103.972084045410156f) return 0.0f;         // below half the smallest subnormal
  const float kRoundMagic = 12582912.0f;              // 1.5 * 2^23: adding it rounds to an integer
  const float kLog2e = 1.44269502162933349609375f;
  const float kLn2Hi = 0.693145751953125f;            // 15 significant bits: k * kLn2Hi is exact
  const float kLn2Lo = 1.42860676533018704503775e-06f;
  const float kf = (x * kLog2e + kRoundMagic) - kRoundMagic;
  float r = fma32(-kf, kLn2Hi, x);
  r = fma32(-kf, kLn2Lo, r);
  float p = 1.98412701138295233249664e-04f;           // 1/7!
  p = fma32(p, r, 1.38888892251998186111450e-03f);    // 1/6!
  p = fma32(p, r, 8.33333376795053482055664e-03f);    // 1/5!
  p = fma32(p, r, 4.16666679084300994873047e-02f);    // 1/4!
  p = fma32(p, r, 1.66666671633720397949219e-01f);    // 1/3!
  p = fma32(p, r, 0.5f);
  p = fma32(p, r, 1.0f);
  p = fma32(p, r, 1.0f);
  int k = static_cast<int>(kf);
  // Scale by 2^k in steps whose factors are normal fp32, so only the last multiply can round.
  if (k > 127) {
    p = p * 2.0f;
    k -= 1;
  }
  if (k < -126) {
    p = p * bits_float(0x1F800000u);                  // 2^-64
    k += 64;
  }
  return p * bits_float(static_cast<std::uint32_t>(k + 127) << 23);
}

// 1 / (1 + e^-z), with the project exp and an IEEE division.
FB_HD float exact_sigmoid(float z) { return 1.0f / (1.0f + exact_exp(-z)); }

}  // namespace fb
