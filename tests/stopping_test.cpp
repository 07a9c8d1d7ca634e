#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <numbers>

#include "kgate/base/random.hpp"
#include "kgate/base/statistics.hpp"
#include "kgate/measure/stopping.hpp"
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

TEST(Stopping, ConvergenceIsJudgedFromItsMinimumSampleCount) {
  // Steady 5% noise and no minimum GPU time: the rule stops at its own minimum, not before.
  for (const int minimum : {64, 22}) {
    StoppingCriterion criterion({.min_samples = 4, .min_gpu_time_s = 0, .convergence_min_samples = minimum});
    EXPECT_EQ(run_until_stop(criterion, noisy_millisecond), StopReason::noise_converged) << minimum;
    EXPECT_GE(criterion.samples(), static_cast<std::size_t>(minimum));
    EXPECT_LT(criterion.samples(), 2u * static_cast<std::size_t>(minimum));
  }
}

TEST(Stopping, StreamThatGetsQuieterMeetsTheTarget) {
  // 20 noisy warm-up samples, then a steady kernel: the relative stddev falls as 1/sqrt(n), which
  // is 29% per doubling, so the noise rule must keep sampling until the target (~2000 samples).
  StoppingCriterion criterion;
  const auto settling = [](std::size_t i) { return 1e-3 * (1 + (i < 20 ? 0.05 : 1e-4) * normal_deviate(3, i)); };
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

TEST(Stopping, ProcessesShareTheBudget) {
  const kgate::StoppingOptions whole{
      .min_samples = 10, .min_gpu_time_s = 0.05, .max_wall_time_s = 5, .target_rel_stddev = 0.005, .max_samples = 1000};
  const kgate::StoppingOptions third = kgate::share_of_budget(whole, 3);
  EXPECT_EQ(third.min_samples, 4);  // rounded up: three processes together take at least the whole
  EXPECT_EQ(third.max_samples, 334);
  EXPECT_EQ(third.convergence_min_samples, 22);
  EXPECT_DOUBLE_EQ(third.min_gpu_time_s, 0.05 / 3);
  EXPECT_DOUBLE_EQ(third.max_wall_time_s, 5.0 / 3);
  EXPECT_DOUBLE_EQ(third.target_rel_stddev, 0.005);  // each process aims at the same noise
  const kgate::StoppingOptions one = kgate::share_of_budget(whole, 1);
  EXPECT_EQ(one.min_samples, 10);
  EXPECT_EQ(one.max_samples, 1000);
  EXPECT_DOUBLE_EQ(one.min_gpu_time_s, 0.05);
  EXPECT_EQ(kgate::share_of_budget({.min_samples = 1, .max_samples = 1}, 4).max_samples, 1);  // never below one sample
  EXPECT_THROW(kgate::share_of_budget(whole, 0), std::invalid_argument);
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

using kgate::ClockGovernor;

TEST(ClockGovernor, AtFullClockEveryBatchIsKeptWithoutRest) {
  ClockGovernor governor(1980, {});
  for (double mhz : {1980.0, 1965.0, 1921.0, 2100.0, 0.0}) {  // 0: unknown clock
    const kgate::BatchVerdict v = governor.after_batch(mhz, 2e-3, 8);
    EXPECT_TRUE(v.keep) << mhz;
    EXPECT_EQ(v.idle_s, 0) << mhz;
  }
  EXPECT_FALSE(governor.resting());
  EXPECT_EQ(governor.throttled_samples(), 0);
  EXPECT_EQ(governor.power_limited_samples(), 0);
}

TEST(ClockGovernor, BelowFullClockTheBatchIsDroppedAndSamplingRestsFromThenOn) {
  ClockGovernor governor(1980, {.threshold = 0.75, .backoff_s = 0.05, .full_clock = 0.97, .rest_ratio = 1.0});
  EXPECT_TRUE(governor.after_batch(1950, 2e-3, 4).keep);
  const kgate::BatchVerdict limited = governor.after_batch(1700, 2e-3, 4);  // 86%: power-managed
  EXPECT_FALSE(limited.keep);
  EXPECT_DOUBLE_EQ(limited.idle_s, 0.05);  // the back-off, to let the board's power budget recover
  EXPECT_TRUE(governor.resting());
  EXPECT_EQ(governor.power_limited_samples(), 4);
  EXPECT_EQ(governor.throttled_samples(), 0);
  // Resting: every batch is followed by its own GPU time of idling, at full clock or not (above
  // the throttle threshold resting is all the harness can do).
  const kgate::BatchVerdict rested = governor.after_batch(1970, 3e-3, 4);
  EXPECT_TRUE(rested.keep);
  EXPECT_DOUBLE_EQ(rested.idle_s, 3e-3);
  const kgate::BatchVerdict still_low = governor.after_batch(1800, 2e-3, 4);
  EXPECT_TRUE(still_low.keep);
  EXPECT_DOUBLE_EQ(still_low.idle_s, 2e-3);
  EXPECT_EQ(governor.power_limited_samples(), 4);
}

TEST(ClockGovernor, ThrottledBatchesAreDroppedWithTheBackoffAndCountedApart) {
  ClockGovernor governor(1980, {.threshold = 0.75, .backoff_s = 0.05, .full_clock = 0.97, .rest_ratio = 2.0});
  const kgate::BatchVerdict throttled = governor.after_batch(1000, 1e-3, 3);
  EXPECT_FALSE(throttled.keep);
  EXPECT_DOUBLE_EQ(throttled.idle_s, 0.05);
  EXPECT_EQ(governor.throttled_samples(), 3);
  EXPECT_FALSE(governor.resting());     // throttling is not a power-budget question; it backs off only
  governor.after_batch(1800, 1e-3, 2);  // now resting
  const kgate::BatchVerdict throttled_while_resting = governor.after_batch(1000, 1e-3, 3);
  EXPECT_FALSE(throttled_while_resting.keep);
  EXPECT_DOUBLE_EQ(throttled_while_resting.idle_s, 0.05 + 2e-3);
  EXPECT_EQ(governor.throttled_samples(), 6);
  EXPECT_EQ(governor.power_limited_samples(), 2);
}

TEST(ClockGovernor, RestRatioZeroKeepsEveryBatchAboveTheThreshold) {
  ClockGovernor governor(1980, {.threshold = 0.75, .backoff_s = 0.05, .full_clock = 0.97, .rest_ratio = 0});
  for (double mhz : {1700.0, 1600.0, 1500.0}) EXPECT_TRUE(governor.after_batch(mhz, 2e-3, 4).keep) << mhz;
  EXPECT_FALSE(governor.resting());
  EXPECT_EQ(governor.after_batch(1600, 2e-3, 4).idle_s, 0);
}

TEST(ClockGovernor, UnknownDefaultClockNeverDropsOrRests) {
  ClockGovernor governor(0, {});
  const kgate::BatchVerdict v = governor.after_batch(1000, 2e-3, 4);
  EXPECT_TRUE(v.keep);
  EXPECT_EQ(v.idle_s, 0);
}

TEST(ClockGovernor, OptionsOutsideTheirRangeAreErrors) {
  EXPECT_THROW(ClockGovernor(1980, {.threshold = 1.5}), std::invalid_argument);
  EXPECT_THROW(ClockGovernor(1980, {.threshold = 0.75, .backoff_s = -1}), std::invalid_argument);
  EXPECT_THROW(ClockGovernor(1980, {.threshold = 0.75, .backoff_s = 0.05, .full_clock = 2}), std::invalid_argument);
  EXPECT_THROW(ClockGovernor(1980, {.threshold = 0.75, .backoff_s = 0.05, .full_clock = 0.97, .rest_ratio = NAN}), std::invalid_argument);
}
