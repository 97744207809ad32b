// bf16 <-> fp32, bit-exact (docs/numeric-contract.md#number-formats).
//
// Encode: round to nearest even on the top 16 bits of the fp32 pattern. A NaN keeps its sign and
// becomes quiet (bit 6 of the bf16 set); the integer add below would otherwise turn a NaN with a
// small payload into an infinity. Overflow past 0x7F7F rounds to infinity, as IEEE wants.
// Decode is exact: the bf16 bits are the top half of an fp32.
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

FB_HD std::uint16_t bf16_from_float(float x) {
  const std::uint32_t u = float_bits(x);
  if (is_nan_bits(u)) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// Two encodes, `lo` in the low half. On NVIDIA sm_80 and later, cvt.rn.bf16x2.f32 rounds like
// bf16_from_float on every non-NaN fp32 (the device sweep in tests/kernels/device_codecs_test
// checks all 2^32 inputs through this function) but writes 0x7FFF for every NaN; a pair holding a
// NaN takes the software path, so payload and sign survive. One instruction for two elements
// instead of about seven integer operations each: the producers F1/F2 are ALU-heavy.
// For inputs the caller knows are not NaN (the producers test a whole chunk at once).
FB_HD std::uint32_t bf16x2_from_float_no_nan(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  std::uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  return bf16_from_float(lo) | (static_cast<std::uint32_t>(bf16_from_float(hi)) << 16);
#endif
}

FB_HD std::uint32_t bf16x2_from_float(float lo, float hi) {
  if (!(lo != lo) && !(hi != hi)) return bf16x2_from_float_no_nan(lo, hi);
  return bf16_from_float(lo) | (static_cast<std::uint32_t>(bf16_from_float(hi)) << 16);
}

FB_HD float bf16_to_float(std::uint16_t b) { return bits_float(static_cast<std::uint32_t>(b) << 16); }

// Round an fp32 to the nearest bf16 and back: the value a kernel holds after storing bf16.
FB_HD float round_through_bf16(float x) { return bf16_to_float(bf16_from_float(x)); }

}  // namespace fb
