// The element types a tensor can hold, with host-side decoding for checks and messages.
//
// Kernels never see this enum: they take typed pointers. It exists so that the harness, the metrics
// and the reports can describe, decode and compare any tensor by its dtype alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "reference/codecs/fp8.hpp"

namespace fb {

enum class DType : std::uint8_t {
  f32,           // IEEE binary32
  bf16,          // bfloat16
  fp8_e4m3fn,    // OCP e4m3 (max 448)
  fp8_e4m3fnuz,  // AMD e4m3fnuz (max 240)
  e8m0,          // power-of-two scale byte
  e2m1x2,        // two fp4 e2m1 codes per byte, element 2j in the low nibble
  i32,           // int32
  u8,            // raw byte
};

std::size_t dtype_size(DType t);
std::string_view dtype_name(DType t);
bool dtype_from_name(std::string_view name, DType& out);

// True where the dtype has a NaN encoding and the element holds it. NaN never matches anything.
bool element_is_nan(DType t, const std::uint8_t* p);
bool element_is_inf(DType t, const std::uint8_t* p);

// The element as a double (e2m1x2: the low nibble; use element_text for both).
double element_value(DType t, const std::uint8_t* p);

// "0x3f80 (1)" style text for messages: raw bits in hex and the decoded value.
std::string element_text(DType t, const std::uint8_t* p);

DType fp8_dtype(Fp8Flavour f);

}  // namespace fb
