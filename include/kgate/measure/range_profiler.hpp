#pragma once
// Hardware counters per kernel (CUPTI's Range Profiling API, auto range + user replay): the profiled
// call is run once per pass the metrics need, each pass after a setup its caller chooses
// (kgate_bench empties the L2 as before a cold sample), so the counters describe the launch the
// cold mode times.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kgate/base/phase_clock.hpp"
#include "kgate/measure/cupti_support.hpp"

namespace kgate {

// The counters of one kernel launch. range_name is CUPTI's auto-range name: the launch's index
// within the profiled call ("0", "1", ...), so it pairs with a KernelTrace of the same call.
struct KernelMetrics {
  std::string range_name;
  std::map<std::string, double> values;
};

struct RangeProfile {
  std::vector<KernelMetrics> kernels;  // in launch order
  // Over all kernels: metrics named "*.sum" are summed; every other metric (ratios, percentages,
  // averages, rates) is averaged weighted by each kernel's gpu__time_duration.sum.
  std::map<std::string, double> combined;
};

std::vector<std::string> default_range_metrics();

// Kernels one RangeProfiler session may profile (profile()'s call, or a whole batch with its
// setups): CUPTI's counter data image is sized for this many ranges.
inline constexpr std::size_t kMaxRangesPerProfile = 64;

// Runs before every replay pass, outside the profiled ranges, and leaves the device as each pass
// should find it: CUPTI restores no memory under user replay. (Its pass boundary does not keep the
// L2 either: on an H200 a pass without a setup read an L2-sized input from DRAM again. So the setup
// decides in what state the L2 is left — clean, or holding dirty lines — as the timed cold mode
// does.) The device is synchronized after it, so it may use any stream.
using PassSetup = std::function<void()>;

class RangeProfiler {
 public:
  // Builds the counter configuration for these metrics on the current device once. Throws
  // ProfilerError when profiling is unavailable, or listing every metric name this chip does not
  // know (or cannot collect). `before_each_pass` may be empty: passes then follow one another.
  explicit RangeProfiler(std::vector<std::string> metrics = default_range_metrics(), PassSetup before_each_pass = {});
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;
  ~RangeProfiler();

  // Profiles each kernel launch_once launches (auto range: one range per kernel, in launch order)
  // by user replay: launch_once runs once unprofiled, so one-time work (lazy module loading,
  // library handles, workspace allocation) stays out of the passes, then once per pass, each
  // after before_each_pass. Every pass must launch the same kernels. Device memory is not
  // restored between passes: a kernel that updates its data in place (RoPE, fused add + RMSNorm)
  // runs each pass on the previous pass's output, which does the same work and so gives the same
  // counters. Launches must not depend on each other's concurrency (CUPTI runs each kernel alone)
  // and must be plain launches, not graph launches. Synchronizes the device. Reusable: call it
  // once per benchmark. The first call enables the profiler on the context and it stays enabled
  // until this object is destroyed (enabling costs more than a small kernel's replay), so
  // KernelTrace::start() throws meanwhile; after a failed call the next one enables it afresh.
  // Throws ProfilerError while a KernelTrace is recording, or when launch_once launches more than
  // 64 kernels; rethrows what launch_once or before_each_pass throw.
  RangeProfile profile(const std::function<void()>& launch_once);

  // Several calls profiled in one replay session, which pays CUPTI's per-session and per-pass cost
  // (on an H200 about 40 ms and 9 x 12 ms for the default metrics) once instead of once per call.
  // Each pass runs, for every call in order, before_each_pass and then the call, both inside the
  // pass (synchronized between them): before_each_pass must launch exactly `setup_kernels`
  // kernels, whose ranges are dropped, and each call exactly its `kernels`. A pass that launches
  // any other number throws ProfilerError rather than attribute counters to the wrong call; so do
  // batches of more than 64 kernels in all. Otherwise as profile(), one result per call.
  struct BatchedCall {
    std::function<void()> launch;
    std::size_t kernels = 0;
  };
  std::vector<RangeProfile> profile_batch(const std::vector<BatchedCall>& calls, std::size_t setup_kernels);

  const std::vector<std::string>& metrics() const;
  std::size_t passes() const;  // replay passes (calls of launch_once profiled) for this metric set
  // Wall seconds profile() has spent in each of its steps, summed over calls: "unprofiled" (the
  // first launch), "configure" (counter data image and configuration), "passes" (each pass's setup
  // and replayed call), "decode" and "evaluate" (CUPTI turning counters into metric values).
  const PhaseSeconds& seconds_by_step() const;

 private:
  // One replay session: the calls once unprofiled, then passes of `profiled` (each after
  // `outside`); every range's metrics in launch order.
  std::vector<KernelMetrics> session(const std::vector<std::function<void()>>& calls, const PassSetup& outside,
                                     const std::function<void()>& profiled);
  RangeProfile result_of(std::vector<KernelMetrics> kernels) const;

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kgate
