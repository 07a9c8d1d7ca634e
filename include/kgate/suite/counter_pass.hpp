#pragma once
// What kgate_bench learns from CUPTI, arranged so that neither part perturbs a timed sample:
//  - kernel records (Activity API): one launch traced per benchmark, right after its correctness
//    check and before its timing, with tracing off again before the first timed sample;
//  - hardware counters (range profiler): one pass over all benchmarks in the last timing process,
//    before or after its timing (counts_before_timing), never during it, with the profiler enabled
//    once for the whole pass (enabling it costs more than a small kernel's replay).
//    Each benchmark's call is replayed once per pass the metrics need, the L2 emptied before every
//    pass by the timer's own flush, so the counters (gpu__time_duration included) describe the
//    launch the cold mode times and not one that finds the cache as CUPTI's kernel replay leaves it.
// Both degrade, never crash: when CUPTI cannot trace or profile here (permissions, a profiler
// already attached, an unsupported GPU) one warning is printed and every record says why.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "kgate/measure/cupti.hpp"
#include "kgate/base/phase_clock.hpp"
#include "kgate/core/registry.hpp"
#include "kgate/results/results.hpp"
#include "kgate/measure/timing.hpp"

namespace kgate {

class UnknownMetrics : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CounterPass {
 public:
  // Builds the range profiler's configuration for these metrics (empty: the default list) up
  // front, before any timing, and keeps it for run(); throws UnknownMetrics naming the ones this
  // chip does not know. The profiler is enabled only from run() on. Every replay pass starts
  // with `timer`'s L2 flush, which must outlive this object. Without `profile`, only trace().
  CounterPass(std::vector<std::string> metrics, GpuTimer& timer, bool profile = true);

  // The kernels one call of launch_once really ran; empty when the Activity API is unavailable.
  std::vector<KernelRecord> trace(const std::function<void()>& launch_once) const;

  // Profiles a record the registry cannot launch (a workload) on the pass's profiler.
  using ProfileOther = std::function<void(BenchmarkRecord& record, RangeProfiler& profiler)>;

  // The range-profiler metrics of every benchmark that ran, each on a fresh instance; records that
  // name no registered variant go to `profile_other`, with the same profiler enabled once for all.
  // Benchmarks whose kernels per call the trace counted are profiled in batches of one replay
  // session (RangeProfiler::profile_batch) when the flush's kernels are known (the read flush):
  // CUPTI's per-session cost was most of the pass's time, 150 ms a benchmark on an H200.
  // Records in the run's context how the passes were prepared (counters_replay, counters_l2_flush).
  // Returns the pass's wall time by phase: "instance" (making and filling the instances) and
  // "profile" (the replayed calls and CUPTI's work). Once per object: the profiler is released at
  // the end, so that timing may record after the pass. A record with metrics, or with the reason it
  // has none, is not profiled again (a process restarted after a fault profiled it already); nor is
  // one named in `counted_elsewhere` (another shard's, whose own shard profiles it).
  // Throws std::logic_error when called a second time.
  PhaseSeconds run(RunResults& results, const Registry& registry, const ProfileOther& profile_other,
                   const std::set<std::string>& counted_elsewhere = {});

 private:
  L2Flush flush_;
  std::optional<std::size_t> setup_kernels_;  // kernels of the pass setup (the flush), where known
  std::unique_ptr<RangeProfiler> profiler_;   // null when counters_unavailable_ says why
  std::string counters_unavailable_;
  std::string activity_unavailable_;
  bool ran_ = false;
};

}  // namespace kgate
