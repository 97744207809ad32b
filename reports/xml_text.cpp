#include "reports/xml_text.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "core/utf8.hpp"

namespace fb {
namespace {

bool xml_char(std::uint32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
         (cp >= 0x10000 && cp <= 0x10FFFF);
}

}  // namespace

std::string xml_safe_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, n] = utf8_decode(text, i);
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
