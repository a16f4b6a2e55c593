// Escaping for XML (JUnit) and HTML text and attributes.
#pragma once

#include <string>
#include <string_view>

namespace cc {

// Escapes & < > " ' and makes the text valid XML 1.0: control characters
// other than tab, newline and carriage return, and bytes that are not
// valid UTF-8, become U+FFFD. Safe in element text and in quoted
// attributes of both XML and HTML.
std::string EscapeXml(std::string_view text);

}  // namespace cc
