// The CPU check of a family's host reference (reference_check.hpp): synthetic families with planted
// flaws fail it, each with the sentence that names the flaw, and every kgate family passes it.
#include "kgate/core/reference_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "kgate/base/parallel.hpp"
#include "kgate/core/registry.hpp"

namespace {

using kgate::Access;
using kgate::DType;
using kgate::Shape;

enum class Flaw {
  none,
  leaves_last_unwritten,
  writes_inf,
  writes_input,
  resizes_output,
  keeps_state,
  depends_on_threads,
  baseline_unwritten
};

Shape elements(std::int64_t n) { return Shape({{"n", n}}, DType::fp32, "synthetic"); }

// y = x^2, acc += x, with a scratch buffer the reference never sees; `flaw` plants one bug.
class SyntheticFamily final : public kgate::Family {
 public:
  explicit SyntheticFamily(Flaw flaw) : flaw_(flaw) {}
  std::string name() const override { return "synthetic-square"; }
  std::string description() const override { return "y = x^2, acc += x"; }
  // n 2 takes its expected values from a device variant, so the smallest host-reference shape is n 3.
  std::vector<Shape> test_shapes() const override { return {elements(64), elements(2), elements(3)}; }
  std::vector<Shape> bench_shapes() const override { return {elements(1 << 20)}; }
  std::optional<std::string> device_reference(const Shape& shape) const override {
    return shape.at("n") == 2 ? std::optional<std::string>("naive") : std::nullopt;
  }
  std::vector<kgate::TensorSpec> tensors(const Shape& shape) const override {
    const auto n = static_cast<std::size_t>(shape.at("n"));
    return {{.name = "x", .dtype = DType::fp32, .count = n, .access = Access::input},
            {.name = "y", .dtype = DType::fp32, .count = n, .access = Access::output},
            {.name = "acc", .dtype = DType::fp32, .count = n, .access = Access::inout},
            {.name = "work", .dtype = DType::fp32, .count = n, .access = Access::scratch}};
  }
  double min_bytes(const Shape& shape) const override { return 16.0 * static_cast<double>(shape.at("n")); }
  double flops(const Shape& shape) const override { return 2.0 * static_cast<double>(shape.at("n")); }

  void reference(const Shape& shape, kgate::HostTensors& t) const override {
    const auto n = static_cast<std::size_t>(shape.at("n"));
    for (std::size_t i = 0; i < n; ++i) {
      if (flaw_ == Flaw::leaves_last_unwritten && i == n - 1) continue;
      t[1][i] = t[0][i] * t[0][i];
      t[2][i] += t[0][i];
    }
    if (flaw_ == Flaw::writes_inf) t[2][0] = std::numeric_limits<double>::infinity();
    if (flaw_ == Flaw::writes_input) t[0][1] = 0;  // an index into the wrong tensor
    if (flaw_ == Flaw::resizes_output) t[1].push_back(0);
    if (flaw_ == Flaw::keeps_state) t[1][0] += calls_++;
    // As a sum split over the threads would be, were its partial sums added in finishing order.
    if (flaw_ == Flaw::depends_on_threads) t[1][2] += 1e-3 * static_cast<double>(kgate::host_threads());
  }

  bool baseline(const Shape& shape, kgate::HostTensors& t) const override {
    if (flaw_ != Flaw::baseline_unwritten) return false;
    for (std::size_t i = 1; i < static_cast<std::size_t>(shape.at("n")); ++i) t[1][i] = t[0][i] * t[0][i];
    return true;
  }

 private:
  Flaw flaw_;
  mutable int calls_ = 0;
};

kgate::ReferenceCheck check(Flaw flaw) {
  const SyntheticFamily family(flaw);
  return kgate::check_host_reference(family, kgate::smallest_host_reference_shape(family), 42);
}

// The check's one problem, which must exist.
std::string only_problem(Flaw flaw) {
  const kgate::ReferenceCheck result = check(flaw);
  EXPECT_EQ(result.problems.size(), 1u) << result.describe();
  return result.problems.empty() ? "" : result.problems.front();
}

TEST(ReferenceCheck, TheSmallestShapeUsesTheHostReference) {
  EXPECT_EQ(kgate::smallest_host_reference_shape(SyntheticFamily(Flaw::none)).id(), "n:3/fp32");
}

TEST(ReferenceCheck, ACorrectReferencePasses) {
  const kgate::ReferenceCheck result = check(Flaw::none);
  EXPECT_TRUE(result.passed()) << result.describe();
  EXPECT_EQ(result.describe(), "synthetic-square's host reference at n:3/fp32 passed");
}

TEST(ReferenceCheck, AnUnwrittenOutputFails) {
  EXPECT_EQ(only_problem(Flaw::leaves_last_unwritten),
            "reference() left 1 of 3 elements of 'y' unwritten (still the NaN poison; first: element 2)");
}

TEST(ReferenceCheck, ANonFiniteValueFails) {
  EXPECT_EQ(only_problem(Flaw::writes_inf), "reference() wrote 1 of 3 elements of 'acc' as NaN or Inf (first: element 0 = inf)");
}

TEST(ReferenceCheck, AWrittenInputFails) {
  EXPECT_EQ(only_problem(Flaw::writes_input),
            "reference() changed 1 of 3 elements of 'x', an input (first: element 1): it may write only output and in-place tensors");
}

TEST(ReferenceCheck, AResizedTensorFails) { EXPECT_EQ(only_problem(Flaw::resizes_output), "reference() resized 'y' from 3 to 4 values"); }

TEST(ReferenceCheck, StateKeptBetweenCallsFails) {
  const std::string problem = only_problem(Flaw::keeps_state);
  EXPECT_NE(problem.find("reference() gave other values in a second run on the same inputs for 1 of 3 elements of 'y' (first: element 0"),
            std::string::npos)
      << problem;
}

TEST(ReferenceCheck, ValuesThatDependOnTheThreadCountFail) {
  const kgate::ScopedHostThreads four(4);  // the first run's, whatever this machine has
  const std::string problem = only_problem(Flaw::depends_on_threads);
  EXPECT_NE(problem.find("reference() gave other values in a second run on the same inputs for 1 of 3 elements of 'y' (first: element 2"),
            std::string::npos)
      << problem;
  EXPECT_NE(problem.find("on one thread): it reads memory it never wrote, keeps state between calls or gives values that depend on how "
                         "its work is split over threads"),
            std::string::npos)
      << problem;
}

TEST(ReferenceCheck, ABaselineIsHeldToTheSameRules) {
  const kgate::ReferenceCheck result = check(Flaw::baseline_unwritten);
  EXPECT_EQ(only_problem(Flaw::baseline_unwritten),
            "baseline() left 1 of 3 elements of 'y' unwritten (still the NaN poison; first: element 0)");
  EXPECT_NE(result.describe().find("synthetic-square's host reference at n:3/fp32: 1 problem\n  baseline() left"), std::string::npos)
      << result.describe();
}

// What the correctness suite's host_reference cases run, on every family of kgate's own suite.
TEST(ReferenceCheck, EveryKgateFamilyPasses) {
  const kgate::Registry& registry = kgate::Registry::instance();
  ASSERT_FALSE(registry.families().empty());
  for (const kgate::Family* family : registry.families()) {
    const kgate::ReferenceCheck result = kgate::check_host_reference(*family, kgate::smallest_host_reference_shape(*family), 7);
    EXPECT_TRUE(result.passed()) << result.describe();
  }
}

}  // namespace
