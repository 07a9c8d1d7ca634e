#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "kgate/core/host_values.hpp"

using kgate::DType;
using kgate::TensorSpec;

namespace {

// A table whose values ignore the seed, counting how often it is generated.
TensorSpec counted_table(const std::string& key, std::size_t count, int& calls) {
  return {.name = "table",
          .dtype = DType::fp32,
          .count = count,
          .access = kgate::Access::input,
          .custom_init =
              [&calls](std::uint64_t, std::span<double> values) {
                ++calls;
                for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.1 * static_cast<double>(i + 1);
              },
          .shared_init_key = key};
}

}  // namespace

TEST(HostValues, RoundsCustomValuesToTheStoredDtype) {
  const TensorSpec spec{.name = "x",
                        .dtype = DType::bf16,
                        .count = 3,
                        .access = kgate::Access::input,
                        .custom_init = [](std::uint64_t seed, std::span<double> v) {
                          for (double& x : v) x = 1.0 + 1e-3 * static_cast<double>(seed);
                        }};
  const std::vector<double> values = kgate::generate_on_host(spec, 1);
  // 1.001 is not a bf16: the nearest is 1.0 (bf16 steps by 2^-7 near 1).
  for (double v : values) EXPECT_EQ(v, 1.0);
  EXPECT_EQ(kgate::generate_on_host(spec, 9)[0], 1.0078125);  // 1.009 rounds up to 1 + 2^-7
}

TEST(HostValues, RandomInputsFollowTheSeed) {
  const TensorSpec spec{.name = "x", .dtype = DType::fp32, .count = 4, .access = kgate::Access::input};
  EXPECT_EQ(kgate::generate_on_host(spec, 5), kgate::generate_on_host(spec, 5));
  EXPECT_NE(kgate::generate_on_host(spec, 5), kgate::generate_on_host(spec, 6));
}

TEST(HostValues, SharedValuesAreGeneratedOncePerKeyCountAndDtype) {
  int calls = 0;
  const TensorSpec table = counted_table("synthetic-table/once", 8, calls);
  const auto first = kgate::shared_encoded_values(table);
  const auto again = kgate::shared_encoded_values(table);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(first.get(), again.get());
  ASSERT_EQ(first->size(), 8 * sizeof(float));
  float third = 0;
  std::memcpy(&third, first->data() + 2 * sizeof(float), sizeof third);
  EXPECT_EQ(third, 0.3f);

  kgate::shared_encoded_values(counted_table("synthetic-table/once", 16, calls));  // another count
  EXPECT_EQ(calls, 2);
  TensorSpec as_bf16 = table;
  as_bf16.dtype = DType::bf16;
  EXPECT_EQ(kgate::shared_encoded_values(as_bf16)->size(), 8 * sizeof(std::uint16_t));
  EXPECT_EQ(calls, 3);
  kgate::shared_encoded_values(counted_table("synthetic-table/other", 8, calls));
  EXPECT_EQ(calls, 4);
}

TEST(HostValues, TheCacheStaysWithinItsBudget) {
  int calls = 0;
  // Two 64-byte tables in a 100-byte budget cannot both stay: the older is generated again.
  const TensorSpec a = counted_table("synthetic-table/budget-a", 16, calls);
  const TensorSpec b = counted_table("synthetic-table/budget-b", 16, calls);
  kgate::shared_encoded_values(a, 100);
  kgate::shared_encoded_values(b, 100);
  kgate::shared_encoded_values(b, 100);
  EXPECT_EQ(calls, 2);
  kgate::shared_encoded_values(a, 100);
  EXPECT_EQ(calls, 3);
}

TEST(HostValues, SharedValuesNeedAKey) {
  const TensorSpec spec{.name = "x", .dtype = DType::fp32, .count = 4, .access = kgate::Access::input};
  EXPECT_THROW(kgate::shared_encoded_values(spec), std::logic_error);
}
