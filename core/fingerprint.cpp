#include "core/fingerprint.hpp"

#include <fmt/format.h>

namespace fb {

std::uint64_t fnv1a64(std::span<const std::uint8_t> bytes) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (std::uint8_t b : bytes) {
    h ^= b;
    h *= 0x100000001B3ull;
  }
  return h;
}

std::string fingerprint_text(std::span<const std::uint8_t> bytes) {
  return fmt::format("fnv1a64:{:016x}", fnv1a64(bytes));
}

}  // namespace fb
