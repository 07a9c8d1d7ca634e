#include "kgate/base/random.hpp"

#include <cstdlib>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

namespace kgate {

namespace {

std::optional<std::uint64_t> seed_from_environment() {
  const char* text = std::getenv("KGATE_SEED");
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 0);
  if (*end != '\0') throw std::invalid_argument(std::string("KGATE_SEED is not an integer: ") + text);
  return static_cast<std::uint64_t>(value);
}

}  // namespace

std::uint64_t session_seed() {
  static const std::uint64_t seed = [] {
    if (const auto given = seed_from_environment()) return *given;
    std::random_device entropy;
    return (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
  }();
  return seed;
}

std::uint64_t benchmark_seed() {
  static const std::uint64_t seed = seed_from_environment().value_or(0x6B67617465ull);  // "kgate"
  return seed;
}

std::uint64_t derive_seed(std::uint64_t base, std::string_view label) {
  std::uint64_t hash = 0xCBF29CE484222325ull;  // FNV-1a, then mixed with the base seed
  for (unsigned char c : label) hash = (hash ^ c) * 0x100000001B3ull;
  return splitmix64(base ^ hash);
}

}  // namespace kgate
