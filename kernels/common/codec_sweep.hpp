// Device-side runs of the numeric core over a range of fp32 bit patterns, for the exhaustive
// device-versus-host tests (tests/kernels/device_codecs_test.cpp): whatever the device compiler
// does with the shared codecs and exp (including the hardware fp8 conversion), every result must
// equal the host's.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fb {

enum class CodecSweep : std::uint8_t {
  fp8_e4m3fn,       // 1 byte per input; inputs taken in pairs through fp8x2_encode
  fp8_e4m3fnuz,     // 1 byte
  bf16,             // 2 bytes
  e2m1_rne,         // 1 byte
  e2m1_half_away,   // 1 byte
  e8m0_roundup,     // 1 byte
  e8m0_even,        // 1 byte
  e8m0_floor,       // 1 byte
  exact_exp,        // 4 bytes
  sigmoid_z_at_most_86,  // 4 bytes: exact_sigmoid_z_at_most_86 (compared on z <= 86 and NaN)
  ieee_reciprocal_in_range,  // 4 bytes: ieee_reciprocal_in_range (compared with 1 / x on [1, 2^126))
};

std::size_t codec_sweep_output_bytes(CodecSweep which);

// out[i] = codec(bits_float(first + i)) for i < count (count even); throws DeviceError.
void codec_sweep_launch(CodecSweep which, std::uint32_t first, std::uint32_t count, void* out, void* stream);

}  // namespace fb
