// What the CUPTI timer makes of a call's activity records (activity_span.hpp), on synthetic
// records with known timestamps.
#include "kgate/base/activity_span.hpp"

#include <gtest/gtest.h>

namespace {

using kgate::ActivityInterval;

TEST(ActivitySpan, SpanIncludesGapsBusyDoesNot) {
  // A memset, then two kernels with a 300 ns launch gap between them.
  const std::vector<ActivityInterval> call = {{1000, 1500}, {1600, 4600}, {4900, 6000}};
  EXPECT_DOUBLE_EQ(kgate::span_s(call), 5000e-9);
  EXPECT_DOUBLE_EQ(kgate::busy_s(call), (500 + 3000 + 1100) * 1e-9);
  EXPECT_EQ(kgate::span_s({}), 0);
  EXPECT_EQ(kgate::busy_s({}), 0);
  // Out of order (records arrive per buffer) changes nothing.
  const std::vector<ActivityInterval> shuffled = {call[2], call[0], call[1]};
  EXPECT_DOUBLE_EQ(kgate::span_s(shuffled), 5000e-9);
}

TEST(ActivitySpan, ReplaySplitsIntoItsCalls) {
  // Three calls of two kernels each, 500 ns between calls (the graph's node gap), 100 ns inside.
  std::vector<ActivityInterval> replay;
  for (std::uint64_t c = 0; c < 3; ++c) {
    const std::uint64_t start = 10'000 + c * 2'600;
    replay.push_back({start + 1100, start + 2100});  // listed second to first: sorted by start
    replay.push_back({start, start + 1000});
  }
  EXPECT_DOUBLE_EQ(kgate::mean_call_span_s(replay, 3), 2100e-9);  // each call: 1000 + 100 + 1000
  // Records that do not divide into the calls: the replay's span per call, gaps included.
  replay.pop_back();
  EXPECT_DOUBLE_EQ(kgate::mean_call_span_s(replay, 3), kgate::span_s(replay) / 3);
  EXPECT_EQ(kgate::mean_call_span_s({}, 3), 0);
}

TEST(ActivitySpan, TickIsTheSmallestStepBetweenSpans) {
  EXPECT_NEAR(kgate::timestamp_tick_s(std::vector<double>{2.016e-6, 1.984e-6, 2.016e-6, 2.048e-6}), 32e-9, 1e-15);
  // As an H100's CUPTI records fall: 32 ns steps, each with a 1 ns neighbour.
  EXPECT_NEAR(kgate::timestamp_tick_s(std::vector<double>{2.272e-6, 2.273e-6, 2.304e-6, 2.305e-6, 2.271e-6, 2.336e-6}), 32e-9, 1.5e-9);
  // A finer clock reads as a few ns at most: steps within the jitter are not told apart.
  EXPECT_NEAR(kgate::timestamp_tick_s(std::vector<double>{1e-6, 1.001e-6, 1.0015e-6, 1.004e-6}), 4e-9, 1e-15);
  EXPECT_EQ(kgate::timestamp_tick_s(std::vector<double>{3e-6, 3e-6}), 0);  // one distinct value: unknown
  EXPECT_EQ(kgate::timestamp_tick_s(std::vector<double>{}), 0);
}

}  // namespace
