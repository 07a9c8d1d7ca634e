#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace kgate {

enum class DType { bf16, fp16, fp32, i32 };

std::string_view to_string(DType dtype);
std::optional<DType> parse_dtype(std::string_view text);
std::size_t size_of(DType dtype);
bool is_floating(DType dtype);

}  // namespace kgate
