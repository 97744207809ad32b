// Distance in units in the last place, measured in an output's own format.
//
// ulp_distance(format, code, ref) counts the representable values between the code a kernel wrote
// and the fp64 reference rounded once (to nearest even) into the same format. 0 means correctly
// rounded; 1 means one neighbour off. Both zeros count as the same value. NaN has no distance:
// callers count it separately and fail on it.
#pragma once

#include <cstdint>

namespace fb {

enum class UlpFormat : std::uint8_t { f32, bf16, fp8_e4m3fn, fp8_e4m3fnuz };

// The fp64 value rounded once to the nearest value of `format` (ties to even). fp8 formats
// saturate at +-MAX, as their encoders do; f32 and bf16 overflow to infinity.
double round_to_format(double value, UlpFormat format);

// Signed position of a code on the number line of its format (sign-magnitude -> ordered integer).
std::int64_t format_ordinal(UlpFormat format, std::uint32_t code);

// Code of an fp64 value after one rounding into the format.
std::uint32_t format_code(UlpFormat format, double value);

// |ordinal(code) - ordinal(RN(ref))|. The reference must be finite.
std::int64_t ulp_distance(UlpFormat format, std::uint32_t code, double ref);

}  // namespace fb
