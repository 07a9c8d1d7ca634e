#include "kgate/base/dtype.hpp"

namespace kgate {

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp32: return "fp32";
    case DType::i32: return "i32";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view text) {
  for (DType d : {DType::bf16, DType::fp16, DType::fp32, DType::i32})
    if (to_string(d) == text) return d;
  return std::nullopt;
}

std::size_t size_of(DType dtype) {
  switch (dtype) {
    case DType::bf16:
    case DType::fp16: return 2;
    case DType::fp32:
    case DType::i32: return 4;
  }
  return 0;
}

bool is_floating(DType dtype) { return dtype != DType::i32; }

}  // namespace kgate
