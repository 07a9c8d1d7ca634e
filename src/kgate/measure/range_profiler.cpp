#include "kgate/measure/range_profiler.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <iterator>
#include <utility>

#include "cupti_check.hpp"
#include "cupti_clients.hpp"
#include "kgate/core/cuda_check.hpp"
#include "range_profiler_config.hpp"
#include "range_profiler_replay.hpp"

namespace kgate {
namespace {

constexpr const char* kDurationMetric = "gpu__time_duration.sum";

// Counts add up over kernels; everything else is a rate or a ratio of one kernel's run, which
// counts for the whole call in proportion to how long that kernel ran.
std::map<std::string, double> combine(const std::vector<KernelMetrics>& kernels, const std::vector<std::string>& metrics) {
  double total_time = 0;
  for (const KernelMetrics& kernel : kernels) total_time += kernel.values.at(kDurationMetric);
  std::map<std::string, double> combined;
  for (const std::string& metric : metrics) {
    const bool additive = metric.ends_with(".sum");
    double value = 0;
    for (const KernelMetrics& kernel : kernels) {
      const double weight = total_time > 0 ? kernel.values.at(kDurationMetric) / total_time : 1.0 / static_cast<double>(kernels.size());
      value += kernel.values.at(metric) * (additive ? 1.0 : weight);
    }
    if (!kernels.empty()) combined[metric] = value;
  }
  return combined;
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::string check_counters() {
  try {
    const RangeProfiler probe(std::vector<std::string>{kDurationMetric});
  } catch (const std::exception& error) {
    return error.what();
  }
  return {};
}

}  // namespace

std::string counters_unavailable_reason() {
  static const std::string reason = check_counters();
  return reason;
}

std::vector<std::string> default_range_metrics() {
  return {
      kDurationMetric,
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      // The SM's instruction issue, not ncu's "SM throughput" (sm__throughput, the busiest of every
      // SM unit): that one metric takes the set from 2 replay passes to 8 (cuptiProfilerHostGetNumOfPasses,
      // GH100), three quarters of the suite's counter pass. Tensor-core work has its own metric below,
      // and sm__throughput stays available by name (--kgate_metrics).
      "sm__inst_issued.avg.pct_of_peak_sustained_elapsed",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "lts__t_sector_hit_rate.pct",
      "l1tex__t_sector_hit_rate.pct",
      // Every tensor-core instruction (HMMA, IMMA, Hopper's wgmma), not only the HMMA subset.
      "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
  };
}

struct RangeProfiler::State {
  // Told when the range profiler is enabled, and asked whether an activity recording runs (which
  // would record every replayed pass as a launch of its own): the process's, outliving this object.
  cupti::CuptiClients& clients = cupti::CuptiClients::process();
  std::vector<std::string> metrics;    // as asked for
  std::vector<std::string> collected;  // plus gpu__time_duration.sum, which combining needs
  PassSetup before_each_pass;
  CUcontext context = nullptr;
  std::unique_ptr<cupti::HostObject> host;
  std::vector<std::uint8_t> config;
  std::size_t passes = 0;
  std::unique_ptr<cupti::EnabledRangeProfiler> enabled;  // from the first profile() on
  PhaseSeconds seconds_by_step;

  void enable() {
    enabled = std::make_unique<cupti::EnabledRangeProfiler>(context);
    clients.set_range_profiler_enabled(true);
  }
  void disable() {
    enabled.reset();
    clients.set_range_profiler_enabled(false);
  }
};

RangeProfiler::RangeProfiler(std::vector<std::string> metrics, PassSetup before_each_pass) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.metrics = std::move(metrics);
  s.before_each_pass = std::move(before_each_pass);
  s.collected = s.metrics;
  if (!contains(s.collected, kDurationMetric)) s.collected.push_back(kDurationMetric);

  s.context = cupti::current_context();
  cupti::initialize_profiler_interface();
  int device = 0;  // the runtime's ordinal is the driver's CUdevice and CUPTI's device index
  KGATE_RUNTIME_CHECK(cudaGetDevice(&device));
  cupti::require_supported_device(device);
  const std::string chip = cupti::chip_name(device);
  const std::vector<std::uint8_t> availability = cupti::counter_availability(s.context);

  cupti::reject_unknown_metrics(s.collected, chip, availability);
  s.host = std::make_unique<cupti::HostObject>(chip, availability);
  s.config = cupti::config_image(*s.host, s.collected);
  s.passes = cupti::count_passes(s.config);

