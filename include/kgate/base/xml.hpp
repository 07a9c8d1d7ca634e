#pragma once
// Escaping for XML and HTML text and attribute values (JUnit files, SVG charts, HTML reports).
#include <string>
#include <string_view>

namespace kgate {

// Escapes the five markup characters and drops the control characters XML 1.0 forbids (all
// below 0x20 except tab, newline and carriage return): a kernel name or an error message must
// never make a report or a JUnit file unreadable.
std::string xml_escape(std::string_view text);

}  // namespace kgate
