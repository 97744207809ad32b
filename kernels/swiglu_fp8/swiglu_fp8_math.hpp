// The arithmetic of SwiGLU, shared by the kernels and the CPU emulation
// (docs/numeric-contract.md#swiglu-fp8):
//   swiglu_oai  g = min(gate, 7); u = clamp(up, -7, 7)        exact (NaN passes through)
//               z = fl32(1.702f * g); sig = 1 / (1 + exp(-z))  project exp, IEEE add and divide
//               out = bf16((g * sig) * (u + 1))                  three fp32 roundings, then bf16
//   silu        out = bf16((gate * sigmoid(gate)) * up)
// sigmoid is fb::exact_sigmoid (reference/math/exact_exp.hpp; for swiglu_oai its bitwise-equal
// variant for z <= 86): never expf or __expf. Where exp(-z) overflows fp32 (z < -88.72),
// 1 + exp(-z) is +inf and sigmoid is exactly 0.
#pragma once

#include "reference/codecs/host_device.hpp"
#include "reference/math/exact_exp.hpp"

namespace fb {

inline constexpr float kSwigluOaiAlpha = 1.702f;
inline constexpr float kSwigluOaiLimit = 7.0f;

// Clamps written as comparisons so that a NaN input stays NaN (fminf/fmaxf would drop it).
FB_HD float swiglu_oai_gate(float gate) { return gate > kSwigluOaiLimit ? kSwigluOaiLimit : gate; }

FB_HD float swiglu_oai_up(float up) {
  return up > kSwigluOaiLimit ? kSwigluOaiLimit : (up < -kSwigluOaiLimit ? -kSwigluOaiLimit : up);
}

// The activation of clamped inputs (g <= 7 or NaN, u in [-7, 7] or NaN), in steps so the kernels
// can form a chunk's denominators before its reciprocals (and, where every gate is at least -51,
// take both without range clamps or guards: reference/math/ieee_reciprocal.hpp). z <= 11.92, so
// the sigmoid is exact_sigmoid's bitwise-equal variant for z <= 86 (1 / denominator); where g is
// NaN that variant gives +0 and out is NaN through the product with g.
FB_HD float swiglu_oai_denominator(float g) { return sigmoid_denominator_z_at_most_86(kSwigluOaiAlpha * g); }

// For gates g >= -51 (z >= -86.81), the same bits without exp's clamp (the identity there), and a
// denominator below 2^126 (e^86.81 < 2^125.3): the range of ieee_reciprocal_in_range.
inline constexpr float kSwigluOaiInRangeGate = -51.0f;
inline constexpr std::uint32_t kSwigluOaiInRangeGateBf16x2 = 0xC24CC24Cu;  // the same as a bf16 pair
FB_HD float swiglu_oai_denominator_in_range(float g) {
  return sigmoid_denominator_z_from_minus_89_to_86(kSwigluOaiAlpha * g);
}

FB_HD float swiglu_oai_from_sigmoid(float g, float u, float sigmoid) { return (g * sigmoid) * (u + 1.0f); }

FB_HD float swiglu_oai_from_denominator(float g, float u, float denominator) {
  return swiglu_oai_from_sigmoid(g, u, 1.0f / denominator);
}

FB_HD float swiglu_oai_of_clamped(float g, float u) {
  return swiglu_oai_from_denominator(g, u, swiglu_oai_denominator(g));
}

FB_HD float swiglu_oai_value(float gate, float up) {
  return swiglu_oai_of_clamped(swiglu_oai_gate(gate), swiglu_oai_up(up));
}

FB_HD float silu_mul_value(float gate, float up) { return (gate * exact_sigmoid(gate)) * up; }

// The activation as a template argument of the kernels (no per-element branch).
template <bool kOai>
FB_HD float swiglu_value(float gate, float up) {
  return kOai ? swiglu_oai_value(gate, up) : silu_mul_value(gate, up);
}

}  // namespace fb
