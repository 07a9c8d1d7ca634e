#pragma once
// Counter-based random numbers: element i of a tensor is a pure function of (seed, i). The
// host (for the CPU reference) and the device (for large benchmark inputs) therefore produce
// bit-identical tensors with no state to share, and a failing case is reproduced from its seed.
#include <cstddef>
#include <cstdint>
#include <string_view>

#if defined(__CUDACC__)
#define KGATE_HD __host__ __device__
#else
#define KGATE_HD
#endif

namespace kgate {

KGATE_HD inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// SplitMix64 as a stream (host code): kgate::splitmix64 adds the increment itself, so stepping
// the state by the same increment walks the reference generator's sequence. Resampling and
// permutation tests draw from it, so their results are the same on every platform.
class SplitMixStream {
 public:
  explicit SplitMixStream(std::uint64_t seed) : state_(seed) {}
  // Uniform in [0, bound); bias ~ bound / 2^53.
  std::size_t index_below(std::size_t bound) {
    const std::uint64_t bits = splitmix64(state_);
    state_ += 0x9E3779B97F4A7C15ull;
    const double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
    return static_cast<std::size_t>(unit * static_cast<double>(bound));
  }

 private:
  std::uint64_t state_;
};

// Values whose magnitude lies in [min_magnitude, max_magnitude), with a random sign when
// `symmetric`. A positive lower bound keeps exact zeros out of every input: zeros hide unwritten
// outputs and wrong indexing, and can run faster than real data.
struct Distribution {
  float min_magnitude = 1.0f / 64;
  float max_magnitude = 1.0f;
  bool symmetric = true;
};

KGATE_HD inline float random_value(std::uint64_t seed, std::uint64_t index, Distribution dist) {
  const std::uint64_t bits = splitmix64(seed ^ splitmix64(index));
  const float unit = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);  // 24 bits in [0, 1)
  const float magnitude = dist.min_magnitude + unit * (dist.max_magnitude - dist.min_magnitude);
  return (dist.symmetric && (bits & 1u)) ? -magnitude : magnitude;
}

// The run's base seed: KGATE_SEED when set (to reproduce a failure), otherwise fresh entropy,
// chosen once per process.
std::uint64_t session_seed();
// The benchmarks' base seed: KGATE_SEED when set, otherwise a fixed value. Two runs must time the
// same work: some kernels' speed depends on the data (sincosf's slow path for large angles made
// rope/naive at one token 14% slower in one H200 run than in the next with fresh inputs).
std::uint64_t benchmark_seed();
// A per-case seed, so that every (variant, shape) draws different inputs from one session seed.
std::uint64_t derive_seed(std::uint64_t base, std::string_view label);

}  // namespace kgate
