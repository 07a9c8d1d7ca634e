#include "report_inline.hpp"

namespace kgate::report {

std::vector<Span> parse_inline(std::string_view text) {
  std::vector<Span> spans;
  const auto add = [&](Span::Kind kind, std::string_view part) {
    if (!part.empty()) spans.push_back({kind, std::string(part)});
  };
  std::size_t plain_start = 0, i = 0;
  while (i < text.size()) {
    if (text[i] == '[') {
      const std::size_t middle = text.find("](#", i), close = middle == std::string_view::npos ? middle : text.find(')', middle);
      if (close != std::string_view::npos && text.substr(i + 1, middle - i - 1).find('[') == std::string_view::npos) {
        add(Span::Kind::text, text.substr(plain_start, i - plain_start));
        spans.push_back({Span::Kind::link, std::string(text.substr(i + 1, middle - i - 1)),
                         std::string(text.substr(middle + 3, close - middle - 3))});
        i = plain_start = close + 1;
        continue;
      }
    }
    const bool code = text[i] == '`';
    const bool bold = text.substr(i).starts_with("**");
    if (!code && !bold) {
      ++i;
      continue;
    }
    const std::string_view marker = code ? "`" : "**";
    const std::size_t close = text.find(marker, i + marker.size());
    if (close == std::string_view::npos) break;  // an unmatched marker is plain text
    add(Span::Kind::text, text.substr(plain_start, i - plain_start));
    add(code ? Span::Kind::code : Span::Kind::bold, text.substr(i + marker.size(), close - i - marker.size()));
    i = plain_start = close + marker.size();
  }
  add(Span::Kind::text, text.substr(plain_start));
  return spans;
}

std::string plain_text(std::string_view text) {
  std::string out;
  for (const Span& span : parse_inline(text)) out += span.kind == Span::Kind::link ? plain_text(span.text) : span.text;
  return out;
}

}  // namespace kgate::report
