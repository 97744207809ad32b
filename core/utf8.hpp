// Strict UTF-8 (RFC 3629): what JSON writers accept. Command-line arguments and file names are bytes
// on Linux; these find the ones a report could not hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace fb {

// The code point of the sequence starting at text[i] and its length in bytes; length 0 when it is
// ill-formed there (a stray continuation byte, truncated, overlong, a surrogate, past U+10FFFF).
std::pair<std::uint32_t, std::size_t> utf8_decode(const std::string& text, std::size_t i);

// Offset of the first byte that is not part of well-formed UTF-8, or std::string::npos.
std::size_t first_invalid_utf8(const std::string& text);

}  // namespace fb
