// JUnit text: control characters and bytes that are not UTF-8 become visible \xNN text, so the
// report stays well-formed XML whatever a scenario or argument holds; valid text is unchanged.
#include <gtest/gtest.h>
#include <pugixml.hpp>

#include <sstream>

#include "reports/xml_text.hpp"

namespace fb {
namespace {

TEST(XmlText, KeepsValidTextAndShowsBadBytes) {
  EXPECT_EQ(xml_safe_text("M=24 K=6144\ttab\nline é 漢 😀"), "M=24 K=6144\ttab\nline é 漢 😀");
  EXPECT_EQ(xml_safe_text(std::string("a\x01" "b\x1b[31m", 8)), "a\\x01b\\x1b[31m");
  EXPECT_EQ(xml_safe_text(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(xml_safe_text("\xff\xfe"), "\\xff\\xfe");                 // not UTF-8
  EXPECT_EQ(xml_safe_text("\xc3"), "\\xc3");                          // truncated
  EXPECT_EQ(xml_safe_text("\xc0\xaf"), "\\xc0\\xaf");                 // overlong '/'
  EXPECT_EQ(xml_safe_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");        // a surrogate
  EXPECT_EQ(xml_safe_text("\xef\xbf\xbe"), "\\xef\\xbf\\xbe");        // U+FFFE, not an XML character
}

TEST(XmlText, EveryByteGivesWellFormedXml) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  pugi::xml_document doc;
  auto node = doc.append_child("testcase");
  node.append_attribute("name") = xml_safe_text(all).c_str();
  node.text() = xml_safe_text(all + "]]>").c_str();
  std::ostringstream out;
  doc.save(out);
  pugi::xml_document back;
  const pugi::xml_parse_result parsed = back.load_string(out.str().c_str());
  ASSERT_TRUE(parsed) << parsed.description();
  EXPECT_EQ(std::string(back.child("testcase").attribute("name").value()), xml_safe_text(all));
}

}  // namespace
}  // namespace fb
