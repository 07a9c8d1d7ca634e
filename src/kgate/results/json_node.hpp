#pragma once
// Reading a results document with a JSON path (private to the results module): every accessor
// knows where its value sits, so every error is one line naming the file and the path
// ("run.json: $.benchmarks[3].real_time: ..."), and every number meets value_rules.hpp. Used by
// the kgate blocks (kgate_blocks.hpp), gbench_document.cpp, gbench_rows.cpp (plain Google
// Benchmark rows) and nvbench_results.cpp.
#include <cctype>
#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kgate/results/results_io.hpp"
#include "value_rules.hpp"

namespace kgate::json_node {

using nlohmann::json;

// A value as error messages show it: its type and an excerpt.
inline std::string describe_value(const json& value) {
  if (value.is_null()) return "null";
  if (value.is_number()) return value.dump();
  return std::string(value.type_name()) + " " + json_excerpt(value);
}

inline bool is_identifier(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key[0]))) return false;
  for (char c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

class Node {
 public:
  Node(const json& value, std::string path, const std::string& source) : value_(value), path_(std::move(path)), source_(source) {}

  const json& value() const { return value_; }

  [[noreturn]] void fail(const std::string& problem) const { throw ResultsError(source_ + ": " + path_ + ": " + problem); }

  void require(bool holds, const char* expected) const {
    if (!holds) fail(std::string("expected ") + expected + ", got " + describe_value(value_));
  }

  bool has(const std::string& key) const { return value_.contains(key); }

  Node child_path(const std::string& key, const json& child) const {
    // Appended piece by piece: g++ 12 warns falsely (-Wrestrict) about "." + key once inlined.
    std::string path = path_;
    if (is_identifier(key) && key.size() <= kExcerptChars) path.append(".").append(key);
    else path.append("[").append(json_excerpt(json(key))).append("]");
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
  Node operator[](std::size_t index) const { return Node(value_[index], path_ + "[" + std::to_string(index) + "]", source_); }

  Node array() const {
    require(value_.is_array(), "an array");
    return *this;
  }

  Node object() const {
    require(value_.is_object(), "an object");
    return *this;
  }

  // Any finite number (JSON has no other, but a reader may be handed a document built in memory).
  double number() const {
    if (!value_.is_number() || !std::isfinite(value_.get<double>())) fail("expected a number, got " + describe_value(value_));
    return value_.get<double>();
  }

  double non_negative() const {
    if (!value_.is_number() || !value_rules::is_figure(value_.get<double>()))
      fail("must be a finite number >= 0, got " + describe_value(value_));
    return value_.get<double>();
  }

  // A time in seconds, written in units of which `units_per_second` make a second.
  double time(double units_per_second = 1, std::string_view unit = "s") const {
    const double seconds = value_.is_number() ? value_.get<double>() / units_per_second : 0.0;
    if (!value_.is_number() || !value_rules::is_time(seconds)) {
      // Appended piece by piece: g++ 12 warns falsely (-Wrestrict) about " " + unit once inlined.
      std::string problem = std::string("time must be ") + value_rules::kTimeRange + ", got " + describe_value(value_);
      if (value_.is_number() && unit != "s") problem.append(" ").append(unit);
      fail(problem);
    }
    return seconds;
  }

  // A whole number in [low, high] (1.0 counts as whole; 1e30 is beyond any range kgate takes).
  long long integer(long long low = -static_cast<long long>(value_rules::kMaxWhole),
                    long long high = static_cast<long long>(value_rules::kMaxWhole)) const {
    std::optional<long long> whole;
    if (value_.is_number_unsigned()) {
      if (value_.get<unsigned long long>() <= static_cast<unsigned long long>(LLONG_MAX)) whole = value_.get<long long>();
    } else if (value_.is_number_integer()) {
      whole = value_.get<long long>();
    } else if (value_.is_number_float() && value_rules::is_whole(value_.get<double>(), -value_rules::kMaxWhole, value_rules::kMaxWhole)) {
      whole = static_cast<long long>(value_.get<double>());
    }
    if (!whole || *whole < low || *whole > high)
      fail("expected a whole number from " + std::to_string(low) + " to " + std::to_string(high) + ", got " + describe_value(value_));
    return *whole;
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
  if (auto node = parent.find(key)) out = static_cast<int>(node->integer(INT_MIN, INT_MAX));
}

// Optional counts (sizes, registers, launches): absent leaves the default; present must be whole and >= 0.
inline void read_count(const Node& parent, const std::string& key, long long& out) {
  if (auto node = parent.find(key)) out = node->integer(0);
}
inline void read_count(const Node& parent, const std::string& key, int& out) {
  if (auto node = parent.find(key)) out = static_cast<int>(node->integer(0, INT_MAX));
}

// An object of strings (a context's extra entries, a baseline entry's provenance).
inline std::map<std::string, std::string> string_map(const Node& node) {
  node.object();
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : node.value().items()) out[key] = node.child_path(key, value).string();
  return out;
}

}  // namespace kgate::json_node
