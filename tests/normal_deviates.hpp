#pragma once
// Standard normal deviates for synthetic sample streams: Box–Muller over splitmix64, so every test
// draws the same numbers on every machine and standard library.
#include <cmath>
#include <cstdint>
#include <numbers>

#include "kgate/base/random.hpp"

namespace kgate::synthetic {

inline double normal_deviate(std::uint64_t seed, std::uint64_t index) {
  const auto unit = [](std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; };
  const double u1 = unit(kgate::splitmix64(seed ^ kgate::splitmix64(2 * index)));
  const double u2 = unit(kgate::splitmix64(seed ^ kgate::splitmix64(2 * index + 1)));
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

}  // namespace kgate::synthetic
