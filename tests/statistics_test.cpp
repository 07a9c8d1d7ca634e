#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "kgate/base/random.hpp"
#include "kgate/base/statistics.hpp"
#include "tests/normal_deviates.hpp"

namespace {

using kgate::synthetic::normal_deviate;

std::vector<double> noisy_timings(double center, double rel_noise, std::size_t count, std::uint64_t seed) {
  std::vector<double> samples(count);
  for (std::size_t i = 0; i < count; ++i) samples[i] = center * (1 + rel_noise * normal_deviate(seed, i));
  return samples;
}

const std::vector<double> kUnsorted = {3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0};

}  // namespace

// Expected values from NumPy 2.4.6 np.percentile(kUnsorted, 100 * q) (method="linear").
TEST(Statistics, PercentileInterpolatesLikeNumPy) {
  EXPECT_DOUBLE_EQ(kgate::percentile(kUnsorted, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(kgate::percentile(kUnsorted, 0.1), 1.0);
  EXPECT_DOUBLE_EQ(kgate::percentile(kUnsorted, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(kgate::percentile(kUnsorted, 0.5), 3.5);
  EXPECT_DOUBLE_EQ(kgate::percentile(kUnsorted, 0.9), 6.9);
  EXPECT_DOUBLE_EQ(kgate::percentile(kUnsorted, 1.0), 9.0);
}

TEST(Statistics, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(kgate::median(std::vector<double>{5.0, 1.0, 3.0}), 3.0);
  EXPECT_DOUBLE_EQ(kgate::median(std::vector<double>{4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(kgate::median(std::vector<double>{7.0}), 7.0);
}

TEST(Statistics, EmptyInputOrBadQuantileIsAnError) {
  const std::vector<double> empty;
  EXPECT_THROW(kgate::percentile(empty, 0.5), std::invalid_argument);
  EXPECT_THROW(kgate::median(empty), std::invalid_argument);
  EXPECT_THROW(kgate::summarize(empty), std::invalid_argument);
  EXPECT_THROW(kgate::percentile(kUnsorted, -0.01), std::invalid_argument);
  EXPECT_THROW(kgate::percentile(kUnsorted, 1.01), std::invalid_argument);
  EXPECT_THROW(kgate::percentile(kUnsorted, NAN), std::invalid_argument);
}

// Mean and stddev from NumPy 2.4.6 np.mean / np.std(ddof=1).
TEST(Statistics, SummaryOfKnownSamples) {
  const auto s = kgate::summarize(kUnsorted);
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 3.875);
  EXPECT_DOUBLE_EQ(s.stddev, 2.748376143938713);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.p10, 1.0);
  EXPECT_DOUBLE_EQ(s.p90, 6.9);
  EXPECT_DOUBLE_EQ(s.rel_stddev(), 2.748376143938713 / 3.875);
}

TEST(Statistics, SummaryOfOneSampleHasNoSpread) {
  const auto s = kgate::summarize(std::vector<double>{2e-6});
  EXPECT_EQ(s.count, 1u);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.median, 2e-6);
  EXPECT_EQ(s.p10, 2e-6);
  EXPECT_EQ(s.p90, 2e-6);
}

TEST(Statistics, StddevSurvivesTimingsThatAgreeToManyDigits) {
  // A naive sum of squares loses every digit of the spread at this offset.
  const std::vector<double> samples = {1.0 + 1e-9, 1.0 - 1e-9, 1.0 + 1e-9, 1.0 - 1e-9};
  EXPECT_NEAR(kgate::summarize(samples).stddev, 2e-9 / std::sqrt(3.0), 1e-15);
}

// Expected values from SciPy 1.17.1
// mannwhitneyu(a, b, alternative="two-sided", method="asymptotic"): statistic (U of a), pvalue.
TEST(MannWhitney, MatchesSciPyWithoutTies) {
  const std::vector<double> a = {1.1, 2.3, 3.5, 4.2, 5.0, 6.7};
  const std::vector<double> b = {2.0, 7.1, 8.3, 9.4, 10.2};
  const auto r = kgate::mann_whitney_u(a, b);
  EXPECT_DOUBLE_EQ(r.u, 5.0);
  EXPECT_NEAR(r.p_value, 0.0828374251588063, 1e-12);
  EXPECT_LT(r.z, 0) << "a tends to be smaller";
}

TEST(MannWhitney, MatchesSciPyWithTies) {
  const std::vector<double> a = {1, 2, 2, 3, 3, 3, 4};
  const std::vector<double> b = {3, 3, 4, 4, 5, 5, 6, 7};
  const auto ab = kgate::mann_whitney_u(a, b);
  EXPECT_DOUBLE_EQ(ab.u, 6.0);
  EXPECT_NEAR(ab.p_value, 0.010834422131524878, 1e-12);
  const auto ba = kgate::mann_whitney_u(b, a);
  EXPECT_DOUBLE_EQ(ba.u, 50.0);  // U_a + U_b = n_a * n_b
  EXPECT_NEAR(ba.p_value, ab.p_value, 1e-15);
  EXPECT_DOUBLE_EQ(ba.z, -ab.z);
}

TEST(MannWhitney, MatchesSciPyWithMostlyTies) {
  const auto r = kgate::mann_whitney_u(std::vector<double>{1, 1, 2}, std::vector<double>{1, 2, 2});
  EXPECT_DOUBLE_EQ(r.u, 3.0);
  EXPECT_NEAR(r.p_value, 0.6192567541768621, 1e-12);
}

TEST(MannWhitney, IdenticalAllEqualSamplesGiveOneNotNaN) {
  const std::vector<double> same(20, 1.5e-5);
  const auto r = kgate::mann_whitney_u(same, same);
  EXPECT_EQ(r.p_value, 1.0);
  EXPECT_EQ(r.z, 0.0);
  EXPECT_DOUBLE_EQ(r.u, 200.0);
}

TEST(MannWhitney, FewerThanTwoSamplesOnASideGiveOne) {
  const std::vector<double> many = {1, 2, 3, 4, 5};
  EXPECT_EQ(kgate::mann_whitney_u(std::vector<double>{10}, many).p_value, 1.0);
  EXPECT_EQ(kgate::mann_whitney_u(many, std::vector<double>{}).p_value, 1.0);
}

TEST(MannWhitney, SeparatesAFivePercentShiftInNoisyTimings) {
  const auto slow = noisy_timings(1.05e-5, 0.02, 100, 1);
  const auto fast = noisy_timings(1.00e-5, 0.02, 100, 2);
  EXPECT_LT(kgate::mann_whitney_u(slow, fast).p_value, 1e-6);
  EXPECT_GT(kgate::mann_whitney_u(fast, noisy_timings(1.00e-5, 0.02, 100, 3)).p_value, 0.01);
}

TEST(MedianRatioInterval, IsTheMedianRatioWithOrderStatisticErrors) {
  const auto a = noisy_timings(2e-5, 0.05, 50, 11);
  const auto b = noisy_timings(1e-5, 0.05, 60, 12);
  const auto interval = kgate::median_ratio_interval(a, b, 0.95);
  EXPECT_DOUBLE_EQ(interval.ratio, kgate::median(a) / kgate::median(b));
  EXPECT_EQ(interval.confidence, 0.95);
  // The relative errors, from each side's own order-statistic interval, combined on the log scale.
  const double z = kgate::normal_quantile(0.975);
  const auto relative_error = [&](const std::vector<double>& s) {
    const auto m = kgate::median_interval(s, 0.95);
    return (m.high - m.low) / (2 * z * kgate::median(s));
  };
  const double reach = z * std::hypot(relative_error(a), relative_error(b));
  EXPECT_NEAR(interval.low, interval.ratio * std::exp(-reach), 1e-12);
  EXPECT_NEAR(interval.high, interval.ratio * std::exp(reach), 1e-12);
  EXPECT_LT(interval.low, interval.ratio);
  EXPECT_GT(interval.high, interval.ratio);
}

TEST(MedianRatioInterval, CoversTheTrueRatioAtAboutItsConfidence) {
  // 200 independent experiments with a true median ratio of 1.2: a 95% interval should miss about
  // ten times; 20 or more misses (or none at all: an interval far too wide) would be a bad method.
  int covered = 0;
  for (std::uint64_t experiment = 0; experiment < 200; ++experiment) {
    const auto a = noisy_timings(1.2e-5, 0.05, 101, 1000 + 2 * experiment);
    const auto b = noisy_timings(1.0e-5, 0.05, 101, 1001 + 2 * experiment);
    const auto interval = kgate::median_ratio_interval(a, b, 0.95);
    covered += interval.low <= 1.2 && 1.2 <= interval.high;
    EXPECT_LT(interval.high - interval.low, 0.1) << "experiment " << experiment;
  }
  EXPECT_GE(covered, 180);
  EXPECT_LT(covered, 200);
}

TEST(MedianRatioInterval, HigherConfidenceGivesAWiderInterval) {
  const auto a = noisy_timings(1.1e-5, 0.05, 80, 21);
  const auto b = noisy_timings(1.0e-5, 0.05, 80, 22);
  const auto narrow = kgate::median_ratio_interval(a, b, 0.5);
  const auto wide = kgate::median_ratio_interval(a, b, 0.99);
  EXPECT_LT(wide.low, narrow.low);
  EXPECT_GT(wide.high, narrow.high);
}

TEST(MedianRatioInterval, ShrinksWithMoreSamples) {
  const auto few = kgate::median_ratio_interval(noisy_timings(1e-5, 0.05, 100, 31), noisy_timings(1e-5, 0.05, 100, 32));
  const auto many = kgate::median_ratio_interval(noisy_timings(1e-5, 0.05, 10000, 31), noisy_timings(1e-5, 0.05, 10000, 32));
  EXPECT_LT((many.high - many.low) * 5, few.high - few.low);  // sqrt(100) = 10 times narrower, give or take
}

TEST(MedianRatioInterval, IdenticalConstantSamplesGiveAPointInterval) {
  const std::vector<double> same(10, 3e-6);
  const auto interval = kgate::median_ratio_interval(same, same);
  EXPECT_EQ(interval.ratio, 1.0);
  EXPECT_EQ(interval.low, 1.0);
  EXPECT_EQ(interval.high, 1.0);
}

TEST(MedianRatioInterval, BadInputIsAnError) {
  const std::vector<double> some = {1, 2, 3};
  const std::vector<double> empty;
  EXPECT_THROW(kgate::median_ratio_interval(empty, some), std::invalid_argument);
  EXPECT_THROW(kgate::median_ratio_interval(some, empty), std::invalid_argument);
  EXPECT_THROW(kgate::median_ratio_interval(some, std::vector<double>{0, 0, 1}), std::invalid_argument);
  EXPECT_THROW(kgate::median_ratio_interval(std::vector<double>{-1, -2, 3}, some), std::invalid_argument);
  EXPECT_THROW(kgate::median_ratio_interval(some, some, 1.0), std::invalid_argument);
  EXPECT_THROW(kgate::median_ratio_interval(some, some, 0.0), std::invalid_argument);
}
