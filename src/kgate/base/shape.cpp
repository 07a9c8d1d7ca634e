#include "kgate/base/shape.hpp"

#include <charconv>
#include <stdexcept>

namespace kgate {

Shape::Shape(std::vector<Dim> dims, DType dtype, std::string origin) : dims_(std::move(dims)), dtype_(dtype), origin_(std::move(origin)) {
  for (const Dim& d : dims_) {
    if (d.name.empty() || d.name.find_first_of(":/= ") != std::string::npos)
      throw std::invalid_argument("shape dimension name '" + d.name + "' is empty or contains ':', '/', '=' or ' '");
    if (d.value <= 0) throw std::invalid_argument("shape dimension '" + d.name + "' must be positive");
  }
}

std::int64_t Shape::at(std::string_view name) const {
  for (const Dim& d : dims_)
    if (d.name == name) return d.value;
  throw std::out_of_range("shape " + id() + " has no dimension '" + std::string(name) + "'");
}

bool Shape::has(std::string_view name) const {
  for (const Dim& d : dims_)
    if (d.name == name) return true;
  return false;
}

std::int64_t Shape::elements() const {
  std::int64_t product = 1;
  for (const Dim& d : dims_) product *= d.value;
  return product;
}

static std::string join_id(const std::vector<Dim>& dims, DType dtype, char separator) {
  std::string out;
  for (const Dim& d : dims) {
    out += d.name;
    out += separator;
    out += std::to_string(d.value);
    out += '/';
  }
  out += to_string(dtype);
  return out;
}

std::string Shape::id() const { return join_id(dims_, dtype_, ':'); }
std::string Shape::test_id() const { return join_id(dims_, dtype_, '='); }

Shape Shape::parse(std::string_view id) {
  std::vector<Dim> dims;
  std::string_view rest = id;
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    if (slash == std::string_view::npos) {
      const auto dtype = parse_dtype(part);
      if (!dtype) throw std::invalid_argument("shape id '" + std::string(id) + "' does not end in a dtype");
      return Shape(std::move(dims), *dtype);
    }
    const std::size_t colon = part.find_first_of(":=");
    std::int64_t value = 0;
    const auto* begin = part.data() + colon + 1;
    const auto* end = part.data() + part.size();
    if (colon == std::string_view::npos || std::from_chars(begin, end, value).ptr != end)
      throw std::invalid_argument("shape id '" + std::string(id) + "' has a malformed part '" + std::string(part) + "'");
    dims.push_back({std::string(part.substr(0, colon)), value});
    rest = rest.substr(slash + 1);
  }
}

}  // namespace kgate
