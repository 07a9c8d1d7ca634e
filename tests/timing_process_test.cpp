// The sequence of timing processes (kgate/suite/timing_process.hpp): which process a run is in, and what it
// still measures, on synthetic records.
#include "kgate/suite/timing_process.hpp"

#include <gtest/gtest.h>

#include "kgate/results/repetitions.hpp"
#include "synthetic_results.hpp"

namespace {

namespace syn = kgate::synthetic;
using kgate::TimingProcess;

constexpr const char* kName = "rmsnorm/vectorized/m:4096/n:4096/bf16";

TEST(TimingProcesses, AFreshRunStartsWithTheFirstAndEachHandsOverToTheNext) {
  kgate::RunResults results = syn::run({});
  TimingProcess p = kgate::timing_process(results, 3);
  EXPECT_EQ(p.index, 0);
  EXPECT_EQ(p.count, 3);
  EXPECT_FALSE(p.last());
  kgate::mark_finished(results, p);
  EXPECT_EQ(results.context.extra.at(kgate::kTimingProcessesKey), "1/3");
  // The count handed over wins over the flag of the process it is handed to.
  p = kgate::timing_process(results, 5);
  EXPECT_EQ(p.index, 1);
  EXPECT_EQ(p.count, 3);
  kgate::mark_finished(results, p);
  p = kgate::timing_process(results, 3);
  EXPECT_TRUE(p.last());
  kgate::mark_finished(results, p);
  EXPECT_EQ(results.context.extra.at(kgate::kTimingProcessesKey), "3/3");  // what the written run says
  EXPECT_TRUE(kgate::timing_process(syn::run({}), 1).last());
}

TEST(TimingProcesses, AHandOverThatIsNotIOfNIsRefused) {
  for (const char* bad : {"3/3", "x/3", "1/", "1/3 ", "-1/3", "2"}) {
    kgate::RunResults results = syn::run({});
    results.context.extra[kgate::kTimingProcessesKey] = bad;
    EXPECT_THROW(kgate::timing_process(results, 3), std::runtime_error) << bad;
  }
}

TEST(TimingProcesses, EachTakesItsShareAndOnlyTheFirstChecksAndMeasuresBothModes) {
  kgate::SuiteOptions whole;
  whole.timing.stopping = {.min_samples = 10, .min_gpu_time_s = 0.06, .max_wall_time_s = 6, .max_samples = 1000};
  whole.timing.input_placements = 8;
  const kgate::SuiteOptions first = kgate::options_for_process(whole, {0, 3});
  EXPECT_EQ(first.timing.stopping.min_samples, 4);
  EXPECT_DOUBLE_EQ(first.timing.stopping.min_gpu_time_s, 0.02);
  EXPECT_EQ(first.timing.input_placements, 8);  // placements are not shared: each process allocates its own
  EXPECT_TRUE(first.check);
  EXPECT_TRUE(first.measures("hot", "cold"));
  const kgate::SuiteOptions third = kgate::options_for_process(whole, {2, 3});
  EXPECT_EQ(third.timing.input_placements, 8);
  EXPECT_FALSE(third.check);
  EXPECT_TRUE(third.measures("cold", "cold"));
  EXPECT_FALSE(third.measures("hot", "cold")) << "later processes add to the headline mode only";
  // One process is the whole run.
  const kgate::SuiteOptions only = kgate::options_for_process(whole, {0, 1});
  EXPECT_EQ(only.timing.stopping.min_samples, 10);
  EXPECT_EQ(only.timing.input_placements, 8);
  EXPECT_TRUE(only.check && only.measures("hot", "cold"));
}

TEST(TimingProcesses, EachProcessMeasuresEachSuccessfulBenchmarkOnce) {
  const TimingProcess first{0, 3}, second{1, 3};
  EXPECT_TRUE(kgate::due(nullptr, first, 1));
  kgate::BenchmarkRecord record = syn::benchmark(kName, {.seed = 1});
  EXPECT_FALSE(kgate::due(&record, first, 1)) << "measured by the first process already (after a restart)";
  EXPECT_TRUE(kgate::due(&record, second, 1));
  kgate::pool_repetition(record, syn::benchmark(kName, {.seed = 2}), syn::context().calibration);
  EXPECT_FALSE(kgate::due(&record, second, 1));
  // --benchmark_repetitions=2: two repetitions in each process.
  EXPECT_TRUE(kgate::due(&record, second, 2));
  // A failed or skipped benchmark keeps its verdict: it is not measured again.
  kgate::BenchmarkRecord failed = syn::benchmark(kName, {.seed = 3});
  failed.status = kgate::BenchmarkStatus::failed;
  EXPECT_FALSE(kgate::due(&failed, second, 1));
  failed.status = kgate::BenchmarkStatus::skipped;
  EXPECT_FALSE(kgate::due(&failed, second, 1));
}

TEST(TimingProcesses, TheLastProcessOfAnOddShardCountsBeforeItsTiming) {
  kgate::SuiteOptions options;
  const TimingProcess last{2, 3}, middle{1, 3};
  EXPECT_FALSE(kgate::counts_before_timing(options, last)) << "not a shard: one GPU counts after its timing";
  for (int index = 0; index < 4; ++index) {
    options.shard = kgate::ShardSpec{index, 4};
    EXPECT_EQ(kgate::counts_before_timing(options, last), index % 2 == 1) << "shard " << index << " of 4";
    EXPECT_FALSE(kgate::counts_before_timing(options, middle)) << "only the last process profiles";
  }
  options.shard = kgate::ShardSpec{1, 4};
  options.profile = false;  // --kgate_counters=trace: no pass to place
  EXPECT_FALSE(kgate::counts_before_timing(options, last));
  options.profile = true;
  options.counters = false;
  EXPECT_FALSE(kgate::counts_before_timing(options, last));
}

TEST(TimingProcesses, TheNextProcessGetsTheArgumentsGivenWithOnlyItsOwnHandOver) {
  const std::vector<std::string> given = {"kgate_bench", "--kgate_shard=1/4", "--kgate_resume=/tmp/a.json", "--kgate_handover_fd=5",
                                          "--benchmark_filter=rope"};
  EXPECT_EQ(kgate::continuation_args(given, "/tmp/b.json"),
            (std::vector<std::string>{"kgate_bench", "--kgate_shard=1/4", "--benchmark_filter=rope", "--kgate_resume=/tmp/b.json"}));
}

}  // namespace
