#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <numbers>

#include "kgate/random.hpp"
#include "kgate/statistics.hpp"
#include "kgate/stopping.hpp"
#include "tests/normal_deviates.hpp"

using kgate::StopReason;
using kgate::StoppingCriterion;
using kgate::StoppingOptions;

namespace {

using kgate::synthetic::normal_deviate;

// The timing loop as the bench runs it: one sample, then a check. Wall time runs at twice the GPU
// time, as launch overhead and the clock readings between samples make it.
StopReason run_until_stop(StoppingCriterion& criterion, const std::function<double(std::size_t)>& sample_s) {
  StopReason reason = StopReason::none;
  for (std::size_t i = 0; reason == StopReason::none; ++i) {
    criterion.add_sample(sample_s(i));
    reason = criterion.check(2 * criterion.gpu_time_s());
  }
  return reason;
}

double noisy_millisecond(std::size_t i) { return 1e-3 * (1 + 0.05 * normal_deviate(7, i)); }

}  // namespace

TEST(Stopping, ConstantSamplesStopAtMinSamplesOnceMinTimeIsReached) {
  StoppingCriterion fast_enough({.min_samples = 10, .min_gpu_time_s = 0.5});
  EXPECT_EQ(run_until_stop(fast_enough, [](std::size_t) { return 0.1; }), StopReason::target_met);
  EXPECT_EQ(fast_enough.samples(), 10u);  // 0.5 s was reached after 5

  StoppingCriterion needs_time({.min_samples = 10, .min_gpu_time_s = 0.5});
  EXPECT_EQ(run_until_stop(needs_time, [](std::size_t) { return 0x1.0p-6; }), StopReason::target_met);
  EXPECT_EQ(needs_time.samples(), 32u);  // 32 x 2^-6 s = 0.5 s exactly
  EXPECT_TRUE(needs_time.target_met());
  EXPECT_EQ(needs_time.rel_stddev(), 0.0);
}

TEST(Stopping, MinGpuTimeHoldsWithTinySamples) {
  StoppingCriterion criterion({.min_samples = 10, .min_gpu_time_s = 0x1.0p-10});
  for (int i = 0; i < 1023; ++i) {
    criterion.add_sample(0x1.0p-20);  // about a microsecond
    ASSERT_EQ(criterion.check(0), StopReason::none) << "after " << criterion.samples() << " samples";
  }
  criterion.add_sample(0x1.0p-20);
  EXPECT_EQ(criterion.check(0), StopReason::target_met);
  EXPECT_EQ(criterion.gpu_time_s(), 0x1.0p-10);
}

TEST(Stopping, NoisyStreamNeverMeetsATightTarget) {
  StoppingCriterion criterion;  // 0.5% target against 5% noise
  const StopReason reason = run_until_stop(criterion, noisy_millisecond);
  EXPECT_TRUE(reason == StopReason::noise_converged || reason == StopReason::time_cap) << to_string(reason);
  EXPECT_FALSE(criterion.target_met());
  EXPECT_NEAR(criterion.rel_stddev(), 0.05, 0.01);
  EXPECT_GE(criterion.gpu_time_s(), 0.5);
  // The noise is steady from the start, so the rule stops it as soon as the minimums allow,
  // long before the 15 s cap.
  EXPECT_EQ(reason, StopReason::noise_converged);
  EXPECT_LT(criterion.samples(), 1000u);
}

TEST(Stopping, StreamThatGetsQuieterMeetsTheTarget) {
  // 20 noisy warm-up samples, then a steady kernel: the relative stddev falls as 1/sqrt(n), which
  // is 29% per doubling, so the noise rule must keep sampling until the target (~2000 samples).
  StoppingCriterion criterion;
  const auto settling = [](std::size_t i) {
    return 1e-3 * (1 + (i < 20 ? 0.05 : 1e-4) * normal_deviate(3, i));
  };
  EXPECT_EQ(run_until_stop(criterion, settling), StopReason::target_met);
  EXPECT_TRUE(criterion.target_met());
  EXPECT_LE(criterion.rel_stddev(), 0.005);
  EXPECT_GT(criterion.samples(), 500u) << "cut short as soon as the 0.5 s minimum allowed";
}

