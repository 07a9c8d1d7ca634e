// The CPU side of kgate's CUPTI clients, on synthetic records made here (no GPU, no CUPTI): how a
// trace folds its launches (fold_launches, what KernelTrace::stop() returns) and what the timer
// takes from each timed call's records (sample_times, after CallActivity::stop()).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kgate/measure/call_activity.hpp"
#include "kgate/measure/kernel_trace.hpp"

namespace {

constexpr double kNs = 1e-9;

kgate::KernelLaunch synthetic_launch(const std::string& name, int grid_x, std::uint32_t correlation, std::uint64_t start_ns,
                                     std::uint64_t end_ns) {
  kgate::KernelLaunch launch;
  launch.record.name = name;
  launch.record.grid[0] = grid_x;
  launch.record.grid[1] = launch.record.grid[2] = 1;
  launch.record.block[0] = 128;
  launch.record.block[1] = launch.record.block[2] = 1;
  launch.record.launches = 1;
  if (end_ns > start_ns) launch.record.duration_s = static_cast<double>(end_ns - start_ns) * kNs;
  launch.correlation_id = correlation;
  launch.start_ns = start_ns;
  launch.end_ns = end_ns;
  return launch;
}

TEST(FoldLaunches, IdenticalLaunchesBecomeOneRecordInLaunchOrder) {
  const std::string copy = "_Z4copyPKfPfm";
  // Given out of order: the correlation id (the launching call) orders them, then the start (the
  // kernels of one graph launch share an id).
  const std::vector<kgate::KernelRecord> records = kgate::fold_launches({
      synthetic_launch("scale", 64, 3, 900, 1000), synthetic_launch(copy, 1024, 4, 1100, 1200), synthetic_launch(copy, 1024, 2, 300, 700),
      synthetic_launch(copy, 512, 2, 200, 250), synthetic_launch(copy, 1024, 1, 100, 200),
      synthetic_launch(copy, 1024, 5, 1300, 1300),  // CUPTI could not time it: counted, not in the median
  });
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].name, copy);
  EXPECT_EQ(records[0].demangled, "copy(float const*, float*, unsigned long)");
  EXPECT_EQ(records[0].grid[0], 1024);
  EXPECT_EQ(records[0].launches, 4);
  EXPECT_NEAR(records[0].duration_s, 100 * kNs, 1e-15);  // the median of 100, 400 and 100 ns: one slow launch does not move it
  EXPECT_EQ(records[1].grid[0], 512);
  EXPECT_EQ(records[1].launches, 1);
  EXPECT_NEAR(records[1].duration_s, 50 * kNs, 1e-15);
  EXPECT_EQ(records[2].name, "scale");
  EXPECT_EQ(records[2].demangled, "scale");  // not a mangled name (an extern "C" kernel): kept as it is
  EXPECT_TRUE(kgate::fold_launches({}).empty());
}

TEST(SampleTimes, EachCallsSpanAndBusyTime) {
  const std::vector<kgate::SampleTimes> times = kgate::sample_times({{{100, 300}}, {{1000, 1100}, {1150, 1400}}}, 1);
  ASSERT_EQ(times.size(), 2u);
  EXPECT_NEAR(times[0].span_s, 200 * kNs, 1e-15);
  EXPECT_NEAR(times[0].busy_s, 200 * kNs, 1e-15);
  EXPECT_NEAR(times[1].span_s, 400 * kNs, 1e-15);  // the gap between the call's two kernels is the call's
  EXPECT_NEAR(times[1].busy_s, 350 * kNs, 1e-15);
}

TEST(SampleTimes, AReplayedSampleIsTheSumOfItsCallsOwnSpans) {
  // Two calls replayed from one graph: the 50 ns between them belongs to neither.
  const std::vector<kgate::SampleTimes> times = kgate::sample_times({{{150, 250}, {0, 100}}}, 2);
  ASSERT_EQ(times.size(), 1u);
  EXPECT_NEAR(times[0].span_s, 200 * kNs, 1e-15);
  EXPECT_NEAR(times[0].busy_s, 200 * kNs, 1e-15);
}

TEST(SampleTimes, ACallWithoutRecordsIsRefusedByNumber) {
  try {
    kgate::sample_times({{{0, 10}}, {}, {{20, 30}}}, 1);
    FAIL() << "a call without records has no time";
  } catch (const kgate::ProfilerError& e) {
    EXPECT_NE(std::string(e.what()).find("timed call 2 of 3"), std::string::npos) << e.what();
  }
}

TEST(KernelActivity, NamesRoundTrip) {
  for (const kgate::KernelActivity kind : {kgate::KernelActivity::concurrent, kgate::KernelActivity::serial})
    EXPECT_EQ(kgate::parse_kernel_activity(kgate::to_string(kind)), kind);
  EXPECT_THROW(kgate::parse_kernel_activity("kernel"), std::invalid_argument);
}

}  // namespace
