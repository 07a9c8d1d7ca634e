#pragma once
// What the CUPTI timer makes of one timed call's activity records (docs/timing.md): pure
// arithmetic on the records' GPU timestamps, apart from the CUPTI plumbing (measure's
// call_activity.hpp) so that the CPU tests cover it.
#include <cstdint>
#include <span>
#include <vector>

namespace kgate {

// One kernel, memcpy or memset as CUPTI recorded it: start and end on the GPU's clock, in ns.
struct ActivityInterval {
  std::uint64_t start_ns = 0, end_ns = 0;
};

// The call's time: from the first record's start to the last record's end, gaps between its
// kernels included (a launch gap inside a call is part of what the call costs). 0 without records.
double span_s(std::span<const ActivityInterval> records);

// The time some record of the call was running: the sum of the records' durations, which leaves
// the gaps out (records of one stream do not overlap).
double busy_s(std::span<const ActivityInterval> records);

// A replay of a CUDA graph that holds `calls` copies of the same call: the mean of the calls'
// own spans, the records taken in start order in equal groups, so the gap between one call's last
// node and the next call's first is not counted (as it is not in a cold call's span). Records that
// do not split into `calls` equal groups give the replay's span / calls instead.
double mean_call_span_s(std::vector<ActivityInterval> replay, int calls);

// The tick of the clock that produced `spans` (seconds): the smallest step between the values they
// take, where values within kTimestampJitterS of each other count as one; 0 with fewer than two
// such values. On an H100 CUPTI's spans step by 32 ns, with a 1 ns jitter beside each step (2272,
// 2273, 2304, 2305 ns, ...): the tick is 32 ns, not 1.
inline constexpr double kTimestampJitterS = 2.5e-9;
double timestamp_tick_s(std::span<const double> spans);

}  // namespace kgate
