#pragma once
// What a suite run measures and how: the timing options and which passes run. Every front door
// (kgate_bench's --kgate_* flags, bench/flags.hpp) fills one in; the defaults are the suite's own.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kgate/measure/timing.hpp"
#include "kgate/results/shard.hpp"

namespace kgate {

// More processes than this would spend more on starting them than on sampling (each costs about
// 5 s of an H200 suite: a CUDA context, instances, first launches).
constexpr int kMaxTimingProcesses = 16;

// The suite's sampling budget per benchmark and mode, shorter than nvbench's (0.5 s of GPU time,
// 15 s of wall time) so that a whole suite fits a CI job; every record says whether its noise
// target was met. A baseline keeps 1000 samples per mode and the comparator's U test and
// median-ratio interval settle well before that; without the cap a 5 us kernel takes 20000 cold
// samples to reach the minimum GPU time. On an H200 samples past 1000 were a third of the suite's
// sampling time.
TimingOptions suite_timing_defaults();

struct SuiteOptions {
  TimingOptions timing = suite_timing_defaults();
  bool cold = true, hot = true;        // the timing modes measured (a family names its headline mode)
  bool headline_only = false;          // each benchmark's headline mode only
  bool counters = true;                // CUPTI: kernel records, and with `profile` range-profiler metrics (the counter pass)
  bool profile = true;                 // the range-profiler pass (off with counters=trace: kernel records alone)
  std::vector<std::string> metrics;    // range-profiler metrics (empty: the default list)
  bool check = true;                   // correctness check before timing
  int processes = 3;                   // fresh processes the timing is pooled over (TimingProcess)
  std::size_t repetitions = 1;         // measurements of each benchmark per process, pooled
  std::vector<std::string> workloads;  // these workload benchmarks (empty: the suite's)
  std::optional<ShardSpec> shard;      // this process's part of the suite
  std::string shard_durations;         // a results file to balance shards by
  std::string shard_claims;            // a folder the shards of one host share: each benchmark to the first shard free to claim it

  // Whether `mode` ("cold" or "hot") is measured for a benchmark whose headline mode is `headline`.
  bool measures(std::string_view mode, std::string_view headline) const {
    return (mode == "cold" ? cold : hot) && (!headline_only || mode == headline);
  }
};

}  // namespace kgate
