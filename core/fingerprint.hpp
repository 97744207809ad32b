// Fingerprint of an output's bytes, so two reports show which outputs changed bit for bit.
// FNV-1a 64 over the raw bytes: simple, fixed by its definition, fast enough for 400 MB tensors.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace fb {

std::uint64_t fnv1a64(std::span<const std::uint8_t> bytes);
std::string fingerprint_text(std::span<const std::uint8_t> bytes);  // "fnv1a64:0123456789abcdef"

}  // namespace fb
