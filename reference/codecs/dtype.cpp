#include "reference/codecs/dtype.hpp"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e2m1.hpp"
#include "reference/codecs/e8m0.hpp"

namespace fb {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;
};

constexpr DTypeInfo kTypes[] = {
    {DType::f32, "f32", 4},          {DType::bf16, "bf16", 2}, {DType::fp8_e4m3fn, "fp8_e4m3fn", 1},
    {DType::fp8_e4m3fnuz, "fp8_e4m3fnuz", 1}, {DType::e8m0, "e8m0", 1}, {DType::e2m1x2, "e2m1x2", 1},
    {DType::i32, "i32", 4},          {DType::u8, "u8", 1},
};

std::uint32_t load_u32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
std::uint16_t load_u16(const std::uint8_t* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

}  // namespace

std::size_t dtype_size(DType t) { return kTypes[static_cast<int>(t)].size; }
std::string_view dtype_name(DType t) { return kTypes[static_cast<int>(t)].name; }

bool dtype_from_name(std::string_view name, DType& out) {
  for (const auto& info : kTypes) {
    if (info.name == name) {
      out = info.type;
      return true;
    }
  }
  return false;
}

DType fp8_dtype(Fp8Flavour f) { return f == Fp8Flavour::e4m3fn ? DType::fp8_e4m3fn : DType::fp8_e4m3fnuz; }

double element_value(DType t, const std::uint8_t* p) {
  switch (t) {
    case DType::f32: return bits_float(load_u32(p));
    case DType::bf16: return bf16_to_float(load_u16(p));
    case DType::fp8_e4m3fn: return fp8_e4m3fn_to_float(*p);
    case DType::fp8_e4m3fnuz: return fp8_e4m3fnuz_to_float(*p);
    case DType::e8m0: return e8m0_to_float(*p);
    case DType::e2m1x2: return e2m1_to_float(*p & 0xFu);
    case DType::i32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::u8: return *p;
  }
  return 0.0;
}

bool element_is_nan(DType t, const std::uint8_t* p) {
  switch (t) {
    case DType::f32:
    case DType::bf16:
    case DType::fp8_e4m3fn:
    case DType::fp8_e4m3fnuz:
    case DType::e8m0: return std::isnan(element_value(t, p));
    default: return false;
  }
}

bool element_is_inf(DType t, const std::uint8_t* p) {
  return (t == DType::f32 || t == DType::bf16) && std::isinf(element_value(t, p));
}

std::string element_text(DType t, const std::uint8_t* p) {
  switch (t) {
    case DType::f32: return fmt::format("0x{:08x} ({:.9g})", load_u32(p), element_value(t, p));
    case DType::bf16: return fmt::format("0x{:04x} ({:.5g})", load_u16(p), element_value(t, p));
    case DType::e2m1x2:
      return fmt::format("0x{:02x} ({:g}, {:g})", *p, e2m1_to_float(*p & 0xFu), e2m1_to_float(*p >> 4));
    case DType::i32: return fmt::format("{}", static_cast<std::int64_t>(element_value(t, p)));
    default: return fmt::format("0x{:02x} ({:g})", *p, element_value(t, p));
  }
}

}  // namespace fb
