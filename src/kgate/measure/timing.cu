#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <thread>

#include "kgate/base/statistics.hpp"
#include "kgate/measure/timing.hpp"

namespace kgate {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

constexpr unsigned long long kHoldTimeoutNs = 2'000'000'000ull;  // a host stalled this long gets its launch gaps timed, and a warning
constexpr long long kProbeCycles = 200'000;                      // ~100 us at 2 GHz: %globaltimer's coarsest tick (1 us) stays under 1%

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Holds the stream until the host writes flag[0] = 1; flag[1] = 1 records a timeout.
__global__ void hold_stream_kernel(volatile int* flag, unsigned long long timeout_ns) {
  const unsigned long long start = global_timer_ns();
  while (flag[0] == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      flag[1] = 1;
      return;
    }
  }
}

__global__ void clock_probe_kernel(long long cycles, unsigned long long* out) {
  const long long c0 = clock64();
  const unsigned long long t0 = global_timer_ns();
  while (clock64() - c0 < cycles) {
  }
  const long long c1 = clock64();
  const unsigned long long t1 = global_timer_ns();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = t1 - t0;
}

// Reads every byte of the buffer; the sum is stored only when it matches a value it never takes
// with this buffer's contents (all bytes equal), so the loads cannot be optimized away.
__global__ void read_flush_kernel(const uint4* buffer, std::size_t vectors, unsigned* sink) {
  unsigned sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < vectors; i += std::size_t{gridDim.x} * blockDim.x) {
    const uint4 v = buffer[i];
    sum += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (sum == 0xFFFFFFFFu) *sink = sum;
}

}  // namespace

std::string_view to_string(Timer timer) { return timer == Timer::cupti ? "cupti" : "events"; }

Timer parse_timer(std::string_view text) {
  if (text == "cupti") return Timer::cupti;
  if (text == "events") return Timer::events;
  throw std::invalid_argument("unknown timer '" + std::string(text) + "' (cupti | events)");
}

std::string_view to_string(L2Flush flush) { return flush == L2Flush::read ? "read" : "write"; }

L2Flush parse_l2_flush(std::string_view text) {
  if (text == "read") return L2Flush::read;
  if (text == "write") return L2Flush::write;
  throw std::invalid_argument("unknown L2 flush '" + std::string(text) + "' (read | write)");
}

GpuTimer::GpuTimer(const DeviceInfo& device, TimingOptions options)
    : device_(device),
      options_(options),
      timer_(options.timer),
      flush_buffer_(2 * std::max<std::size_t>(device.l2_bytes, 1 << 20)),
      probe_result_(2 * sizeof(unsigned long long)) {
  KGATE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  // Equal bytes everywhere: the read flush's sum of XORs is then 0, never its sentinel.
  KGATE_CUDA_CHECK(cudaMemsetAsync(flush_buffer_.get(), 0, flush_buffer_.bytes(), stream_));
  KGATE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  starts_.resize(options_.max_batch);
  stops_.resize(options_.max_batch);
  for (int i = 0; i < options_.max_batch; ++i) {
    KGATE_CUDA_CHECK(cudaEventCreate(&starts_[i]));
    KGATE_CUDA_CHECK(cudaEventCreate(&stops_[i]));
  }
  KGATE_CUDA_CHECK(cudaHostAlloc(&hold_flag_host_, 2 * sizeof(int), cudaHostAllocMapped));
  KGATE_CUDA_CHECK(cudaHostGetDevicePointer(&hold_flag_device_, hold_flag_host_, 0));
  const std::string unavailable = activity_unavailable_reason();
  if (timer_ == Timer::cupti && !unavailable.empty()) {
    timer_ = Timer::events;
    fallback_reason_ = unavailable;
  }
  // Another CUPTI client (Nsight Compute) serializes launches: a hold would wait for itself.
  if (unavailable.find(kAnotherCuptiClient) != std::string::npos) options_.hold_stream = false;
}

GpuTimer::~GpuTimer() {
  // Teardown cannot throw; after a sticky fault these calls fail and there is nothing to recover.
  for (cudaEvent_t e : starts_) cudaEventDestroy(e);
  for (cudaEvent_t e : stops_) cudaEventDestroy(e);
  if (hold_flag_host_) cudaFreeHost(hold_flag_host_);
  if (stream_) cudaStreamDestroy(stream_);
}

double GpuTimer::sm_clock_mhz() {
  clock_probe_kernel<<<1, 1, 0, stream_>>>(kProbeCycles, static_cast<unsigned long long*>(probe_result_.get()));
  KGATE_CHECK_LAUNCH();
  unsigned long long result[2];
  KGATE_CUDA_CHECK(cudaMemcpyAsync(result, probe_result_.get(), sizeof result, cudaMemcpyDeviceToHost, stream_));
  KGATE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return result[1] > 0 ? static_cast<double>(result[0]) / static_cast<double>(result[1]) * 1e3 : 0.0;
}

