#pragma once
// The report's inline markup, shared by its renderers: `code` spans and **bold** runs (not
// nested), links within the document ([text](#anchor), the text itself inline markup), everything
// else plain text.
#include <string>
#include <string_view>
#include <vector>

namespace kgate::report {

struct Span {
  enum class Kind { text, code, bold, link } kind;
  std::string text;
  std::string target{};  // a link's anchor, without the '#'
};

std::vector<Span> parse_inline(std::string_view text);

// The text without its markup, for the terminal.
std::string plain_text(std::string_view text);

}  // namespace kgate::report