TEST(Stopping, TimeCapStopsEvenBeforeTheMinimums) {
  StoppingCriterion criterion({.min_gpu_time_s = 100.0, .max_wall_time_s = 15.0});
  criterion.add_sample(1e-3);
  EXPECT_EQ(criterion.check(14.9), StopReason::none);
  EXPECT_EQ(criterion.check(15.0), StopReason::time_cap);

  StoppingCriterion noisy({.min_gpu_time_s = 100.0, .max_wall_time_s = 15.0});
  EXPECT_EQ(run_until_stop(noisy, noisy_millisecond), StopReason::time_cap);
  EXPECT_FALSE(noisy.target_met());
}

TEST(Stopping, SampleCapStopsEvenBeforeTheMinimums) {
  StoppingCriterion criterion({.min_samples = 10, .max_samples = 5});
  EXPECT_EQ(run_until_stop(criterion, noisy_millisecond), StopReason::sample_cap);
  EXPECT_EQ(criterion.samples(), 5u);
  EXPECT_EQ(criterion.samples_s().size(), 5u);
  EXPECT_FALSE(criterion.target_met()) << "5 samples are fewer than min_samples";
}

TEST(Stopping, TargetIsNotClaimedOnFewerThanMinSamples) {
  StoppingCriterion criterion({.min_samples = 10});
  for (int i = 0; i < 9; ++i) criterion.add_sample(1e-3);
  EXPECT_FALSE(criterion.target_met());
  criterion.add_sample(1e-3);
  EXPECT_TRUE(criterion.target_met());
}

TEST(Stopping, RunningStatisticsAgreeWithTheSummary) {
  StoppingCriterion criterion({.min_gpu_time_s = 1e9, .max_wall_time_s = 1e9});
  for (std::size_t i = 0; i < 5000; ++i) criterion.add_sample(1.0 + 1e-6 * normal_deviate(5, i));
  const auto summary = kgate::summarize(criterion.samples_s());
  EXPECT_NEAR(criterion.rel_stddev(), summary.rel_stddev(), 1e-9 * summary.rel_stddev());
  EXPECT_NEAR(criterion.gpu_time_s(), summary.mean * 5000, 1e-9);
}

TEST(Stopping, BadSamplesAndOptionsAreErrors) {
  StoppingCriterion criterion;
  EXPECT_THROW(criterion.add_sample(NAN), std::invalid_argument);
  EXPECT_THROW(criterion.add_sample(-1e-6), std::invalid_argument);
  EXPECT_THROW(criterion.add_sample(INFINITY), std::invalid_argument);
  EXPECT_EQ(criterion.samples(), 0u);
  EXPECT_THROW(StoppingCriterion({.max_samples = 0}), std::invalid_argument);
  EXPECT_THROW(StoppingCriterion({.target_rel_stddev = -0.1}), std::invalid_argument);
}

TEST(Stopping, ReasonNames) {
  EXPECT_EQ(kgate::to_string(StopReason::none), "none");
  EXPECT_EQ(kgate::to_string(StopReason::target_met), "target-met");
  EXPECT_EQ(kgate::to_string(StopReason::noise_converged), "noise-converged");
  EXPECT_EQ(kgate::to_string(StopReason::time_cap), "time-cap");
  EXPECT_EQ(kgate::to_string(StopReason::sample_cap), "sample-cap");
}

TEST(Throttle, BelowThresholdOfTheDefaultClockIsThrottled) {
  const kgate::ThrottleOptions options;  // 75%
  EXPECT_FALSE(kgate::is_throttled(1980, 1980, options));
  EXPECT_FALSE(kgate::is_throttled(1485, 1980, options));  // exactly 75%
  EXPECT_TRUE(kgate::is_throttled(1484, 1980, options));
  EXPECT_FALSE(kgate::is_throttled(2100, 1980, options));  // boost above the default
  EXPECT_TRUE(kgate::is_throttled(1700, 1980, {.threshold = 0.9}));
}

TEST(Throttle, UnknownClocksAreNeverThrottled) {
  EXPECT_FALSE(kgate::is_throttled(0, 1980, {}));
  EXPECT_FALSE(kgate::is_throttled(1000, 0, {}));
  EXPECT_FALSE(kgate::is_throttled(0, 0, {}));
  EXPECT_FALSE(kgate::is_throttled(NAN, 1980, {}));
}