double GpuTimer::first_launch_s(const CopyLaunch& launch) {
  const auto start = Clock::now();
  launch(0, stream_);
  KGATE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return seconds_since(start);
}

void GpuTimer::flush_l2() {
  if (options_.flush == L2Flush::write) {
    KGATE_CUDA_CHECK(cudaMemsetAsync(flush_buffer_.get(), ++flush_fill_, flush_buffer_.bytes(), stream_));
    return;
  }
  const std::size_t vectors = flush_buffer_.bytes() / sizeof(uint4);
  read_flush_kernel<<<4 * std::max(device_.sm_count, 1), 512, 0, stream_>>>(static_cast<const uint4*>(flush_buffer_.get()), vectors,
                                                                            static_cast<unsigned*>(probe_result_.get()));
  KGATE_CHECK_LAUNCH();
}

std::optional<std::size_t> GpuTimer::flush_kernels() const {
  return options_.flush == L2Flush::read ? std::optional<std::size_t>(1) : std::nullopt;
}

void GpuTimer::timed_call(int sample, const std::function<void()>& call) {
  KGATE_CUDA_CHECK(cudaEventRecord(starts_[sample], stream_));
  if (recording_) {
    recording_->begin_call(static_cast<std::uint64_t>(sample) + 1);
    try {
      call();
    } catch (...) {
      try {
        recording_->end_call();
      } catch (...) {  // the call's own error is the one to report
      }
      throw;
    }
    recording_->end_call();
  } else {
    call();
  }
  KGATE_CUDA_CHECK(cudaEventRecord(stops_[sample], stream_));
}

