// SPDX-License-Identifier: BSD-3-Clause
// XML 1.0 escaping, shared by the Cube report and the SVG overview.
#include "io/xml.hpp"

namespace cpreplay::io {

/// XML 1.0 escaping for text and attribute values. Control characters other than tab,
/// newline and carriage return cannot be represented in XML 1.0 at all; they become '?'.
std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      // Character references keep whitespace intact through attribute-value normalization.
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        out += (static_cast<unsigned char>(ch) < 0x20) ? '?' : ch;
        break;
    }
  }
  return out;
}

}  // namespace cpreplay::io
