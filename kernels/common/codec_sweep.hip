// Runs the shared codecs and exp on the device over consecutive fp32 bit patterns.
#include "kernels/common/codec_sweep.hpp"
#include "kernels/common/gpu_check.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e2m1.hpp"
#include "reference/codecs/e8m0.hpp"
#include "reference/codecs/fp8.hpp"
#include "reference/math/exact_exp.hpp"
#include "reference/math/ieee_reciprocal.hpp"

namespace fb {
namespace {

constexpr int kThreads = 256;

template <CodecSweep kWhich>
__global__ __launch_bounds__(kThreads) void codec_sweep_kernel(std::uint32_t first, std::uint32_t pairs, void* out) {
  const std::uint32_t p = blockIdx.x * kThreads + threadIdx.x;
  if (p >= pairs) return;
  const std::uint32_t i = 2 * p;
  const float lo = bits_float(first + i), hi = bits_float(first + i + 1);
  if constexpr (kWhich == CodecSweep::fp8_e4m3fn) {
    reinterpret_cast<std::uint16_t*>(out)[p] = fp8x2_encode<Fp8E4m3fnFormat>(lo, hi);
  } else if constexpr (kWhich == CodecSweep::fp8_e4m3fnuz) {
    reinterpret_cast<std::uint16_t*>(out)[p] = fp8x2_encode<Fp8E4m3fnuzFormat>(lo, hi);
  } else if constexpr (kWhich == CodecSweep::bf16) {
    const std::uint32_t pair = bf16x2_from_float(lo, hi);  // the producers' path
    static_cast<std::uint16_t*>(out)[i] = static_cast<std::uint16_t>(pair);
    static_cast<std::uint16_t*>(out)[i + 1] = static_cast<std::uint16_t>(pair >> 16);
  } else if constexpr (kWhich == CodecSweep::exact_exp) {
    static_cast<float*>(out)[i] = exact_exp(lo);
    static_cast<float*>(out)[i + 1] = exact_exp(hi);
  } else if constexpr (kWhich == CodecSweep::sigmoid_z_at_most_86) {
    static_cast<float*>(out)[i] = exact_sigmoid_z_at_most_86(lo);
    static_cast<float*>(out)[i + 1] = exact_sigmoid_z_at_most_86(hi);
  } else if constexpr (kWhich == CodecSweep::ieee_reciprocal_in_range) {
    static_cast<float*>(out)[i] = ieee_reciprocal_in_range(lo);
    static_cast<float*>(out)[i + 1] = ieee_reciprocal_in_range(hi);
  } else {
    auto one = [](float x) -> std::uint8_t {
      if constexpr (kWhich == CodecSweep::e2m1_rne) return e2m1_from_float(x, Fp4Rounding::rne);
      if constexpr (kWhich == CodecSweep::e2m1_half_away) return e2m1_from_float(x, Fp4Rounding::half_away);
      if constexpr (kWhich == CodecSweep::e8m0_roundup) return e8m0_scale_from_amax(x, MxScaleRule::roundup);
      if constexpr (kWhich == CodecSweep::e8m0_even) return e8m0_scale_from_amax(x, MxScaleRule::even);
      return e8m0_scale_from_amax(x, MxScaleRule::floor);
    };
    static_cast<std::uint8_t*>(out)[i] = one(lo);
    static_cast<std::uint8_t*>(out)[i + 1] = one(hi);
  }
}

template <CodecSweep kWhich>
void launch(std::uint32_t first, std::uint32_t count, void* out, hipStream_t stream) {
  const std::uint32_t pairs = count / 2;
  codec_sweep_kernel<kWhich><<<(pairs + kThreads - 1) / kThreads, kThreads, 0, stream>>>(first, pairs, out);
}

}  // namespace

std::size_t codec_sweep_output_bytes(CodecSweep which) {
  if (which == CodecSweep::bf16) return 2;
  return which == CodecSweep::exact_exp || which == CodecSweep::sigmoid_z_at_most_86 ||
                 which == CodecSweep::ieee_reciprocal_in_range
             ? 4
             : 1;
}

void codec_sweep_launch(CodecSweep which, std::uint32_t first, std::uint32_t count, void* out, void* stream) {
  auto* s = static_cast<hipStream_t>(stream);
  switch (which) {
    case CodecSweep::fp8_e4m3fn: launch<CodecSweep::fp8_e4m3fn>(first, count, out, s); break;
    case CodecSweep::fp8_e4m3fnuz: launch<CodecSweep::fp8_e4m3fnuz>(first, count, out, s); break;
    case CodecSweep::bf16: launch<CodecSweep::bf16>(first, count, out, s); break;
    case CodecSweep::e2m1_rne: launch<CodecSweep::e2m1_rne>(first, count, out, s); break;
    case CodecSweep::e2m1_half_away: launch<CodecSweep::e2m1_half_away>(first, count, out, s); break;
    case CodecSweep::e8m0_roundup: launch<CodecSweep::e8m0_roundup>(first, count, out, s); break;
    case CodecSweep::e8m0_even: launch<CodecSweep::e8m0_even>(first, count, out, s); break;
    case CodecSweep::e8m0_floor: launch<CodecSweep::e8m0_floor>(first, count, out, s); break;
    case CodecSweep::exact_exp: launch<CodecSweep::exact_exp>(first, count, out, s); break;
    case CodecSweep::sigmoid_z_at_most_86: launch<CodecSweep::sigmoid_z_at_most_86>(first, count, out, s); break;
    case CodecSweep::ieee_reciprocal_in_range:
      launch<CodecSweep::ieee_reciprocal_in_range>(first, count, out, s);
      break;
  }
  gpu_check_launch("codec_sweep_kernel");
}

}  // namespace fb
