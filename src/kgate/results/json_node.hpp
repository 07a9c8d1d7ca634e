#pragma once
// Reading a results document with a JSON path (private to the results module): every accessor
// knows where its value sits, so every error is one line naming the file and the path
// ("run.json: $.benchmarks[3].real_time: ..."). Used by results_io.cpp (kgate blocks) and
// gbench_rows.cpp (plain Google Benchmark rows).
#include <cctype>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kgate/results/results_io.hpp"

namespace kgate::json_node {

using nlohmann::json;

inline std::string describe_value(const json& value) {
  if (value.is_number()) {
    std::ostringstream text;
    text << value.get<double>();
    return text.str();
  }
  std::string dumped = value.dump();
  if (dumped.size() > 40) dumped = dumped.substr(0, 37) + "...";
  return value.is_null() ? "null" : std::string(value.type_name()) + " " + dumped;
}

inline bool is_identifier(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key[0]))) return false;
  for (char c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

class Node {
 public:
  Node(const json& value, std::string path, const std::string& source)
      : value_(value), path_(std::move(path)), source_(source) {}

  const json& value() const { return value_; }

  [[noreturn]] void fail(const std::string& problem) const {
    throw ResultsError(source_ + ": " + path_ + ": " + problem);
  }

  void require(bool holds, const char* expected) const {
    if (!holds) fail(std::string("expected ") + expected + ", got " + describe_value(value_));
  }

  bool has(const std::string& key) const { return value_.contains(key); }

  Node child_path(const std::string& key, const json& child) const {
    // Appended piece by piece: g++ 12 warns falsely (-Wrestrict) about "." + key once inlined.
    std::string path = path_;
    if (is_identifier(key)) path.append(".").append(key);
    else path.append("[").append(json(key).dump()).append("]");
    return Node(child, std::move(path), source_);
  }

  Node at(const std::string& key, const std::string& why_required = "") const {
    require(value_.is_object(), "an object");
    const auto it = value_.find(key);
    if (it == value_.end()) child_path(key, value_).fail("required field is missing" + why_required);
    return child_path(key, *it);
  }

  std::optional<Node> find(const std::string& key) const {
    require(value_.is_object(), "an object");
    const auto it = value_.find(key);
    if (it == value_.end()) return std::nullopt;
    return child_path(key, *it);
  }

  std::size_t size() const { return value_.size(); }
  Node operator[](std::size_t index) const {
    return Node(value_[index], path_ + "[" + std::to_string(index) + "]", source_);
  }

  Node array() const {
    require(value_.is_array(), "an array");
    return *this;
  }

  Node object() const {
    require(value_.is_object(), "an object");
    return *this;
  }

  double number() const {
    require(value_.is_number(), "a number");
    return value_.get<double>();
  }

  double non_negative() const {
    const double v = number();
    if (!(v >= 0) || !std::isfinite(v)) fail("must be a finite number >= 0, got " + describe_value(value_));
    return v;
  }

  double time() const {
    if (!value_.is_number() || !(value_.get<double>() > 0) || !std::isfinite(value_.get<double>()))
      fail("time must be positive and finite, got " + describe_value(value_));
    return value_.get<double>();
  }

  long long integer() const {
    if (!value_.is_number_integer() && !(value_.is_number_float() && std::trunc(value_.get<double>()) == value_.get<double>()))
      fail("expected an integer, got " + describe_value(value_));
    return value_.is_number_float() ? static_cast<long long>(value_.get<double>()) : value_.get<long long>();
  }

  std::string string() const {
    require(value_.is_string(), "a string");
    return value_.get<std::string>();
  }

  bool boolean() const {
    require(value_.is_boolean(), "true or false");
    return value_.get<bool>();
  }

 private:
  const json& value_;
  std::string path_;
  const std::string& source_;
};

// Optional fields: absent leaves the default; present must have the right type.
inline void read_opt(const Node& parent, const std::string& key, std::string& out) {
  if (auto node = parent.find(key)) out = node->string();
}
inline void read_opt(const Node& parent, const std::string& key, double& out) {
  if (auto node = parent.find(key)) out = node->non_negative();
}
inline void read_opt(const Node& parent, const std::string& key, bool& out) {
  if (auto node = parent.find(key)) out = node->boolean();
}
inline void read_opt(const Node& parent, const std::string& key, long long& out) {
  if (auto node = parent.find(key)) out = node->integer();
}
inline void read_opt(const Node& parent, const std::string& key, int& out) {
  if (auto node = parent.find(key)) out = static_cast<int>(node->integer());
}

}  // namespace kgate::json_node
