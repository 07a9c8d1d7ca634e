#pragma once
// Small text helpers shared by modules that cannot depend on each other.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace kgate {

// The non-empty pieces of `text` between `separator`s: "a,,b" -> {"a", "b"}.
inline std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    if (end > start) parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// The pieces with `separator` between them: join({"a", "b"}, ", ") is "a, b".
inline std::string join(const std::vector<std::string>& pieces, std::string_view separator) {
  std::string text;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) text += separator;
    text += pieces[i];
  }
  return text;
}

// printf into a string: printf_string("%.1f GiB", gib). The compiler checks the arguments against
// the format as it checks printf's.
__attribute__((format(printf, 1, 2))) inline std::string printf_string(const char* format, ...) {
  std::va_list arguments, measuring;
  va_start(arguments, format);
  va_copy(measuring, arguments);
  const int length = std::vsnprintf(nullptr, 0, format, measuring);
  va_end(measuring);
  std::string text(length > 0 ? static_cast<std::size_t>(length) : 0, '\0');
  if (length > 0) std::vsnprintf(text.data(), text.size() + 1, format, arguments);
  va_end(arguments);
  return text;
}

// How many columns `text` takes in a terminal: its characters, not its bytes (µ, ×, → take one).
inline std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// `text` padded with spaces to `width` columns: on the left (a figure, right-aligned) or the right.
inline std::string right_aligned(std::string_view text, std::size_t width) {
  return std::string(width > display_width(text) ? width - display_width(text) : 0, ' ') + std::string(text);
}
inline std::string left_aligned(std::string_view text, std::size_t width) {
  return std::string(text) + std::string(width > display_width(text) ? width - display_width(text) : 0, ' ');
}

}  // namespace kgate
