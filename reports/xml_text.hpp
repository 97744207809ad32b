// Text that XML 1.0 can hold. Names and messages in a JUnit report come from scenarios and the
// command line and may hold control characters or bytes that are not UTF-8, which no XML escaping
// can carry (&#1; is not well-formed either): such bytes are written as the visible text \xNN.
#pragma once

#include <string>

namespace fb {

// `text` with every byte that is not part of an XML 1.0 character in valid UTF-8 (tab, newline and
// carriage return are kept) replaced by "\xNN". Valid text comes back unchanged.
std::string xml_safe_text(const std::string& text);

}  // namespace fb
