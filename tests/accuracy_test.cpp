#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <cstring>
#include <vector>

#include "kgate/core/accuracy.hpp"

using kgate::DType;

namespace {

std::vector<std::byte> as_bf16(const std::vector<double>& values) {
  std::vector<std::byte> raw(values.size() * 2);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t bits = kgate::float_to_bf16_bits(static_cast<float>(values[i]));
    std::memcpy(&raw[i * 2], &bits, 2);
  }
  return raw;
}

void set_bits(std::vector<std::byte>& raw, std::size_t index, std::uint16_t bits) { std::memcpy(&raw[index * 2], &bits, 2); }

}  // namespace

TEST(Accuracy, UlpOfBf16) {
  EXPECT_EQ(kgate::ulp(DType::bf16, 1.0), std::ldexp(1.0, -7));  // 8 significant bits
  EXPECT_EQ(kgate::ulp(DType::bf16, 1.5), std::ldexp(1.0, -7));
  EXPECT_EQ(kgate::ulp(DType::bf16, 2.0), std::ldexp(1.0, -6));
  EXPECT_EQ(kgate::ulp(DType::bf16, -0.75), std::ldexp(1.0, -8));
  EXPECT_EQ(kgate::ulp(DType::fp16, 1.0), std::ldexp(1.0, -10));
  EXPECT_EQ(kgate::ulp(DType::fp32, 1.0), std::ldexp(1.0, -23));
  EXPECT_GT(kgate::ulp(DType::bf16, 0.0), 0.0);
}

// ulp() reads the exponent from the double's bits: it must agree with the definition through
// frexp and ldexp at and around powers of two, in each type's subnormal range, and for the
// smallest and largest doubles.
TEST(Accuracy, UlpMatchesItsFrexpDefinition) {
  const auto defined = [](DType dtype, double value) {
    const int bits = dtype == DType::bf16 ? 8 : dtype == DType::fp16 ? 11 : 24;
    const int min_exponent = dtype == DType::fp16 ? -13 : -125;
    int exponent = 0;
    std::frexp(std::fabs(value), &exponent);
    if (value == 0.0 || exponent < min_exponent) exponent = min_exponent;
    return std::ldexp(1.0, exponent - bits);
  };
  std::vector<double> values = {0.0,
                                -0.0,
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::max(),
                                3.0e-5,
                                6.1e-5,
                                1.0e-39,
                                1.2e-38,
                                65504.0,
                                3.0e38};
  for (int e = -160; e <= 140; ++e)
    for (const double m : {1.0, std::nextafter(1.0, 2.0), 1.5, std::nextafter(2.0, 1.0)}) values.push_back(std::ldexp(m, e));
  for (const DType dtype : {DType::bf16, DType::fp16, DType::fp32})
    for (const double v : values)
      for (const double x : {v, -v}) EXPECT_EQ(kgate::ulp(dtype, x), defined(dtype, x)) << to_string(dtype) << " at " << x;
}

TEST(Accuracy, Bf16RoundsToNearestEven) {
  EXPECT_EQ(kgate::float_to_bf16_bits(1.0f), 0x3F80);
  // 1 + 2^-8 is exactly halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
  EXPECT_EQ(kgate::float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(kgate::float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(kgate::bf16_bits_to_float(0xC000), -2.0f);
}

TEST(Accuracy, ExactRoundedReferencePasses) {
  const std::vector<double> ref = {1.0, -0.3, 0.70001, 1e-3, 123.4};
  const auto report = kgate::compare("y", DType::bf16, as_bf16(ref), ref, kgate::default_tolerance(DType::bf16));
  EXPECT_TRUE(report.passed()) << report.describe();
  EXPECT_EQ(report.violations, 0u);
  EXPECT_LT(report.rel_l2, 4e-3);  // at most half an ulp per element
}

TEST(Accuracy, OneElementThreeUlpsOffFailsAndIsNamed) {
  const std::vector<double> ref(100, 1.0);
  std::vector<double> got = ref;
  got[42] = 1.0 + 3 * std::ldexp(1.0, -7);
  const auto report = kgate::compare("y", DType::bf16, as_bf16(got), ref, kgate::default_tolerance(DType::bf16));
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.violations, 1u);
  EXPECT_EQ(report.worst_index, 42u);
  EXPECT_DOUBLE_EQ(report.max_abs, 3 * std::ldexp(1.0, -7));
  EXPECT_NE(report.describe().find("[42]"), std::string::npos) << report.describe();
}

TEST(Accuracy, RelativeL2LimitAppliesOverTheTensor) {
  const std::vector<double> ref(1000, 1.0);
  std::vector<double> got(1000, 1.0 + std::ldexp(1.0, -7));  // every element 1 ulp off: within the per-element bound
  kgate::Tolerance tight = kgate::default_tolerance(DType::bf16);
  EXPECT_TRUE(kgate::compare("y", DType::bf16, as_bf16(got), ref, tight).passed());
  tight.rel_l2 = 1e-3;  // ...but 7.8e-3 over the tensor
  EXPECT_FALSE(kgate::compare("y", DType::bf16, as_bf16(got), ref, tight).passed());
}

TEST(Accuracy, NanAndInfNeverPass) {
  const std::vector<double> ref(10, 0.5);
  auto raw = as_bf16(ref);
  set_bits(raw, 3, 0x7FC0);  // NaN
  set_bits(raw, 4, 0x7F80);  // +Inf
  kgate::Tolerance loose{.rel_l2 = 1e9, .max_ulps = 1e9, .abs_floor = 1e9};
  const auto report = kgate::compare("y", DType::bf16, raw, ref, loose);
  EXPECT_EQ(report.non_finite, 2u);
  EXPECT_FALSE(report.passed());
}

TEST(Accuracy, PoisonedElementsCountAsUnwritten) {
  const std::vector<double> ref(10, 0.5);
  auto raw = as_bf16(ref);
  set_bits(raw, 9, kgate::poison_bits_16());
  const auto report = kgate::compare("y", DType::bf16, raw, ref, kgate::default_tolerance(DType::bf16));
  EXPECT_EQ(report.unwritten, 1u);
  EXPECT_EQ(report.non_finite, 0u);
  EXPECT_FALSE(report.passed());
  EXPECT_TRUE(kgate::is_poison(DType::bf16, &raw[18]));
}

TEST(Accuracy, SizeMismatchIsAnError) {
  const std::vector<double> ref(10, 0.5);
  EXPECT_THROW(kgate::compare("y", DType::bf16, as_bf16(std::vector<double>(9, 0.5)), ref, {}), std::invalid_argument);
}
