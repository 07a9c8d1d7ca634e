#include "report_inline.hpp"

#include <algorithm>
#include <optional>

namespace kgate::report {
namespace {

constexpr std::string_view kMarkup = "\\`*[]";

// From `from`, the text up to the first unescaped `marker`, escapes removed, into `out`; the
// marker's position, or npos when it never comes.
std::size_t read_until(std::string_view text, std::size_t from, std::string_view marker, std::string& out) {
  for (std::size_t i = from; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      out += text[++i];
    } else if (text.substr(i).starts_with(marker)) {
      return i;
    } else {
      out += text[i];
    }
  }
  return std::string_view::npos;
}

bool valid_anchor(std::string_view anchor) {
  return !anchor.empty() && std::all_of(anchor.begin(), anchor.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || static_cast<unsigned char>(c) >= 0x80;
  });
}

bool valid_file_name(std::string_view name) {
  return !name.empty() && name.front() != '.' && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

// A link's target: an anchor in the document, a file name beside it, or an anchor in such a file
// ("report.html#b-gemv-..."); never a scheme, a path out of the folder or markup.
bool valid_target(std::string_view target) {
  const std::size_t hash = target.find('#');
  if (hash == std::string_view::npos) return target.size() >= 2 && valid_file_name(target);
  return (hash == 0 || valid_file_name(target.substr(0, hash))) && valid_anchor(target.substr(hash + 1));
}

// The link that starts at text[start] == '[': its span and the position after it.
std::optional<std::pair<Span, std::size_t>> read_link(std::string_view text, std::size_t start) {
  for (std::size_t i = start + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '`') {
      std::string skipped;
      if (const std::size_t close = read_until(text, i + 1, "`", skipped); close != std::string_view::npos) i = close;
    } else if (text[i] == '[') {
      return std::nullopt;  // links do not nest
    } else if (text[i] == ']') {
      const std::size_t close = text.find(')', i);
      if (text.substr(i + 1, 1) != "(" || close == std::string_view::npos) return std::nullopt;
      const std::string_view target = text.substr(i + 2, close - i - 2);
      if (!valid_target(target)) return std::nullopt;
      return std::pair{Span{Span::Kind::link, std::string(text.substr(start + 1, i - start - 1)), std::string(target)}, close + 1};
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<Span> parse_inline(std::string_view text) {
  std::vector<Span> spans;
  std::string plain;
  const auto flush_plain = [&] {
    if (!plain.empty()) spans.push_back({Span::Kind::text, std::move(plain)});
    plain.clear();
  };
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (text[i] == '[') {
      if (auto link = read_link(text, i)) {
        flush_plain();
        spans.push_back(std::move(link->first));
        i = link->second;
        continue;
      }
    }
    if (text[i] == '`' || text.substr(i).starts_with("**")) {
      const std::string_view marker = text[i] == '`' ? "`" : "**";
      std::string content;
      if (const std::size_t close = read_until(text, i + marker.size(), marker, content); close != std::string_view::npos) {
        flush_plain();
        if (!content.empty()) spans.push_back({marker == "`" ? Span::Kind::code : Span::Kind::bold, std::move(content)});
        i = close + marker.size();
        continue;
      }
    }
    plain += text[i++];  // an unmatched marker is plain text
  }
  flush_plain();
  return spans;
}

std::string literal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (kMarkup.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string link(std::string_view text, std::string_view target) {
  std::string out = "[";  // appended piece by piece: g++ 12 warns (-Wrestrict, wrongly) on "[" + a temporary
  out.append(text).append("](").append(target).append(")");
  return out;
}

std::string link(std::string_view text, std::string_view page, std::string_view anchor) {
  std::string target(page);
  target.append("#").append(anchor);
  return link(text, target);
}

std::string plain_text(std::string_view text) {
  std::string out;
  for (const Span& span : parse_inline(text)) out += span.kind == Span::Kind::link ? plain_text(span.text) : span.text;
  return out;
}

}  // namespace kgate::report
