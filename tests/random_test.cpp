#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>

#include "kgate/core/accuracy.hpp"
#include "kgate/base/random.hpp"

using kgate::Distribution;
using kgate::random_value;

TEST(Random, IsAPureFunctionOfSeedAndIndex) {
  const Distribution d{};
  for (std::uint64_t i : {0ull, 1ull, 12345ull, (1ull << 40) + 7}) {
    EXPECT_EQ(random_value(42, i, d), random_value(42, i, d));
  }
  EXPECT_NE(random_value(42, 0, d), random_value(43, 0, d));
  EXPECT_NE(random_value(42, 0, d), random_value(42, 1, d));
}

TEST(Random, NeverZeroEvenAfterRoundingToBf16) {
  const Distribution d{};
  int negatives = 0;
  for (std::uint64_t i = 0; i < 200000; ++i) {
    const float v = random_value(7, i, d);
    const float stored = kgate::bf16_bits_to_float(kgate::float_to_bf16_bits(v));
    ASSERT_NE(stored, 0.0f) << "index " << i;
    ASSERT_GE(std::fabs(v), d.min_magnitude);
    ASSERT_LT(std::fabs(v), d.max_magnitude);
    negatives += v < 0;
  }
  // A fair sign: 100000 expected, five standard deviations is about 1100.
  EXPECT_NEAR(negatives, 100000, 1200);
}

TEST(Random, RespectsAsymmetricDistributions) {
  const Distribution d{.min_magnitude = 0.25f, .max_magnitude = 2.0f, .symmetric = false};
  double sum = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const float v = random_value(3, i, d);
    ASSERT_GE(v, 0.25f);
    ASSERT_LT(v, 2.0f);
    sum += v;
  }
  EXPECT_NEAR(sum / 100000, 1.125, 0.01);  // uniform on [0.25, 2)
}

TEST(Random, DerivedSeedsDifferPerLabel) {
  std::set<std::uint64_t> seeds;
  for (const char* label : {"rmsnorm/naive/m:1/n:4096/bf16", "rmsnorm/naive/m:1/n:4097/bf16", "x", "y", ""})
    seeds.insert(kgate::derive_seed(99, label));
  EXPECT_EQ(seeds.size(), 5u);
  EXPECT_EQ(kgate::derive_seed(99, "x"), kgate::derive_seed(99, "x"));
  EXPECT_NE(kgate::derive_seed(99, "x"), kgate::derive_seed(100, "x"));
}

TEST(Random, BenchmarksDrawTheSameInputsInEveryRun) {
  // Without KGATE_SEED the benchmark seed is a constant: two processes time identical data.
  if (std::getenv("KGATE_SEED")) GTEST_SKIP() << "KGATE_SEED is set";
  EXPECT_EQ(kgate::benchmark_seed(), 0x6B67617465ull);
}
