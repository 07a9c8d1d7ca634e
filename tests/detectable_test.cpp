// The minimum detectable change of a record: each of its three limits, on synthetic samples.
#include "kgate/results/detectable.hpp"

#include <gtest/gtest.h>

#include "kgate/base/statistics.hpp"
#include "tests/synthetic_results.hpp"

namespace {

namespace syn = kgate::synthetic;

TEST(NormalQuantile, KnownValues) {
  EXPECT_NEAR(kgate::normal_quantile(0.5), 0, 1e-12);
  EXPECT_NEAR(kgate::normal_quantile(0.975), 1.959963984540054, 1e-9);
  EXPECT_NEAR(kgate::normal_quantile(0.995), 2.5758293035489, 1e-9);
  EXPECT_NEAR(kgate::normal_quantile(0.005), -2.5758293035489, 1e-9);
  EXPECT_THROW(kgate::normal_quantile(0), std::invalid_argument);
  EXPECT_THROW(kgate::normal_quantile(1), std::invalid_argument);
}

TEST(MedianInterval, OrderStatisticsAroundTheMedian) {
  std::vector<double> values;
  for (int i = 1; i <= 100; ++i) values.push_back(i);
  // n = 100, 95%: ranks 50 -/+ 9.8 -> the 40th and the 60th value (1-based: floor(40.2), ceil(59.8) + 1).
  const kgate::MedianInterval ci = kgate::median_interval(values, 0.95);
  EXPECT_EQ(ci.low, 40);
  EXPECT_EQ(ci.high, 61);
  const kgate::MedianInterval wider = kgate::median_interval(values, 0.99);
  EXPECT_LT(wider.low, ci.low);
  EXPECT_GT(wider.high, ci.high);
  // Too few samples for any interval inside them: the whole sample.
  const std::vector<double> three = {3, 1, 2};
  EXPECT_EQ(kgate::median_interval(three, 0.99).low, 1);
  EXPECT_EQ(kgate::median_interval(three, 0.99).high, 3);
  EXPECT_THROW(kgate::median_interval(std::vector<double>{}, 0.99), std::invalid_argument);
}

TEST(DetectableChange, WithinGrowsWithNoiseAndShrinksWithSamples) {
  const auto within = [](double noise, int samples) {
    return kgate::detectable_change(syn::timing({.median_s = 5e-6, .rel_noise = noise, .samples = samples, .seed = 3}), 0).within;
  };
  // 60 samples of 1% noise: the median's 99% interval is about +/-0.45%, sqrt(2) of it about 0.6%.
  EXPECT_GT(within(0.01, 60), 0.003);
  EXPECT_LT(within(0.01, 60), 0.012);
  EXPECT_GT(within(0.03, 60), 2 * within(0.01, 60));
  EXPECT_LT(within(0.01, 600), within(0.01, 60) / 2);
}

TEST(DetectableChange, BetweenIsTheSpreadOfTheRepetitionMedians) {
  kgate::TimingRecord record = syn::timing({.median_s = 5e-6, .rel_noise = 0.001, .seed = 4});
  EXPECT_EQ(kgate::detectable_change(record, 0).between, 0);  // one repetition: no spread to see
  record.repetition_medians_s = {5.00e-6, 5.05e-6, 4.99e-6};
  const kgate::DetectableChange change = kgate::detectable_change(record, 0);
  EXPECT_NEAR(change.between, 0.06e-6 / kgate::median(record.samples_s), 1e-9);
  EXPECT_DOUBLE_EQ(change.fraction(), change.between);  // it dominates 0.1% noise
}

TEST(DetectableChange, ResolutionIsOneTickPerLaunch) {
  kgate::TimingRecord record = syn::timing({.median_s = 4e-6, .rel_noise = 0, .seed = 5});
  EXPECT_NEAR(kgate::detectable_change(record, 32e-9).resolution, 0.008, 1e-6);
  record.launches_per_sample = 4;  // a hot replay of 4 launches divides the tick too
  EXPECT_NEAR(kgate::detectable_change(record, 32e-9).resolution, 0.002, 1e-6);
  EXPECT_EQ(kgate::detectable_change(kgate::TimingRecord{}, 32e-9).fraction(), 0);
}

TEST(DetectableChange, CpuTimedBetweenIsTheSpreadOfItsRepetitions) {
  // Plain Google Benchmark: one sample per repetition, 100 to 120 us as a loaded host spreads them.
  kgate::TimingRecord record;
  for (int i = 0; i <= 20; ++i) record.samples_s.push_back((100 + i) * 1e-6);
  kgate::BenchmarkRecord benchmark;
  benchmark.cold = record;
  kgate::note_detectable_change(benchmark, 0);
  EXPECT_EQ(benchmark.cold->min_detectable_change, 0);  // event-timed: the fixed minimum change is theirs
  benchmark.cold->timer = record.timer = "cpu";
  const kgate::DetectableChange change = kgate::detectable_change(record, 0);
  EXPECT_NEAR(change.between, (118e-6 - 102e-6) / 110e-6, 1e-9);  // p10 to p90 of the repetitions
  EXPECT_EQ(change.fraction(), change.between);
  kgate::note_detectable_change(benchmark, 0);
  EXPECT_DOUBLE_EQ(benchmark.cold->min_detectable_change, change.fraction());
  EXPECT_TRUE(kgate::judged_by_detectable_change("cpu"));
  EXPECT_TRUE(kgate::judged_by_detectable_change("cupti"));
  EXPECT_FALSE(kgate::judged_by_detectable_change("events"));
}

}  // namespace