GpuTimer::BatchTimes GpuTimer::run_batch(int count, const std::function<void(int)>& enqueue_one, bool cupti, int calls_per_sample) {
  count = std::clamp(count, 1, options_.max_batch);
  std::optional<CallActivity> activity;
  if (cupti) {
    activity.emplace(options_.kernel_activity);
    activity->start();
  }
  recording_ = activity ? &*activity : nullptr;
  struct StopMarking {  // timed_call marks calls only while this batch records
    CallActivity*& recording;
    ~StopMarking() { recording = nullptr; }
  } stop_marking{recording_};
  hold_flag_host_[0] = 0;
  hold_flag_host_[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (options_.hold_stream) {
    hold_stream_kernel<<<1, 1, 0, stream_>>>(hold_flag_device_, kHoldTimeoutNs);
    KGATE_CHECK_LAUNCH();
  }
  for (int s = 0; s < count; ++s) enqueue_one(s);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *static_cast<volatile int*>(hold_flag_host_) = 1;
  KGATE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (hold_flag_host_[1] != 0)
    throw std::runtime_error("the stream hold timed out before the host finished enqueuing a batch; timings would include launch gaps");
  BatchTimes times;
  times.event_s.resize(count);
  for (int s = 0; s < count; ++s) {
    float ms = 0;
    KGATE_CUDA_CHECK(cudaEventElapsedTime(&ms, starts_[s], stops_[s]));
    times.event_s[s] = static_cast<double>(ms) * 1e-3;
  }
  if (!activity) return times;
  for (const SampleTimes& call : sample_times(activity->stop(static_cast<std::uint64_t>(count)), calls_per_sample)) {
    times.span_s.push_back(call.span_s);
    times.busy_s.push_back(call.busy_s);
  }
  return times;
}

TimingRecord GpuTimer::sample_until_done(std::optional<double> expected_sample_s, const std::function<void(int)>& enqueue_one,
                                         int launches_per_sample) {
  if (timer_ == Timer::cupti) {
    try {
      return sample_with(true, expected_sample_s, enqueue_one, launches_per_sample);
    } catch (const ProfilerError& e) {
      // For good: a CUPTI that failed once (another subscriber took it, records went missing) is
      // not trusted with the samples of the next benchmark either.
      timer_ = Timer::events;
      fallback_reason_ = e.what();
    }
  }
  return sample_with(false, expected_sample_s, enqueue_one, launches_per_sample);
}

TimingRecord GpuTimer::sample_with(bool cupti, std::optional<double> expected_sample_s, const std::function<void(int)>& enqueue_one,
                                   int launches_per_sample) {
  StoppingCriterion criterion(options_.stopping);
  std::vector<double> event_samples, busy_samples;  // beside the samples, with CUPTI
  ClockGovernor governor(device_.sm_clock_khz / 1e3, options_.throttle);
  std::vector<double> clocks;
  const auto start = Clock::now();
  const auto batch_for = [&](double sample_s) {
    return static_cast<int>(std::clamp(options_.batch_target_s / std::max(sample_s, 1e-7), 1.0, static_cast<double>(options_.max_batch)));
  };
  // Without an estimate the first batch is one sample, which sizes the rest and counts as well
  // (a sample of a 100 ms kernel is worth keeping).
  int batch = expected_sample_s ? batch_for(*expected_sample_s) : 1;
  StopReason reason = StopReason::none;
  while (reason == StopReason::none) {
    const BatchTimes times = run_batch(batch, enqueue_one, cupti, launches_per_sample);
    const std::vector<double>& samples = cupti ? times.span_s : times.event_s;
    if (!expected_sample_s) {
      expected_sample_s = samples.front();
      batch = batch_for(*expected_sample_s);
    }
    const double mhz = sm_clock_mhz();
    double batch_gpu_s = 0;
    for (double s : samples) batch_gpu_s += s;
    const BatchVerdict verdict = governor.after_batch(mhz, batch_gpu_s, static_cast<int>(samples.size()));
    if (verdict.keep) {
      // The criterion sees whole samples, so its minimum GPU time counts every launch of a replay.
      for (double s : samples) criterion.add_sample(s);
      event_samples.insert(event_samples.end(), times.event_s.begin(), times.event_s.end());
      busy_samples.insert(busy_samples.end(), times.busy_s.begin(), times.busy_s.end());
      clocks.push_back(mhz);
    }
    if (verdict.idle_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(verdict.idle_s));
    reason = criterion.check(seconds_since(start));
  }
  if (criterion.samples() == 0)
    throw std::runtime_error("every sample ran below the throttle threshold (" + std::to_string(governor.throttled_samples()) +
                             " dropped); the GPU is throttling");
  TimingRecord record;
  record.samples_s = criterion.samples_s();
  for (double& s : record.samples_s) s /= launches_per_sample;
  record.summary = summarize(record.samples_s);
  record.repetition_medians_s = {record.summary.median};
  record.target_met = criterion.target_met();
  record.target_rel_stddev = options_.stopping.target_rel_stddev;
  record.stop_reason = std::string(to_string(reason));
  record.throttled_samples = governor.throttled_samples();
  record.power_limited_samples = governor.power_limited_samples();
  record.rested = governor.resting();
  record.sm_clock_mhz = median(clocks);
  record.gpu_time_s = criterion.gpu_time_s();
  record.wall_time_s = seconds_since(start);
  record.launches_per_sample = launches_per_sample;
  record.timer = std::string(to_string(cupti ? Timer::cupti : Timer::events));
  if (cupti) {
    record.event_median_s = median(event_samples) / launches_per_sample;
    record.busy_median_s = median(busy_samples) / launches_per_sample;
  }
  return record;
}

std::function<void(int)> GpuTimer::cold_sampler(const CopyLaunch& launch, int copies) {
  if (copies < 1) throw std::invalid_argument("a cold sample needs at least one input copy");
  return [this, &launch, copies, next_copy = 0](int s) mutable {
    flush_l2();
    timed_call(s, [&] { launch(next_copy, stream_); });
    next_copy = (next_copy + 1) % copies;
  };
}

std::vector<double> GpuTimer::cold_batch(const CopyLaunch& launch, int count) {
  if (count < 1 || count > options_.max_batch)
    throw std::invalid_argument("cold_batch takes 1 to " + std::to_string(options_.max_batch) + " samples");
  return run_batch(count, cold_sampler(launch, 1)).event_s;
}

TimingRecord GpuTimer::measure_cold(const CopyLaunch& launch, int copies) {
  const std::function<void(int)> enqueue_one = cold_sampler(launch, copies);
  // One warm-up launch, not one per copy: the copies' pages were written on the device when the
  // inputs were filled, and what a launch leaves behind (TLB entries) is gone again by the copy's
  // next sample, with the other copies' samples in between. A launch per copy cost copies x the
  // kernel's time in every process: half a second for a 68 ms prefill kernel on 8 copies.
  launch(0, stream_);
  TimingRecord record = sample_until_done(std::nullopt, enqueue_one, 1);
  record.input_copies = copies;
  return record;
}

TimingRecord GpuTimer::measure_hot(const CopyLaunch& launch, std::optional<double> launch_estimate_s) {
  double single_s = 0;
  if (launch_estimate_s) {
    single_s = *launch_estimate_s;
  } else {
    auto single = [&](int s) { timed_call(s, [&] { launch(0, stream_); }); };
    single(0);  // warm-up
    KGATE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    single_s = run_batch(1, single).event_s[0];
  }
  const int launches = static_cast<int>(std::clamp(std::ceil(options_.hot_replay_target_s / std::max(single_s, 1e-7)), 1.0,
                                                   static_cast<double>(options_.max_graph_launches)));

  cudaGraph_t graph = nullptr;
  KGATE_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < launches; ++i) launch(0, stream_);
  } catch (...) {
    cudaStreamEndCapture(stream_, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  KGATE_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  KGATE_CUDA_CHECK(instantiated);
  struct ExecGuard {
    cudaGraphExec_t exec;
    ~ExecGuard() { cudaGraphExecDestroy(exec); }
  } guard{exec};

  auto replay = [&](int s) { timed_call(s, [&] { KGATE_CUDA_CHECK(cudaGraphLaunch(exec, stream_)); }); };
  replay(0);  // warm-up: the first replay uploads the graph
  KGATE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return sample_until_done(single_s * launches, replay, launches);
}

}  // namespace kgate
