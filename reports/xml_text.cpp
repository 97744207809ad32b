#include "reports/xml_text.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace fb {
namespace {

// The code point of the UTF-8 sequence at text[i] and its length; length 0 when ill-formed
// (truncated, overlong, a surrogate, past U+10FFFF).
std::pair<std::uint32_t, std::size_t> decode(const std::string& text, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = b(i);
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if (c < 0x80) return {c, 1};
  if ((c >> 5) == 0x6) n = 2, cp = c & 0x1F;
  else if ((c >> 4) == 0xE) n = 3, cp = c & 0x0F;
  else if ((c >> 3) == 0x1E) n = 4, cp = c & 0x07;
  else return {0, 0};
  if (i + n > text.size()) return {0, 0};
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return {0, 0};
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
  return {cp, n};
}

bool xml_char(std::uint32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
         (cp >= 0x10000 && cp <= 0x10FFFF);
}

}  // namespace

std::string xml_safe_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, n] = decode(text, i);
    if (n == 0 || !xml_char(cp)) {
      // One byte at a time, so the rest of a broken sequence is shown too.
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace fb
