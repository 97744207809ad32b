// The arithmetic of fp8 activation quant, shared by the kernels and the CPU emulation so that both
// compute every value the same way (docs/numeric-contract.md#fp8-activation-quant):
//   amax  = max(1e-10, max |x|)           max of |x| as fp32 bit patterns: exact, order-free, keeps NaN
//   scale = fl32(amax * fl32(1/MAX))      stored as fp32, or (e8m0) as its power of two rounded up
//   inv   = 1.0f / scale                  IEEE division (exact 2^(127-s) for e8m0)
//   q     = fp8(clamp(x * inv, -MAX, MAX))  one fp32 multiply, saturating RNE encode
#pragma once

#include "kernels/fp8_quant/fp8_quant.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e8m0.hpp"
#include "reference/codecs/fp8.hpp"

namespace fb {

// |x| of a bf16 as fp32 bits. For non-negative floats integer order is numeric order, and NaN
// patterns sit above infinity, so an integer max over these is the amax with NaN propagated.
FB_HD std::uint32_t bf16_abs_bits(std::uint16_t x) { return (static_cast<std::uint32_t>(x) << 16) & 0x7FFFFFFFu; }

FB_HD std::uint32_t max_u32(std::uint32_t a, std::uint32_t b) { return a > b ? a : b; }

// The amax of the two bf16 packed in one 32-bit word.
FB_HD std::uint32_t bf16x2_abs_max_bits(std::uint32_t w) {
  return max_u32((w << 16) & 0x7FFFFFFFu, w & 0x7FFF0000u);
}

struct Fp8Scale {
  float value;           // the scale as stored (fp32), or the e8m0 scale's value
  std::uint8_t e8m0;     // the stored byte when the scale format is e8m0
  float inverse;         // what x is multiplied by
};

FB_HD Fp8Scale fp8_scale_from_amax_bits(std::uint32_t amax_bits, Fp8Flavour flavour, ScaleFormat format) {
  const float amax = bits_float(amax_floor_bits(amax_bits));
  const float y = amax * fp8_inv_max(flavour);
  if (format == ScaleFormat::f32) return Fp8Scale{y, 0, 1.0f / y};
  const std::uint8_t s = e8m0_round_up(y);
  return Fp8Scale{e8m0_to_float(s), s, e8m0_inverse(s)};
}

template <class Format>
FB_HD std::uint8_t fp8_quantize_bf16(std::uint16_t x, float inverse) {
  return fp8_encode<Format>(bf16_to_float(x) * inverse);
}

// Flat index of scale (row, group) in its layout.
FB_HD std::int64_t fp8_scale_index(std::int64_t row, std::int64_t group, std::int64_t rows, std::int64_t groups,
                                   ScaleLayout layout) {
  return layout == ScaleLayout::row_major ? row * groups + group : group * rows + row;
}

FB_HD void fp8_store_scale(void* scales, std::int64_t index, const Fp8Scale& s, ScaleFormat format) {
  if (format == ScaleFormat::f32)
    static_cast<float*>(scales)[index] = s.value;
  else
    static_cast<std::uint8_t*>(scales)[index] = s.e8m0;
}

}  // namespace fb
