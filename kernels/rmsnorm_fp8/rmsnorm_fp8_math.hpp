// The arithmetic of Gemma RMSNorm, shared by the kernels and the CPU emulation
// (docs/numeric-contract.md#gemma-rmsnorm-fp8):
//   s  = f32(x) + f32(residual)            one fp32 add (s = f32(x), exact, without residual)
//   ss = canonical sum of s*s              kernels/common/canonical_sum.hpp (s*s its own multiply)
//   r  = 1 / sqrt(ss / n + eps)            IEEE divide, IEEE sqrt, IEEE divide (no rsqrt)
//   y  = (s * r) * (offset + f32(w))       offset 1 (Gemma) or 0; three fp32 roundings
//   out = bf16(y)                          the value the fp8 epilogue quantizes, fused or chained
// Only + - * / sqrt; the build turns contraction off, so nothing here becomes an fma.
#pragma once

#include <cmath>
#include <cstdint>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/host_device.hpp"

namespace fb {

FB_HD float rmsnorm_add(float x, float residual) { return x + residual; }

FB_HD float rmsnorm_square(float s) { return s * s; }

// r from the canonical sum of squares over n elements. sqrtf and '/' are correctly rounded: g++
// without fast-math, nvcc -prec-sqrt=true -prec-div=true, hipcc -fhip-fp32-correctly-rounded-divide-sqrt.
FB_HD float rmsnorm_inverse_rms(float ss, std::int64_t n, float eps) {
  return 1.0f / sqrtf(ss / static_cast<float>(n) + eps);
}

// The weight factor (offset + w), formed in fp32.
FB_HD float rmsnorm_weight_factor(float w, float offset) { return offset + w; }

FB_HD float rmsnorm_y(float s, float r, float factor) { return (s * r) * factor; }

}  // namespace fb
