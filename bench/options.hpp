#pragma once
// kgate_bench's own flags. They follow Google Benchmark's form (--kgate_name=value) and are
// removed from argv before Google Benchmark parses the rest, so its flags keep working unchanged.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kgate/results/shard.hpp"
#include "kgate/measure/timing.hpp"

namespace kgate::bench {

// More processes than this would spend more on starting them than on sampling (each costs about
// 5 s of an H200 suite: a CUDA context, instances, first launches).
constexpr int kMaxTimingProcesses = 16;

struct BenchOptions {
  std::string out;      // --kgate_out: the complete results JSON
  std::string out_dir;  // --kgate_out_dir: the same, named <date>-<gpu>.json in this folder
  TimingOptions timing{};
  bool cold = true, hot = true;          // --kgate_modes=cold,hot
  bool headline_only = false;            // --kgate_modes=headline: each benchmark's headline mode only
  bool counters = true;                  // --kgate_counters=on|off: the CUPTI pass after timing
  std::vector<std::string> metrics;      // --kgate_metrics=a,b,c (empty: the default list)
  bool check = true;                     // --kgate_check=on|off: correctness check before timing
  int processes = 3;                     // --kgate_processes=N: fresh processes the timing is pooled over
  std::string resume;                    // --kgate_resume=FILE (internal: continue after a fault)
  std::string list_json;                 // --kgate_list_json=FILE|-: write the registry listing and exit
  std::vector<std::string> workloads;    // --kgate_workloads=a,b: these workload benchmarks (empty: the suite's)
  std::optional<ShardSpec> shard;        // --kgate_shard=i/n: this process's part of the suite
  std::string shard_durations;           // --kgate_shard_durations=FILE: a results file to balance shards by
  bool help = false;

  // Whether `mode` ("cold" or "hot") is measured for a benchmark whose headline mode is `headline`.
  bool measures(std::string_view mode, std::string_view headline) const {
    return (mode == "cold" ? cold : hot) && (!headline_only || mode == headline);
  }
};

// Parses and removes the --kgate_* flags (and --help, which is left for Google Benchmark too).
// Throws std::invalid_argument naming the flag on a bad value or an unknown --kgate_ flag.
BenchOptions parse_bench_options(int& argc, char** argv);
std::string bench_usage();

}  // namespace kgate::bench
