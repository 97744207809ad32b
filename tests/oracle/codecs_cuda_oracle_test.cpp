// The project's codecs against an independent oracle: the CUDA toolkit's host conversion functions
// (cuda_bf16.h, cuda_fp8.h, cuda_fp4.h, compiled with g++; no GPU). Every fp32 bit pattern.
//
// Where the contract and CUDA differ by design the test says so: NaN encodings (CUDA drops the
// sign) are checked against the contract instead; e4m3fnuz has no CUDA type, so its oracle is
// e4m3fn of 2x (same bits, bias one higher, so every fnuz value is half the fn value of its code)
// with -0 mapped to +0; above 232 (the tie between 224 and 240) fnuz gives 240 where fn saturates.
#include <cuda_bf16.h>
#include <cuda_fp4.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e2m1.hpp"
#include "reference/codecs/e8m0.hpp"
#include "reference/codecs/fp8.hpp"

namespace fb {
namespace {

struct SweepResult {
  std::uint64_t mismatches = 0;
  std::uint32_t first = 0;
};

// Runs check(bits) over [0, 2^32) (or the non-negative half) in parallel; check returns true when equal.
SweepResult sweep(const std::function<bool(std::uint32_t)>& check, bool non_negative_only = false) {
  const std::int64_t end = non_negative_only ? (1ll << 31) : (1ll << 32);
  std::atomic<std::uint64_t> mismatches{0};
  std::atomic<std::uint32_t> first{0xFFFFFFFFu};
#pragma omp parallel for schedule(static, 1 << 16)
  for (std::int64_t i = 0; i < end; ++i) {
    const auto u = static_cast<std::uint32_t>(i);
    if (!check(u)) {
      mismatches.fetch_add(1, std::memory_order_relaxed);
      std::uint32_t f = first.load();
      while (u < f && !first.compare_exchange_weak(f, u)) {
      }
    }
  }
  return {mismatches.load(), first.load()};
}

#define EXPECT_SWEEP_CLEAN(result)                                                            \
  EXPECT_EQ((result).mismatches, 0u) << "first mismatch at fp32 bits 0x" << std::hex << (result).first

TEST(CodecsCudaOracle, Bf16FromFloatMatchesCudaOnEveryFp32) {
  const SweepResult r = sweep([](std::uint32_t u) {
    const float x = bits_float(u);
    const std::uint16_t ours = bf16_from_float(x);
    if (is_nan_bits(u)) return ours == static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet, sign kept
    const __nv_bfloat16_raw raw = __float2bfloat16(x);
    return ours == raw.x;
  });
  EXPECT_SWEEP_CLEAN(r);
}

TEST(CodecsCudaOracle, E4m3fnMatchesCudaSatfiniteOnEveryFp32) {
  const SweepResult r = sweep([](std::uint32_t u) {
    const float x = bits_float(u);
    const std::uint8_t ours = fp8_e4m3fn_from_float(x);
    if (is_nan_bits(u)) return ours == static_cast<std::uint8_t>(0x7Fu | ((u >> 24) & 0x80u));
    return ours == __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  });
  EXPECT_SWEEP_CLEAN(r);
}

TEST(CodecsCudaOracle, E4m3fnuzMatchesE4m3fnOfTwiceXOnEveryFp32) {
  const SweepResult r = sweep([](std::uint32_t u) {
    const float x = bits_float(u);
    const std::uint8_t ours = fp8_e4m3fnuz_from_float(x);
    if (is_nan_bits(u)) return ours == 0x80u;
    const float a = bits_float(u & 0x7FFFFFFFu);
    if (a > 232.0f) return ours == static_cast<std::uint8_t>(0x7Fu | ((u >> 24) & 0x80u));
    std::uint8_t want = __nv_cvt_float_to_fp8(x * 2.0f, __NV_SATFINITE, __NV_E4M3);
    if (want == 0x80u) want = 0x00u;  // fnuz has no -0
    return ours == want;
  });
  EXPECT_SWEEP_CLEAN(r);
}

TEST(CodecsCudaOracle, E2m1RneMatchesCudaOnEveryFp32) {
  const SweepResult r = sweep([](std::uint32_t u) {
    if (is_nan_bits(u)) return true;  // the contract leaves NaN to the scale (never reaches e2m1)
    const float x = bits_float(u);
    return e2m1_from_float(x, Fp4Rounding::rne) == __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest);
  });
  EXPECT_SWEEP_CLEAN(r);
}

// The power of two at or above |y| on every fp32: the toolkit's saturating round-up (2^-127 at the
// bottom, 2^127 at the top) on every finite input; on inf the contract keeps the NaN scale, as the
// toolkit's non-saturating form does (its saturating form gives 254 there).
TEST(CodecsCudaOracle, E8m0RoundUpMatchesCudaSatfiniteRoundPosInfOnEveryFp32) {
  const SweepResult r = sweep([](std::uint32_t u) {
    const float y = bits_float(u);
    const std::uint8_t ours = e8m0_round_up(y);
    if ((u & 0x7FFFFFFFu) == 0x7F800000u) return ours == __nv_cvt_float_to_e8m0(y, __NV_NOSAT, cudaRoundPosInf);
    return ours == __nv_cvt_float_to_e8m0(y, __NV_SATFINITE, cudaRoundPosInf);
  });
  EXPECT_SWEEP_CLEAN(r);
}

TEST(CodecsCudaOracle, E8m0RoundupMatchesCudaRoundPosInfOnEveryAmax) {
  const SweepResult r = sweep(
      [](std::uint32_t u) {
        const float amax = bits_float(u);
        const float y = bits_float(amax_floor_bits(u)) * bits_float(kInvSixBits);
        return e8m0_scale_from_amax(amax, MxScaleRule::roundup) == __nv_cvt_float_to_e8m0(y, __NV_NOSAT, cudaRoundPosInf);
      },
      true);
  EXPECT_SWEEP_CLEAN(r);
}

TEST(CodecsCudaOracle, E8m0FloorMatchesCudaRoundZeroOnEveryAmax) {
  const SweepResult r = sweep(
      [](std::uint32_t u) {
        const float amax = bits_float(u);
        return e8m0_scale_from_amax(amax, MxScaleRule::floor) == __nv_cvt_float_to_e8m0(amax / 4.0f, __NV_NOSAT, cudaRoundZero);
      },
      true);
  EXPECT_SWEEP_CLEAN(r);
}

}  // namespace
}  // namespace fb
