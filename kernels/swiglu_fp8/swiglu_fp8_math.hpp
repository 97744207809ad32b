// The arithmetic of SwiGLU, shared by the kernels and the CPU emulation (semantics section 3):
//   swiglu_oai  g = min(gate, 7); u = clamp(up, -7, 7)        exact (NaN passes through)
//               z = fl32(1.702f * g); sig = 1 / (1 + exp(-z))  project exp, IEEE add and divide
//               out = bf16((g * sig) * (u + 1))                  three fp32 roundings, then bf16
//   silu        out = bf16((gate * sigmoid(gate)) * up)
// sigmoid is fb::exact_sigmoid (reference/math/exact_exp.hpp; for swiglu_oai its bitwise-equal
// variant for z <= 104): never expf or __expf. Where exp(-z) overflows fp32 (z < -88.72),
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

FB_HD float swiglu_oai_value(float gate, float up) {
  const float g = swiglu_oai_gate(gate);
  const float u = swiglu_oai_up(up);
  // g <= 7, so z <= 11.92: the sigmoid without exp's (then dead) lower clamp, same bits.
  return (g * exact_sigmoid_z_at_most_104(kSwigluOaiAlpha * g)) * (u + 1.0f);
}

FB_HD float silu_mul_value(float gate, float up) { return (gate * exact_sigmoid(gate)) * up; }

// The activation as a template argument of the kernels (no per-element branch).
template <bool kOai>
FB_HD float swiglu_value(float gate, float up) {
  return kOai ? swiglu_oai_value(gate, up) : silu_mul_value(gate, up);
}

}  // namespace fb
