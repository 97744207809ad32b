// The numeric core on the device equals the host on every fp32 input: fp8 (e4m3fn through the
// hardware conversion on sm_89+, e4m3fnuz in software), bf16, e2m1 (both roundings), e8m0 (three
// rules), the project exp, and the guard-free IEEE reciprocal on its range. Byte-exact, NaN
// encodings included, except exp of a NaN input, which must be a NaN of any payload (GPUs return
// their canonical NaN). Skipped without a GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e2m1.hpp"
#include "reference/codecs/e8m0.hpp"
#include "reference/codecs/fp8.hpp"
#include "reference/math/exact_exp.hpp"

#if FUSEBENCH_HAS_GPU
#include "kernels/common/codec_sweep.hpp"
#include "support/skip_without_gpu.hpp"
#endif

namespace fb {
namespace {

#if FUSEBENCH_HAS_GPU
// Host result of one codec, as the bytes the device writes.
void host_codec(CodecSweep which, std::uint32_t u, std::uint8_t* out) {
  const float x = bits_float(u);
  switch (which) {
    case CodecSweep::fp8_e4m3fn: *out = fp8_e4m3fn_from_float(x); break;
    case CodecSweep::fp8_e4m3fnuz: *out = fp8_e4m3fnuz_from_float(x); break;
    case CodecSweep::bf16: {
      const std::uint16_t b = bf16_from_float(x);
      std::memcpy(out, &b, 2);
      break;
    }
    case CodecSweep::e2m1_rne: *out = e2m1_from_float(x, Fp4Rounding::rne); break;
    case CodecSweep::e2m1_half_away: *out = e2m1_from_float(x, Fp4Rounding::half_away); break;
    case CodecSweep::e8m0_roundup: *out = e8m0_scale_from_amax(x, MxScaleRule::roundup); break;
    case CodecSweep::e8m0_even: *out = e8m0_scale_from_amax(x, MxScaleRule::even); break;
    case CodecSweep::e8m0_floor: *out = e8m0_scale_from_amax(x, MxScaleRule::floor); break;
    case CodecSweep::exact_exp: {
      const float e = exact_exp(x);
      std::memcpy(out, &e, 4);
      break;
    }
    case CodecSweep::sigmoid_z_at_most_86: {  // z <= 86 and NaN (+0 on every platform): exact
      const float e = exact_sigmoid_z_at_most_86(x);
      std::memcpy(out, &e, 4);
      break;
    }
    case CodecSweep::ieee_reciprocal_in_range: {  // the IEEE division, on [1, 2^126)
      const float r = 1.0f / x;
      std::memcpy(out, &r, 4);
      break;
    }
  }
}

std::string codec_test_name(const ::testing::TestParamInfo<CodecSweep>& info) {
  static const char* const kNames[] = {"fp8_e4m3fn",     "fp8_e4m3fnuz", "bf16",      "e2m1_rne",  "e2m1_half_away",
                                       "e8m0_roundup", "e8m0_even",    "e8m0_floor", "exact_exp",
                                       "sigmoid_z_at_most_86", "ieee_reciprocal_in_range"};
  return kNames[static_cast<int>(info.param)];
}

class DeviceCodecs : public ::testing::TestWithParam<CodecSweep> {
 protected:
  void SetUp() override {
    FB_SKIP_WITHOUT_GPU();
  }
};

TEST_P(DeviceCodecs, EveryFp32InputGivesTheHostBytes) {
  const CodecSweep which = GetParam();
  const std::size_t width = codec_sweep_output_bytes(which);
  constexpr std::uint32_t kChunk = 1u << 28;
  void* stream = gpu::create_stream();
  void* device_out = gpu::allocate(std::size_t{kChunk} * width);
  std::vector<std::uint8_t> got(std::size_t{kChunk} * width);
  std::uint64_t mismatches = 0;
  std::uint32_t first_bad = 0;
  for (std::uint64_t first = 0; first < (1ull << 32); first += kChunk) {
    codec_sweep_launch(which, static_cast<std::uint32_t>(first), kChunk, device_out, stream);
    gpu::synchronize(stream);
    gpu::copy_to_host(got.data(), device_out, got.size());
    std::atomic<std::uint64_t> bad{0};
    std::atomic<std::uint32_t> first_mismatch{0xFFFFFFFFu};
#pragma omp parallel for schedule(static, 1 << 16)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(kChunk); ++i) {
      std::uint8_t want[4];
      const auto u = static_cast<std::uint32_t>(first + static_cast<std::uint64_t>(i));
      host_codec(which, u, want);
      const std::uint8_t* have = got.data() + static_cast<std::size_t>(i) * width;
      // exp of a NaN is a NaN whose payload is the platform's
      // (docs/numeric-contract.md#number-formats: any NaN is accepted where the input was NaN);
      // every other result is compared byte for byte. The bounded sigmoid's contract covers z <= 86
      // and NaN; above, its arithmetic leaves fp32's range and the NaN payloads are the platform's.
      if (which == CodecSweep::sigmoid_z_at_most_86 && !is_nan_bits(u) && !(bits_float(u) <= 86.0f)) continue;
      // The guard-free reciprocal's range is its callers' promise: [1, 2^126), every input there.
      if (which == CodecSweep::ieee_reciprocal_in_range && (u < 0x3F800000u || u >= 0x7E800000u)) continue;
      if (which == CodecSweep::exact_exp && is_nan_bits(u)) {
        float h;
        std::memcpy(&h, have, 4);
        if (h != h) continue;
      }
      if (std::memcmp(want, have, width) != 0) {
        bad.fetch_add(1);
        std::uint32_t f = first_mismatch.load();
        while (u < f && !first_mismatch.compare_exchange_weak(f, u)) {
        }
      }
    }
    if (bad && !mismatches) first_bad = first_mismatch;
    mismatches += bad;
  }
  gpu::release(device_out);
  gpu::destroy_stream(stream);
  EXPECT_EQ(mismatches, 0u) << "first mismatch at fp32 bits 0x" << std::hex << first_bad;
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, DeviceCodecs,
                         ::testing::Values(CodecSweep::fp8_e4m3fn, CodecSweep::fp8_e4m3fnuz, CodecSweep::bf16,
                                           CodecSweep::e2m1_rne, CodecSweep::e2m1_half_away,
                                           CodecSweep::e8m0_roundup, CodecSweep::e8m0_even,
                                           CodecSweep::e8m0_floor, CodecSweep::exact_exp,
                                           CodecSweep::sigmoid_z_at_most_86, CodecSweep::ieee_reciprocal_in_range),
                         codec_test_name);
#else
TEST(DeviceCodecs, NeedsAGpuBuild) { GTEST_SKIP() << "built without a GPU backend"; }
#endif

}  // namespace
}  // namespace fb
