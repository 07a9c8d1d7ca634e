// The check module (check.hpp): which tolerance applies to each checked tensor, FlashAttention's
// baseline rule and its arithmetic (accuracy.hpp), and the registry's resolution and validation of
// device references. The family here is a synthetic fixture.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kgate/core/check.hpp"
#include "kgate/core/registry.hpp"

namespace {

using kgate::Access;
using kgate::DType;
using kgate::Shape;

struct SyntheticArgs {
  float* out;
};

// Tensors: x (input), out (bf16, the family's tolerance), aux (fp32 with its own tolerance).
// Shapes with n > 100 take their expected values from the variant "ref".
class SyntheticCheckFamily final : public kgate::TypedFamily<SyntheticArgs> {
 public:
  static constexpr const char* kName = "synthetic-check";
  explicit SyntheticCheckFamily(bool only_long_shapes = false) : only_long_shapes_(only_long_shapes) {}
  std::string name() const override { return kName; }
  std::string description() const override { return "a synthetic family for check tests"; }
  std::vector<Shape> test_shapes() const override {
    if (only_long_shapes_) return {shape(1000)};
    return {shape(3), shape(1000)};
  }
  std::vector<Shape> bench_shapes() const override { return test_shapes(); }
  std::vector<kgate::TensorSpec> tensors(const Shape& s) const override {
    const auto n = static_cast<std::size_t>(s.at("n"));
    return {{.name = "x", .dtype = DType::fp32, .count = n, .access = Access::input},
            {.name = "out", .dtype = DType::bf16, .count = n, .access = Access::output},
            {.name = "aux",
             .dtype = DType::fp32,
             .count = n,
             .access = Access::output,
             .tolerance = kgate::Tolerance{.rel_l2 = 1.0, .max_ulps = 0, .abs_floor = 1e-3}}};
  }
  double min_bytes(const Shape& s) const override { return 10.0 * s.at("n"); }
  double flops(const Shape&) const override { return 0; }
  void reference(const Shape&, kgate::HostTensors&) const override {}
  std::optional<std::string> device_reference(const Shape& s) const override {
    if (s.at("n") > 100) return "ref";
    return std::nullopt;
  }
  kgate::Tolerance tolerance(const Shape&) const override { return {.rel_l2 = 1.0, .max_ulps = 0, .abs_floor = 1e-4}; }
  SyntheticArgs make_args(const Shape&, const kgate::TensorViews& v) const override { return {v.get<float>(1)}; }

  static Shape shape(std::int64_t n) { return Shape({{"n", n}}, DType::bf16); }

 private:
  bool only_long_shapes_;
};

// An output and arrival counters kept as zeroed scratch, with a tolerance loose enough to pass
// any counter value: the zero rule must not take it.
class SyntheticCountersFamily final : public kgate::TypedFamily<SyntheticArgs> {
 public:
  std::string name() const override { return "synthetic-counters"; }
  std::string description() const override { return "a synthetic family with zeroed scratch"; }
  std::vector<Shape> test_shapes() const override { return {SyntheticCheckFamily::shape(3)}; }
  std::vector<Shape> bench_shapes() const override { return test_shapes(); }
  std::vector<kgate::TensorSpec> tensors(const Shape& s) const override {
    const auto n = static_cast<std::size_t>(s.at("n"));
    return {{.name = "out", .dtype = DType::fp32, .count = n, .access = Access::output},
            {.name = "arrivals", .dtype = DType::i32, .count = 2, .access = Access::zeroed_scratch}};
  }
  double min_bytes(const Shape& s) const override { return 4.0 * s.at("n"); }
  double flops(const Shape&) const override { return 0; }
  void reference(const Shape&, kgate::HostTensors&) const override {}
  kgate::Tolerance tolerance(const Shape&) const override { return {.rel_l2 = 1e9, .max_ulps = 1e9, .abs_floor = 1e9}; }
  SyntheticArgs make_args(const Shape&, const kgate::TensorViews& v) const override { return {v.get<float>(0)}; }
};

// Checks out = {1, 2, 4} against itself and arrivals as the device left them; the expected values
// hold nothing for the arrivals, whose expectation is zero by definition.
kgate::InstanceCheck check_counters(std::vector<double> arrivals) {
  const SyntheticCountersFamily family;
  const Shape shape = SyntheticCheckFamily::shape(3);
  const std::vector<double> exact = {1.0, 2.0, 4.0};
  const std::vector<std::vector<std::byte>> outputs = {kgate::encode_values(DType::fp32, exact),
                                                       kgate::encode_values(DType::i32, arrivals)};
  return kgate::check_outputs(family, shape, family.tensors(shape), {exact, {}}, nullptr, outputs, "synthetic");
}

void synthetic_launch(const SyntheticArgs&, cudaStream_t) {}

kgate::Variant synthetic_variant(std::string name) {
  kgate::VariantInfo info;
  info.name = std::move(name);
  info.description = "a synthetic variant";
  return kgate::make_variant<SyntheticCheckFamily>(std::move(info), synthetic_launch);
}

// Checks out = {1, 2, 4} + out_error at element 0 and aux = {1, 2, 4} + aux_error at element 2,
// with a baseline whose out and aux are off by baseline_error at element 1 (or no baseline).
kgate::InstanceCheck check(double out_error, double aux_error, std::optional<double> baseline_error) {
  const SyntheticCheckFamily family;
  const Shape shape = SyntheticCheckFamily::shape(3);
  const std::vector<double> exact = {1.0, 2.0, 4.0};
  const kgate::HostTensors expected = {exact, exact, exact};
  std::vector<double> out = exact, aux = exact;
  out[0] += out_error;
  aux[2] += aux_error;
  const std::vector<std::vector<std::byte>> outputs = {{},
                                                       kgate::encode_values(kgate::DType::bf16, out),
                                                       kgate::encode_values(kgate::DType::fp32, aux)};
  kgate::HostTensors baseline = expected;
  if (baseline_error) {
    baseline[1][1] += *baseline_error;
    baseline[2][1] += *baseline_error;
  }
  return kgate::check_outputs(family, shape, family.tensors(shape), expected, baseline_error ? &baseline : nullptr, outputs,
                              "synthetic expectations");
}

}  // namespace