  // Permission and a second profiling client are refused here, at enabling: better now than at
  // the first profile() in the middle of a run.
  cupti::EnabledRangeProfiler(s.context).disable();
}

RangeProfiler::~RangeProfiler() {
  if (state_ && state_->enabled) state_->disable();
}

std::vector<KernelMetrics> RangeProfiler::session(const std::vector<std::function<void()>>& calls, const PassSetup& outside,
                                                  const std::function<void()>& profiled) {
  State& s = *state_;
  if (s.clients.activity_recording()) throw ProfilerError("RangeProfiler::profile() while a KernelTrace is recording");
  if (!s.enabled) s.enable();
  CUpti_RangeProfiler_Object* profiler = s.enabled->get();
  PhaseClock clock(s.seconds_by_step);
  std::vector<std::uint8_t> counter_data;
  try {
    // Unprofiled: one-time work must not fall into the first pass only.
    for (const std::function<void()>& call : calls) cupti::launch_and_wait(call);
    clock.lap("unprofiled");
    counter_data = cupti::counter_data_image(profiler, cupti::c_strings(s.collected));
    cupti::set_config(profiler, s.config, counter_data);
    clock.lap("configure");
    cupti::run_passes(profiler, outside, profiled);
    clock.lap("passes");
    cupti::decode(profiler);
    clock.lap("decode");
  } catch (...) {
    s.disable();  // the next call starts afresh, not inside a replay left half done
    throw;
  }
  std::vector<KernelMetrics> kernels = cupti::evaluate(*s.host, s.collected, counter_data);
  clock.lap("evaluate");
  return kernels;
}

RangeProfile RangeProfiler::result_of(std::vector<KernelMetrics> kernels) const {
  const State& s = *state_;
  RangeProfile result;
  result.kernels = std::move(kernels);
  result.combined = combine(result.kernels, s.collected);
  if (!contains(s.metrics, kDurationMetric)) {
    for (KernelMetrics& kernel : result.kernels) kernel.values.erase(kDurationMetric);
    result.combined.erase(kDurationMetric);
  }
  return result;
}

RangeProfile RangeProfiler::profile(const std::function<void()>& launch_once) {
  return result_of(session({launch_once}, state_->before_each_pass, launch_once));
}

std::vector<RangeProfile> RangeProfiler::profile_batch(const std::vector<BatchedCall>& calls, std::size_t setup_kernels) {
  std::size_t expected = 0;
  for (const BatchedCall& call : calls) expected += setup_kernels + call.kernels;
  if (expected > kMaxRangesPerProfile)
    throw ProfilerError("a batch may launch at most " + std::to_string(kMaxRangesPerProfile) +
                        " kernels, setups included; this one launches " + std::to_string(expected));
  std::vector<std::function<void()>> launches;
  for (const BatchedCall& call : calls) launches.push_back(call.launch);
  const PassSetup& setup = state_->before_each_pass;
  std::vector<KernelMetrics> ranges = session(launches, {}, [&] {
    for (const BatchedCall& call : calls) {
      if (setup) setup();
      KGATE_CUDA_CHECK(cudaDeviceSynchronize());  // the setup may use any stream
      call.launch();
      KGATE_CUDA_CHECK(cudaDeviceSynchronize());
    }
  });
  if (ranges.size() != expected)
    throw ProfilerError("the batch's passes launched " + std::to_string(ranges.size()) + " kernels where its calls and setups declare " +
                        std::to_string(expected) + ": the ranges cannot be attributed");
  std::vector<RangeProfile> profiles;
  auto range = ranges.begin();
  for (const BatchedCall& call : calls) {
    range += static_cast<std::ptrdiff_t>(setup_kernels);
    std::vector<KernelMetrics> kernels(std::make_move_iterator(range),
                                       std::make_move_iterator(range + static_cast<std::ptrdiff_t>(call.kernels)));
    range += static_cast<std::ptrdiff_t>(call.kernels);
    // Named as a profile() of the call alone names them: the launch's index within the call.
    for (std::size_t i = 0; i < kernels.size(); ++i) kernels[i].range_name = std::to_string(i);
    profiles.push_back(result_of(std::move(kernels)));
  }
  return profiles;
}

const std::vector<std::string>& RangeProfiler::metrics() const { return state_->metrics; }

std::size_t RangeProfiler::passes() const { return state_->passes; }

const PhaseSeconds& RangeProfiler::seconds_by_step() const { return state_->seconds_by_step; }

}  // namespace kgate
