#pragma once
// Small text helpers shared by modules that cannot depend on each other.
#include <algorithm>
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

}  // namespace kgate