TEST(Check, BaselineErrorIsTheLargestAndTheRelativeL2Error) {
  const std::vector<double> ref = {1.0, 2.5, 3.0}, baseline = {1.0, 2.0, 3.0};
  const kgate::BaselineError error = kgate::baseline_error(baseline, ref);
  EXPECT_DOUBLE_EQ(error.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(error.rel_l2, 0.5 / std::sqrt(1.0 + 6.25 + 9.0));
  EXPECT_THROW(kgate::baseline_error(std::vector<double>{1.0, NAN, 3.0}, ref), std::invalid_argument);
  EXPECT_THROW(kgate::baseline_error(std::vector<double>{1.0}, ref), std::invalid_argument);
}

TEST(Check, WideningAddsTwiceTheBaselineErrorToTheFloor) {
  const kgate::Tolerance floor{.rel_l2 = 1e-2, .max_ulps = 2, .abs_floor = 1e-4};
  const kgate::Tolerance widened = kgate::widen_by_baseline(floor, {.max_abs = 0.25, .rel_l2 = 0.01});
  EXPECT_DOUBLE_EQ(widened.rel_l2, 1e-2 + 2 * 0.01);
  EXPECT_DOUBLE_EQ(widened.max_ulps, 2);
  EXPECT_DOUBLE_EQ(widened.abs_floor, 1e-4 + 2 * 0.25);
  EXPECT_DOUBLE_EQ(kgate::widen_by_baseline(floor, {.max_abs = 0.25, .rel_l2 = 0.01}, 3).abs_floor, 1e-4 + 0.75);
}

TEST(Check, ATensorsOwnToleranceReplacesTheFamilys) {
  const SyntheticCheckFamily family;
  const Shape shape = SyntheticCheckFamily::shape(3);
  const auto specs = family.tensors(shape);
  EXPECT_DOUBLE_EQ(kgate::tensor_tolerance(family, shape, specs[1]).abs_floor, 1e-4);
  EXPECT_DOUBLE_EQ(kgate::tensor_tolerance(family, shape, specs[2]).abs_floor, 1e-3);
  EXPECT_FALSE(kgate::is_checked(Access::input));
  EXPECT_FALSE(kgate::is_checked(Access::scratch));
  EXPECT_TRUE(kgate::is_checked(Access::output));
  EXPECT_TRUE(kgate::is_checked(Access::inout));
}

TEST(Check, WithoutABaselineEachTensorMeetsItsOwnTolerance) {
  const kgate::InstanceCheck exact = check(0, 0, std::nullopt);
  ASSERT_EQ(exact.tensors.size(), 2u);  // the input is not checked
  EXPECT_EQ(exact.tensors[0].tensor, "out");
  EXPECT_EQ(exact.tensors[1].tensor, "aux");
  EXPECT_TRUE(exact.passed()) << exact.describe();
  EXPECT_EQ(exact.reference, "synthetic expectations");
  // 1 + 2^-7 is exact in bf16: an error of 1/128 against a floor of 1e-4.
  EXPECT_FALSE(check(1.0 / 128, 0, std::nullopt).passed());
  EXPECT_TRUE(check(0, 5e-4, std::nullopt).passed());
  EXPECT_FALSE(check(0, 2e-3, std::nullopt).passed());
}

TEST(Check, TheBaselineWidensOnlyTheFamilysTolerance) {
  // out: an error of 1/128 passes against a baseline off by 1/200 (2 x 1/200 + 1e-4 > 1/128) and
  // fails against one off by 1/300.
  EXPECT_TRUE(check(1.0 / 128, 0, 1.0 / 200).passed());
  const kgate::InstanceCheck tight = check(1.0 / 128, 0, 1.0 / 300);
  EXPECT_FALSE(tight.passed());
  EXPECT_FALSE(tight.tensors[0].passed()) << tight.describe();
  // aux keeps its own bound whatever the baseline's error.
  const kgate::InstanceCheck aux = check(0, 2e-3, 1.0);
  EXPECT_TRUE(aux.tensors[0].passed()) << aux.describe();
  EXPECT_FALSE(aux.tensors[1].passed()) << aux.describe();
}

TEST(Check, ZeroedScratchMustReadZeroAfterTheLaunch) {
  EXPECT_TRUE(kgate::is_checked(Access::zeroed_scratch));
  const kgate::InstanceCheck left_zeroed = check_counters({0, 0});
  ASSERT_EQ(left_zeroed.tensors.size(), 2u);
  EXPECT_EQ(left_zeroed.tensors[1].tensor, "arrivals");
  EXPECT_TRUE(left_zeroed.passed()) << left_zeroed.describe();
  // A counter left at 1 (a launch that did not reset it) fails, though the family's tolerance
  // would pass it; the output is unaffected.
  const kgate::InstanceCheck left_counting = check_counters({0, 1});
  EXPECT_FALSE(left_counting.passed());
  EXPECT_TRUE(left_counting.tensors[0].passed()) << left_counting.describe();
  EXPECT_EQ(left_counting.tensors[1].violations, 1u) << left_counting.describe();
  const SyntheticCountersFamily family;
  const Shape shape = SyntheticCheckFamily::shape(3);
  const kgate::Tolerance exact = kgate::tensor_tolerance(family, shape, family.tensors(shape)[1]);
  EXPECT_EQ(exact.rel_l2, 0);
  EXPECT_EQ(exact.max_ulps, 0);
  EXPECT_EQ(exact.abs_floor, 0);
}

TEST(Check, MismatchedInputsAreRejected) {
  const SyntheticCheckFamily family;
  const Shape shape = SyntheticCheckFamily::shape(3);
  EXPECT_THROW(kgate::check_outputs(family, shape, family.tensors(shape), {{}, {}}, nullptr, {{}, {}, {}}, ""), std::invalid_argument);
}

TEST(Check, TheRegistryResolvesDeviceReferences) {
  kgate::Registry r;
  r.add_family(std::make_unique<SyntheticCheckFamily>());
  r.add_variant(synthetic_variant("candidate"));
  r.add_variant(synthetic_variant("ref"));
  EXPECT_NO_THROW(r.validate());
  const kgate::Family& family = *r.find_family("synthetic-check");
  EXPECT_EQ(r.device_reference(family, SyntheticCheckFamily::shape(3)), nullptr);
  EXPECT_EQ(r.device_reference(family, SyntheticCheckFamily::shape(1000)), r.find_variant("synthetic-check/ref"));
}

TEST(Check, ValidationRejectsAnUnregisteredDeviceReference) {
  kgate::Registry r;
  r.add_family(std::make_unique<SyntheticCheckFamily>());
  r.add_variant(synthetic_variant("candidate"));
  const kgate::Family& family = *r.find_family("synthetic-check");
  EXPECT_THROW(r.device_reference(family, SyntheticCheckFamily::shape(1000)), std::logic_error);
  try {
    r.validate();
    FAIL() << "expected validate() to throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("unregistered variant 'ref'"), std::string::npos) << e.what();
  }
}

TEST(Check, ValidationWantsTheDeviceReferenceCheckedOnTheHost) {
  kgate::Registry r;
  r.add_family(std::make_unique<SyntheticCheckFamily>(/*only_long_shapes=*/true));
  r.add_variant(synthetic_variant("ref"));
  try {
    r.validate();
    FAIL() << "expected validate() to throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("none checks that variant against the host reference"), std::string::npos) << e.what();
  }
}
