// Repetitions pooled into one record (repetitions.hpp), on synthetic records.
#include <gtest/gtest.h>

#include "kgate/results/repetitions.hpp"
#include "synthetic_results.hpp"

namespace {

namespace syn = kgate::synthetic;

constexpr const char* kName = "rmsnorm/vectorized/m:4096/n:4096/bf16";

TEST(Repetitions, OnlySuccessfulRecordsOfTheSameBenchmark) {
  const kgate::BenchmarkRecord a = syn::benchmark(kName, {.seed = 1});
  kgate::BenchmarkRecord b = syn::benchmark(kName, {.seed = 2});
  EXPECT_TRUE(kgate::is_repetition(a, b));
  b.headline_mode = "hot";
  EXPECT_FALSE(kgate::is_repetition(a, b));
  kgate::BenchmarkRecord failed = syn::benchmark(kName, {.seed = 3});
  failed.status = kgate::BenchmarkStatus::failed;
  EXPECT_FALSE(kgate::is_repetition(a, failed));
  EXPECT_FALSE(kgate::is_repetition(a, syn::benchmark("rmsnorm/naive/m:4096/n:4096/bf16", {})));
  kgate::BenchmarkRecord cupti = syn::benchmark(kName, {.seed = 4});
  cupti.cold->timer = "cupti";
  EXPECT_FALSE(kgate::is_repetition(a, cupti));  // a CUPTI span and an event pair are not one distribution
}

TEST(Repetitions, PoolingCuptiRecordsKeepsTheirFiguresAndDetectableChange) {
  kgate::BenchmarkRecord into = syn::benchmark(kName, {.median_s = 5e-6, .rel_noise = 0.003, .samples = 30, .seed = 1});
  kgate::BenchmarkRecord from = syn::benchmark(kName, {.median_s = 5.1e-6, .rel_noise = 0.003, .samples = 10, .seed = 2});
  for (kgate::BenchmarkRecord* r : {&into, &from}) {
    r->cold->timer = "cupti";
    r->cold->busy_median_s = r->cold->summary.median;
  }
  into.cold->event_median_s = 7e-6;
  from.cold->event_median_s = 8e-6;
  kgate::pool_repetition(into, from, syn::context().calibration);
  EXPECT_EQ(into.cold->timer, "cupti");
  EXPECT_DOUBLE_EQ(into.cold->event_median_s, (7e-6 * 30 + 8e-6 * 10) / 40);
  // Two repetitions 2% apart: no smaller change can be told from a repetition's own shift.
  EXPECT_GE(into.cold->min_detectable_change, 0.019);
  EXPECT_LT(into.cold->min_detectable_change, 0.03);
}

TEST(Repetitions, PoolingAddsSamplesCountsAndInputCopies) {
  kgate::BenchmarkRecord into = syn::benchmark(kName, {.median_s = 10e-6, .samples = 40, .clock_mhz = 1980, .seed = 1});
  kgate::BenchmarkRecord from = syn::benchmark(kName, {.median_s = 12e-6, .samples = 20, .clock_mhz = 1950, .seed = 2});
  into.cold->input_copies = 8;
  from.cold->input_copies = 8;
  into.cold->throttled_samples = 1;
  from.cold->throttled_samples = 2;
  from.cold->rested = true;
  from.cold->target_met = false;
  from.cold->stop_reason = "time-cap";
  from.correct = false;
  from.correctness_detail = "rel_l2 0.5";
  kgate::pool_repetition(into, from, syn::context().calibration);

  ASSERT_EQ(into.cold->samples_s.size(), 60u);
  EXPECT_EQ(into.cold->summary.count, 60);
  EXPECT_EQ(into.cold->input_copies, 16);  // two instances, each with its own allocations
  EXPECT_EQ(into.cold->throttled_samples, 3);
  EXPECT_TRUE(into.cold->rested);
  EXPECT_FALSE(into.cold->target_met);
  EXPECT_EQ(into.cold->stop_reason, "target-met+time-cap");
  EXPECT_DOUBLE_EQ(into.cold->sm_clock_mhz, (1980.0 * 40 + 1950.0 * 20) / 60);
  EXPECT_EQ(into.correct, std::optional<bool>(false));  // a wrong result in any repetition is the record's
  EXPECT_EQ(into.correctness_detail, "rel_l2 0.5");
  EXPECT_DOUBLE_EQ(into.bytes_per_s, into.min_bytes / into.cold->summary.median);  // derived figures follow the pooled median
  // Each repetition's own median stays known, in pooling order.
  ASSERT_EQ(into.cold->repetition_medians_s.size(), 2u);
  EXPECT_NEAR(into.cold->repetition_medians_s[0], 10e-6, 0.2e-6);
  EXPECT_NEAR(into.cold->repetition_medians_s[1], 12e-6, 0.2e-6);
}

TEST(Repetitions, AnUncheckedRepetitionKeepsTheCheckedResult) {
  // Later processes of a run do not check outputs again (kgate_bench --kgate_processes).
  kgate::BenchmarkRecord into = syn::benchmark(kName, {.seed = 1});
  kgate::BenchmarkRecord unchecked = syn::benchmark(kName, {.seed = 2});
  unchecked.correct.reset();
  unchecked.correctness_detail = "not checked (--kgate_check=off)";
  kgate::pool_repetition(into, unchecked, syn::context().calibration);
  EXPECT_EQ(into.correct, std::optional<bool>(true));
  EXPECT_EQ(into.correctness_detail, "rel_l2 1e-4");
  // And a first repetition too large to check keeps saying so.
  into.correct.reset();
  into.correctness_detail = "not checked: the instance is larger than the 16 MiB checked in benchmarks";
  kgate::pool_repetition(into, unchecked, syn::context().calibration);
  EXPECT_EQ(into.correctness_detail, "not checked: the instance is larger than the 16 MiB checked in benchmarks");
}

TEST(Repetitions, TheTraceAndCountersComeFromTheRepetitionThatHasThem) {
  // A benchmark whose last round another shard timed: that shard's record has neither the trace
  // (the first process's) nor the counters (its own shard's last process counts them).
  kgate::BenchmarkRecord taken = syn::benchmark(kName, {.seed = 1});
  kgate::BenchmarkRecord own = syn::benchmark(kName, {.seed = 2});
  own.kernels.emplace_back().name = "rmsnorm_vectorized_kernel";
  own.metrics = {{"dram__bytes_read.sum", 3.3e7}};
  kgate::pool_repetition(taken, own, syn::context().calibration);
  ASSERT_EQ(taken.kernels.size(), 1u);
  EXPECT_EQ(taken.kernels[0].name, "rmsnorm_vectorized_kernel");
  EXPECT_EQ(taken.metrics.at("dram__bytes_read.sum"), 3.3e7);
  // Why there are none, likewise; and what a record has is never replaced.
  kgate::BenchmarkRecord none = syn::benchmark(kName, {.seed = 3}), unavailable = syn::benchmark(kName, {.seed = 4});
  unavailable.metrics_unavailable = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  kgate::pool_repetition(none, unavailable, syn::context().calibration);
  EXPECT_EQ(none.metrics_unavailable, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  kgate::pool_repetition(own, unavailable, syn::context().calibration);
  EXPECT_EQ(own.metrics.size(), 1u);
  EXPECT_EQ(own.metrics_unavailable, "");
}

}  // namespace
