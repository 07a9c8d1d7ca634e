#include "kgate/core/host_values.hpp"

#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace kgate {
namespace {

// The value the device stores for `value` in `dtype`, as a double.
double round_to(DType dtype, double value) {
  switch (dtype) {
    case DType::bf16: return bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(value)));
    case DType::fp16: return fp16_bits_to_float(float_to_fp16_bits(static_cast<float>(value)));
    case DType::fp32: return static_cast<float>(value);
    case DType::i32: return static_cast<double>(static_cast<std::int32_t>(value));
  }
  return value;
}

struct SharedValues {
  std::string key;
  std::shared_ptr<const std::vector<std::byte>> bytes;
};

}  // namespace

std::vector<double> generate_on_host(const TensorSpec& spec, std::uint64_t seed) {
  std::vector<double> values(spec.count);
  if (spec.custom_init) {
    spec.custom_init(seed, values);
  } else {
    for (std::size_t i = 0; i < spec.count; ++i) values[i] = random_value(seed, i, spec.distribution);
  }
  for (double& v : values) v = round_to(spec.dtype, v);
  return values;
}

std::shared_ptr<const std::vector<std::byte>> shared_encoded_values(const TensorSpec& spec, std::size_t budget_bytes) {
  if (spec.shared_init_key.empty())
    throw std::logic_error("tensor '" + spec.name + "' has no shared_init_key: its values depend on the seed");
  const std::string key = spec.shared_init_key + "/" + std::string(to_string(spec.dtype)) + "/" + std::to_string(spec.count);
  static std::mutex mutex;
  static std::deque<SharedValues> cache;  // oldest first
  const std::lock_guard lock(mutex);
  for (const SharedValues& entry : cache)
    if (entry.key == key) return entry.bytes;

  // The seed is irrelevant by the key's contract; 0 makes a broken contract reproducible.
  auto bytes = std::make_shared<const std::vector<std::byte>>(encode_values(spec.dtype, generate_on_host(spec, 0)));
  std::size_t total = bytes->size();
  for (const SharedValues& entry : cache) total += entry.bytes->size();
  while (!cache.empty() && total > budget_bytes) {
    total -= cache.front().bytes->size();
    cache.pop_front();
  }
  cache.push_back({key, bytes});
  return bytes;
}

}  // namespace kgate
