// The RoPE family's host side: its cos and sin caches, built on the host's threads, are the same
// table whatever the thread count, and hold the angle a model's cache holds.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/rope/rope.hpp"
#include "kgate/base/parallel.hpp"
#include "kgate/core/host_values.hpp"
#include "kgate/core/registry.hpp"

namespace {

// The bench shapes' cache (128K positions, head_dim 128): many blocks of rows for the threads.
std::vector<double> table(const std::string& name, std::size_t threads) {
  const kgate::Family& rope = *kgate::Registry::instance().find_family("rope");
  const kgate::ScopedHostThreads scoped(threads);
  for (const kgate::TensorSpec& spec : rope.tensors(rope.bench_shapes().front()))
    if (spec.name == name) return kgate::generate_on_host(spec, 0);
  ADD_FAILURE() << "rope has no tensor " << name;
  return {};
}

TEST(RopeFamily, AngleTablesAreTheSameOnAnyNumberOfThreads) {
  for (const char* name : {"cos", "sin"}) {
    const std::vector<double> one = table(name, 1);
    ASSERT_EQ(one.size(), std::size_t{131072} * 64) << name;
    EXPECT_TRUE(one == table(name, 3)) << name << ": the table depends on the thread count";
  }
}

TEST(RopeFamily, AngleTablesHoldEachPositionsAngleAsFp32) {
  const std::vector<double> cos = table("cos", 2), sin = table("sin", 2);
  for (const auto& [position, pair] : {std::pair{0, 0}, {1, 0}, {12345, 7}, {131071, 63}}) {
    const double angle = position * std::pow(kgate::kernels::RopeFamily::kBase, -2.0 * pair / 128.0);
    const std::size_t at = static_cast<std::size_t>(position) * 64 + static_cast<std::size_t>(pair);
    EXPECT_EQ(cos[at], static_cast<float>(std::cos(angle))) << position << ", " << pair;
    EXPECT_EQ(sin[at], static_cast<float>(std::sin(angle))) << position << ", " << pair;
  }
}

}  // namespace
