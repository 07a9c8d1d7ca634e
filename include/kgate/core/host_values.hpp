#pragma once
// Input values made on the host: a tensor's custom initializer (positions, page tables, a model's
// precomputed tables), and any input a check needs on the host. Everything else is filled on the
// device (problem.cu).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kgate/core/tensor.hpp"

namespace kgate {

// The tensor's values for `seed` (its custom_init, else its distribution), each rounded to the
// value the device stores in the tensor's dtype.
std::vector<double> generate_on_host(const TensorSpec& spec, std::uint64_t seed);

// The device bytes of a tensor whose values depend on its shared_init_key alone (tensor.hpp):
// generated on the first call for a key, count and dtype, and shared by every later call, input
// copy and instance. The cache keeps the newest entries within `budget_bytes` (always the newest
// one). Throws std::logic_error for a spec without a key.
inline constexpr std::size_t kSharedValuesBudgetBytes = std::size_t{1} << 30;
std::shared_ptr<const std::vector<std::byte>> shared_encoded_values(const TensorSpec& spec,
                                                                    std::size_t budget_bytes = kSharedValuesBudgetBytes);

}  // namespace kgate
