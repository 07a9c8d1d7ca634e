#pragma once
// The report's inline markup, shared by its renderers: `code` spans and **bold** runs (not
// nested), links ([text](#anchor) within the document, [text](file.svg) to a file beside it; the
// text itself inline markup), everything else plain text. A backslash makes the character after
// it plain: literal() and code() write a name from an input so that no character of it is markup.
#include <string>
#include <string_view>
#include <vector>

#include "kgate/report/format.hpp"  // literal(): a name as plain text in this markup

namespace kgate::report {

struct Span {
  enum class Kind { text, code, bold, link } kind;
  std::string text;      // without escapes; a link's text is still inline markup
  std::string target{};  // a link's target: "#anchor" (letters, digits, '-', '_') or a file name ([A-Za-z0-9._-])
};

std::vector<Span> parse_inline(std::string_view text);

// "[text](target)": a link in inline markup to an anchor ("#family-gemv"), a file beside the
// document, or an anchor in one; `text` is inline markup itself.
std::string link(std::string_view text, std::string_view target);
// "[text](page#anchor)"; an empty page is this document.
std::string link(std::string_view text, std::string_view page, std::string_view anchor);

// The text without its markup, for the terminal.
std::string plain_text(std::string_view text);

}  // namespace kgate::report
