#pragma once
// A problem shape: named integer dimensions in a fixed order plus the data type. Its id is the
// stable suffix of every benchmark and test name, e.g. "m:4096/n:4096/bf16".
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kgate/base/dtype.hpp"

namespace kgate {

struct Dim {
  std::string name;
  std::int64_t value;
};

class Shape {
 public:
  // `origin` says where the preset comes from ("llama3-8b hidden", "odd tail"); it is
  // documentation only and never part of the id.
  Shape(std::vector<Dim> dims, DType dtype, std::string origin = {});

  std::int64_t at(std::string_view name) const;  // throws std::out_of_range naming the dimension
  bool has(std::string_view name) const;
  std::int64_t elements() const;  // product of all dimensions
  const std::vector<Dim>& dims() const { return dims_; }
  DType dtype() const { return dtype_; }
  const std::string& origin() const { return origin_; }

  // "m:4096/n:4096/bf16" (Google Benchmark's argument convention).
  std::string id() const;
  // The same with '=' for ':' — GoogleTest filters treat ':' as a separator.
  std::string test_id() const;
  static Shape parse(std::string_view id);  // inverse of id(); throws std::invalid_argument

  friend bool operator==(const Shape& a, const Shape& b) { return a.id() == b.id(); }

 private:
  std::vector<Dim> dims_;
  DType dtype_;
  std::string origin_;
};

}  // namespace kgate
