// fp8 e4m3fn (OCP) and e4m3fnuz (AMD gfx942) <-> fp32, bit-exact
// (docs/numeric-contract.md#number-formats).
//
// Encoders saturate: the input is clamped to +-MAX first, then rounded to nearest even, so +-inf
// gives +-MAX (as NVIDIA's satfinite). A NaN input gives NaN: 0x7F/0xFF by its sign for e4m3fn,
// 0x80 (the only NaN) for e4m3fnuz. e4m3fnuz has no -0: negative values that round to zero give 0x00.
// No flush to zero: the subnormal range is rounded exactly.
//
//   format     bias  max  max code  min normal  subnormal step  NaN
//   e4m3fn       7   448    0x7E       2^-6         2^-9        0x7F, 0xFF
//   e4m3fnuz     8   240    0x7F       2^-7         2^-10       0x80
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

enum class Fp8Flavour : std::uint8_t { e4m3fn, e4m3fnuz };

// The constants of one flavour. Bit patterns are fp32 encodings, so host and device agree on them
// without relying on constant folding.
struct Fp8E4m3fnFormat {
  static constexpr Fp8Flavour kFlavour = Fp8Flavour::e4m3fn;
  static constexpr std::uint32_t kBias = 7;
  static constexpr std::uint32_t kMaxBits = 0x43E00000u;         // 448
  static constexpr std::uint32_t kMinNormalBits = 0x3C800000u;   // 2^-6
  static constexpr std::uint32_t kSubnormalMagicBits = 0x46800000u;  // 2^14: its ulp is 2^-9
  static constexpr bool kUnsignedZero = false;
  FB_HD static std::uint8_t nan_code(std::uint32_t sign) { return static_cast<std::uint8_t>(0x7Fu | sign); }
};

struct Fp8E4m3fnuzFormat {
  static constexpr Fp8Flavour kFlavour = Fp8Flavour::e4m3fnuz;
  static constexpr std::uint32_t kBias = 8;
  static constexpr std::uint32_t kMaxBits = 0x43700000u;         // 240
  static constexpr std::uint32_t kMinNormalBits = 0x3C000000u;   // 2^-7
  static constexpr std::uint32_t kSubnormalMagicBits = 0x46000000u;  // 2^13: its ulp is 2^-10
  static constexpr bool kUnsignedZero = true;
  FB_HD static std::uint8_t nan_code(std::uint32_t) { return 0x80u; }
};

// Saturating round-to-nearest-even encode of one fp32.
template <class Format>
FB_HD std::uint8_t fp8_encode(float x) {
  const std::uint32_t u = float_bits(x);
  std::uint32_t sign = (u >> 24) & 0x80u;
  std::uint32_t mag = u & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return Format::nan_code(sign);
  if (mag > Format::kMaxBits) mag = Format::kMaxBits;  // clamp first (infinity included)
  std::uint32_t code;
  if (mag >= Format::kMinNormalBits) {
    // Normal: keep 3 mantissa bits, round half to even on the 20 dropped bits; a carry moves into
    // the exponent by itself. MAX is exact, so nothing rounds past it.
    mag += 0x7FFFFu + ((mag >> 20) & 1u);
    code = (mag >> 20) - ((127u - Format::kBias) << 3);
  } else {
    // Subnormal: adding 2^k whose ulp is the subnormal step rounds to that step (IEEE RNE), and
    // the difference of the bit patterns is the code. The sum is a normal fp32, so FTZ is moot.
    const float magic = bits_float(Format::kSubnormalMagicBits);
    code = float_bits(bits_float(mag) + magic) - Format::kSubnormalMagicBits;
  }
  if (Format::kUnsignedZero && code == 0) sign = 0;
  return static_cast<std::uint8_t>(code | sign);
}

// Set bit 7 when x is a NaN with its sign bit set (negative NaN patterns sort above 0xFF800000).
FB_HD std::uint32_t negative_nan_bit(float x) { return float_bits(x) > 0xFF800000u ? 0x80u : 0u; }

