// Host/device portability for the numeric core.
//
// Everything under reference/codecs and reference/math is written once and compiled three ways:
// by g++ for the CPU emulation and the tests, by nvcc for NVIDIA, by hipcc for AMD. FB_HD marks a
// function callable from both sides; the bit casts use the device intrinsics where they exist and
// memcpy on the host (the only portable type pun before C++20's std::bit_cast).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define FB_HD __host__ __device__ inline
#else
#define FB_HD inline
#endif

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define FB_DEVICE_PASS 1
#else
#define FB_DEVICE_PASS 0
#endif

namespace fb {

FB_HD std::uint32_t float_bits(float f) {
#if FB_DEVICE_PASS
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

FB_HD float bits_float(std::uint32_t u) {
#if FB_DEVICE_PASS
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// IEEE fused multiply-add, rounded once. Written out wherever the numeric contract uses an fma, so
// that no compiler is left to decide (contraction is off everywhere:
// docs/numeric-contract.md#one-result-on-every-platform).
FB_HD float fma32(float a, float b, float c) {
#if FB_DEVICE_PASS
  return __fmaf_rn(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
#endif
}

FB_HD bool is_nan_bits(std::uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }

}  // namespace fb
