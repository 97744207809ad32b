#include "core/utf8.hpp"

namespace fb {

std::pair<std::uint32_t, std::size_t> utf8_decode(const std::string& text, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return {c, 1};
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if ((c >> 5) == 0x6) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c >> 4) == 0xE) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c >> 3) == 0x1E) {
    n = 4;
    cp = c & 0x07;
  } else {
    return {0, 0};
  }
  if (i + n > text.size()) return {0, 0};
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return {0, 0};
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
  return {cp, n};
}

std::size_t first_invalid_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_decode(text, i).second;
    if (n == 0) return i;
    i += n;
  }
  return std::string::npos;
}

}  // namespace fb