// Two encodes, `lo` in the low byte. On NVIDIA sm_89 and later, e4m3fn uses the hardware's
// cvt.rn.satfinite.e4m3x2.f32: it rounds exactly as fp8_encode (every fp32 input: the CUDA-oracle
// sweep on the host and the device sweep in tests/kernels/device_codecs_test), except that it
// writes 0x7F for every NaN, so the sign is put back. One instruction for two elements instead of
// about twenty integer operations each: this is what keeps the fp8 producers memory-bound.
// NOTE: the inline PTX lives here, not in kernels/common/hip_compat.hpp, because it is this codec's
// device specialisation (hip_compat maps runtime names and would pull CUDA headers into the host
// code that includes the codecs); AMD builds take the software path.
template <class Format>
FB_HD std::uint16_t fp8x2_encode(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if constexpr (Format::kFlavour == Fp8Flavour::e4m3fn) {
    unsigned short r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
    return static_cast<std::uint16_t>(r | negative_nan_bit(lo) | (negative_nan_bit(hi) << 8));
  }
#endif
  return static_cast<std::uint16_t>(fp8_encode<Format>(lo) | (fp8_encode<Format>(hi) << 8));
}

// fp8x2_encode for inputs that are not NaN (the caller knows it): the hardware path needs no sign
// fix-up then, two instructions fewer per element.
template <class Format>
FB_HD std::uint16_t fp8x2_encode_no_nan(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if constexpr (Format::kFlavour == Fp8Flavour::e4m3fn) {
    unsigned short r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
    return r;
  }
#endif
  return fp8x2_encode<Format>(lo, hi);
}

template <class Format>
FB_HD float fp8_decode(std::uint8_t c) {
  const std::uint32_t sign = static_cast<std::uint32_t>(c & 0x80u) << 24;
  const std::uint32_t exponent = (c >> 3) & 0xFu;
  const std::uint32_t mantissa = c & 0x7u;
  if (Format::kUnsignedZero ? (c == 0x80u) : ((c & 0x7Fu) == 0x7Fu)) return bits_float(0x7FC00000u | sign);
  if (exponent == 0) {
    // m * 2^(1 - bias - 3): exact in fp32.
    const float step = bits_float((127u + 1u - Format::kBias - 3u) << 23);
    const float v = static_cast<float>(mantissa) * step;
    return sign ? -v : v;
  }
  return bits_float(sign | ((exponent + 127u - Format::kBias) << 23) | (mantissa << 20));
}

FB_HD std::uint8_t fp8_e4m3fn_from_float(float x) { return fp8_encode<Fp8E4m3fnFormat>(x); }
FB_HD std::uint8_t fp8_e4m3fnuz_from_float(float x) { return fp8_encode<Fp8E4m3fnuzFormat>(x); }
FB_HD float fp8_e4m3fn_to_float(std::uint8_t c) { return fp8_decode<Fp8E4m3fnFormat>(c); }
FB_HD float fp8_e4m3fnuz_to_float(std::uint8_t c) { return fp8_decode<Fp8E4m3fnuzFormat>(c); }

FB_HD std::uint8_t fp8_from_float(float x, Fp8Flavour f) {
  return f == Fp8Flavour::e4m3fn ? fp8_e4m3fn_from_float(x) : fp8_e4m3fnuz_from_float(x);
}
FB_HD float fp8_to_float(std::uint8_t c, Fp8Flavour f) {
  return f == Fp8Flavour::e4m3fn ? fp8_e4m3fn_to_float(c) : fp8_e4m3fnuz_to_float(c);
}

// Largest finite magnitude, as an fp32.
FB_HD float fp8_max(Fp8Flavour f) {
  return bits_float(f == Fp8Flavour::e4m3fn ? Fp8E4m3fnFormat::kMaxBits : Fp8E4m3fnuzFormat::kMaxBits);
}

// fl32(1 / MAX), the multiplier of the scale rule (docs/numeric-contract.md#fp8-activation-quant):
// 1/448 and 1/240 rounded once to fp32. The unit test recomputes both in double.
FB_HD float fp8_inv_max(Fp8Flavour f) {
  return bits_float(f == Fp8Flavour::e4m3fn ? 0x3B124925u : 0x3B888889u);
}

}  // namespace fb
