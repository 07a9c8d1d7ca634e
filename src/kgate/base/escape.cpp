#include "kgate/base/escape.hpp"

#include <algorithm>

#include "kgate/base/text.hpp"

namespace kgate {
namespace {

// The length of the well-formed UTF-8 sequence at the start of `text` (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF) and its code point; 0 when it is not one.
std::size_t utf8_sequence(std::string_view text, char32_t& code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  }
  const std::size_t length = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
  if (length == 0 || text.size() < length) return 0;
  // The second byte's range excludes overlong forms (E0, F0), surrogates (ED) and code points past U+10FFFF (F4).
  const unsigned char low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
  const unsigned char high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
  if (byte(1) < low || byte(1) > high) return 0;
  code_point = lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code_point = code_point << 6 | (byte(i) & 0x3F);
  }
  return length;
}

// Characters that change what a reader sees rather than show: C0 and C1 controls, DEL, the
// bidirectional embeddings, overrides and isolates, and the two noncharacters XML forbids.
bool is_hidden(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0xFFFE || c == 0xFFFF;
}

// `text` as valid UTF-8 with every hidden character shown as an escape, except the ASCII controls
// in `kept`: \t, \n and \r by name, other ASCII controls as \xNN, the others as \uNNNN, and each
// byte outside well-formed UTF-8 as \xNN.
std::string visible(std::string_view text, std::string_view kept) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(text.substr(i), c);
    if (length == 0) {
      out += printf_string("\\x%02x", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (!is_hidden(c) || (c < 0x80 && kept.find(static_cast<char>(c)) != std::string_view::npos)) out += text.substr(i, length);
    else if (c == '\t' || c == '\n' || c == '\r') out += c == '\t' ? "\\t" : c == '\n' ? "\\n" : "\\r";
    else out += c < 0x80 ? printf_string("\\x%02x", static_cast<unsigned>(c)) : printf_string("\\u%04x", static_cast<unsigned>(c));
    i += length;
  }
  return out;
}

// The longest run of backticks in `text`.
std::size_t longest_backtick_run(std::string_view text) {
  std::size_t longest = 0, run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// Where a text starts a line, a marker followed by a space (or nothing) starts a block: "# " a
// heading, "- " or "+ " a list item, "1. " or "1) " a numbered one. Its position, else npos.
std::size_t block_marker_at(std::string_view text) {
  const std::size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos) return start;
  std::size_t marker = start, after = start + 1;
  if (text[start] == '#') {
    after = text.find_first_not_of('#', start);
  } else if (text[start] >= '0' && text[start] <= '9') {
    marker = text.find_first_not_of("0123456789", start);
    if (marker == std::string_view::npos || (text[marker] != '.' && text[marker] != ')')) return std::string_view::npos;
    after = marker + 1;
  } else if (text[start] != '-' && text[start] != '+') {
    return std::string_view::npos;
  }
  const bool ends_marker = after >= text.size() || text[after] == ' ' || text[after] == '\t';
  return ends_marker ? marker : std::string_view::npos;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  for (const char c : visible(text, "\t\n\r")) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string markdown_text(std::string_view text, bool starts_line) {
  const std::string shown = visible(text, "\n\r");
  const std::size_t marker = starts_line ? block_marker_at(shown) : std::string::npos;
  std::string out;
  out.reserve(shown.size());
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const char c = shown[i];
    if (c == '\n' || c == '\r') out += ' ';
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (i == marker || std::string_view("\\`*_[]~|").find(c) != std::string_view::npos) (out += '\\') += c;
    else out += c;
  }
  return out;
}

std::string markdown_code_span(std::string_view text, bool in_table_cell) {
  std::string content;
  for (const char c : visible(text, "\n\r")) {
    if (c == '\n' || c == '\r') content += ' ';
    else if (c == '|' && in_table_cell) content += "\\|";
    else content += c;
  }
  // CommonMark strips one space from each end of a code span that has one at both: padding keeps
  // a leading or trailing backtick off the fence, and the text's own spaces where they are.
  const bool pad = content.empty() || content.front() == '`' || content.back() == '`' || (content.front() == ' ' && content.back() == ' ');
  const std::string fence(longest_backtick_run(content) + 1, '`');
  return pad ? fence + " " + content + " " + fence : fence + content + fence;
}

std::string markdown_code_block(std::string_view text, std::string_view info) {
  std::string content = visible(text, "\t\n");
  if (!content.empty() && !content.ends_with('\n')) content += '\n';
  const std::string fence(std::max<std::size_t>(3, longest_backtick_run(content) + 1), '`');
  return fence + std::string(info) + "\n" + content + fence + "\n";
}

std::string slug(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out += c;
    else if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (out.ends_with('-')) out.pop_back();
  return out.empty() ? "x" : out;
}

std::string benchmark_anchor(std::string_view name) { return "b-" + slug(name); }

std::string terminal_text(std::string_view text, std::string_view kept) { return visible(text, kept); }

}  // namespace kgate
