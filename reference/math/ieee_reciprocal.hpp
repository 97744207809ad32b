// 1 / d, correctly rounded (IEEE round to nearest even), for d in [1, 2^126): the reciprocal of a
// sigmoid denominator, without the range guard of a general division.
//
// NVIDIA's IEEE reciprocal (rcp.rn.f32) is a hardware seed refined by fma, behind a test of
// d's exponent that branches to a slow path for the inputs whose reciprocal or input is subnormal,
// infinite or zero. That test and its branch cost about 6 instructions per element, more than the
// refinement itself. Here the range is the caller's promise: the seed (rcp.approx.ftz, 1 ulp) and
// the same refinement, e = 1 - d r (exact in one fma) and r + r e, rounded once. The result is the
// IEEE reciprocal's bits, not an approximation: tests/kernels/device_codecs_test.cpp checks it
// against 1.0f / d on every fp32 in the range. Elsewhere (the host, AMD) it is the division itself.
//
// Callers whose d can reach 2^126 or more (a sigmoid denominator for z < -87.3) must test for that
// and divide instead (swiglu_fp8_device.hpp tests its gates).
#pragma once

#include "reference/codecs/host_device.hpp"

namespace fb {

FB_HD float ieee_reciprocal_in_range(float d) {
#if FB_DEVICE_PASS && defined(__CUDA_ARCH__)
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
  const float e = fma32(-d, r, 1.0f);
  return fma32(r, e, r);
#else
  return 1.0f / d;
#endif
}

}  // namespace fb
