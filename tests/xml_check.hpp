#pragma once
// Well-formed XML, checked in the tests so that they need nothing installed: one root element,
// nested and closed tags, quoted attributes, known entities, nothing outside the root. For the
// SVG charts and HTML of `kgate report` and `kgate story`.
#include <cctype>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace kgate::testing {

// "" when well formed, else the first problem and where.
inline std::string xml_problem(const std::string& xml) {
  static const std::regex entity(R"(&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)");
  const auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '-' || c == '.'; };
  const auto bad_entity = [&](std::size_t at) {
    std::smatch m;
    const std::string rest = xml.substr(at, 12);
    return !std::regex_search(rest, m, entity, std::regex_constants::match_continuous);
  };
  std::vector<std::string> open;
  bool root_seen = false;
  std::size_t i = 0;
  while (i < xml.size()) {
    const std::string at = " at byte " + std::to_string(i);
    if (xml[i] == '&') {
      if (bad_entity(i)) return "bad entity" + at;
      ++i;
    } else if (xml[i] != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(xml[i]))) return "text outside the root element" + at;
      ++i;
    } else if (xml.compare(i, 4, "<!--") == 0 || xml.compare(i, 2, "<?") == 0) {
      const std::string close = xml.compare(i, 4, "<!--") == 0 ? "-->" : "?>";
      const std::size_t end = xml.find(close, i);
      if (end == std::string::npos) return "unclosed comment or declaration" + at;
      i = end + close.size();
    } else if (xml.compare(i, 2, "</") == 0) {
      std::size_t j = i + 2;
      while (j < xml.size() && name_char(xml[j])) ++j;
      const std::string name = xml.substr(i + 2, j - i - 2);
      if (j >= xml.size() || xml[j] != '>') return "bad end tag" + at;
      if (open.empty() || open.back() != name)
        return "</" + name + "> does not close " + (open.empty() ? "anything" : "<" + open.back() + ">") + at;
      open.pop_back();
      i = j + 1;
    } else {
      std::size_t j = i + 1;
      while (j < xml.size() && name_char(xml[j])) ++j;
      const std::string name = xml.substr(i + 1, j - i - 1);
      if (name.empty()) return "stray '<'" + at;
      if (open.empty() && root_seen) return "a second root element <" + name + ">" + at;
      root_seen = true;
      std::set<std::string> attributes;
      while (true) {
        while (j < xml.size() && std::isspace(static_cast<unsigned char>(xml[j]))) ++j;
        if (j >= xml.size()) return "unclosed <" + name + at;
        if (xml.compare(j, 2, "/>") == 0) {
          j += 2;
          break;
        }
        if (xml[j] == '>') {
          open.push_back(name);
          ++j;
          break;
        }
        const std::size_t attribute_start = j;
        while (j < xml.size() && name_char(xml[j])) ++j;
        const std::string attribute = xml.substr(attribute_start, j - attribute_start);
        if (attribute.empty() || j + 1 >= xml.size() || xml[j] != '=' || (xml[j + 1] != '"' && xml[j + 1] != '\''))
          return "bad attribute in <" + name + at;
        if (!attributes.insert(attribute).second) return "repeated attribute " + attribute + " in <" + name + at;
        const std::size_t close = xml.find(xml[j + 1], j + 2);
        if (close == std::string::npos) return "unclosed attribute value in <" + name + at;
        for (std::size_t k = j + 2; k < close; ++k) {
          if (xml[k] == '<') return "'<' in an attribute of <" + name + at;
          if (xml[k] == '&' && bad_entity(k)) return "bad entity in an attribute of <" + name + at;
        }
        j = close + 1;
      }
      i = j;
    }
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  return root_seen ? "" : "no root element";
}

}  // namespace kgate::testing
