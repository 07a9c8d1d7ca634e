// FastDivisor (kernels/common/fast_divisor.hpp): the multiply-high quotient equals n / d, on the
// edges of every divisor's range and on random pairs over the whole 32-bit range.
#include "kernels/common/fast_divisor.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>

namespace {

using kgate::kernels::FastDivisor;

void expect_quotients(std::uint32_t divisor, std::initializer_list<std::uint32_t> numerators) {
  const FastDivisor fast(divisor);
  EXPECT_EQ(fast.divisor(), divisor);
  for (const std::uint32_t n : numerators) ASSERT_EQ(fast.quotient(n), n / divisor) << n << " / " << divisor;
}

TEST(FastDivisor, QuotientsAtTheEdgesOfSmallDivisors) {
  for (std::uint32_t d = 1; d <= 4096; ++d)
    expect_quotients(d, {0u, 1u, d - 1, d, d + 1, 2 * d - 1, 2 * d, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu});
}

TEST(FastDivisor, QuotientsOfLargeDivisors) {
  for (const std::uint32_t d : {0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu})
    expect_quotients(d, {0u, 1u, d - 1, d, 0xffffffffu});
}

TEST(FastDivisor, QuotientsOfRandomPairs) {
  std::mt19937 random(7);
  for (int i = 0; i < 1'000'000; ++i) {
    std::uint32_t d = random() >> (random() % 32);  // every magnitude
    if (d == 0) d = 1;
    const std::uint32_t n = random();
    ASSERT_EQ(FastDivisor(d).quotient(n), n / d) << n << " / " << d;
  }
}

TEST(FastDivisor, RefusesZero) { EXPECT_THROW(FastDivisor(0), std::invalid_argument); }

}  // namespace
