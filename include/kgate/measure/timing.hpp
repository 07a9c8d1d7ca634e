#pragma once
// Device-side timing of a launch, the way nvbench does it and with what a regression harness
// adds. Everything timed is explicit here:
//  * the clock (Timer): by default a sample is the span of the call's CUPTI activity records — from
//    its first kernel's (or copy's, or set's) start to its last one's end, on the GPU's own clock,
//    attributed to the call by external correlation (call_activity.hpp, activity_span.hpp) — so the
//    front end's launch processing and the completion flush, a fixed 2-4 us that a CUDA event pair
//    also brackets, are not in it. The event pair is still recorded around every call (end-to-end
//    time, launch included), and where CUPTI cannot record (another profiler attached, no
//    permission) the events are the samples, said in the record and by timer_fallback_reason();
//  * cold: before every timed launch the L2 is flushed (a scratch buffer of twice the L2 read, or
//    written as nvbench does: L2Flush below) and inputs rotate among copies; each launch sits
//    between its own pair of events, outside which the flush stays;
//  * hot: many launches captured in a CUDA graph, one replay timed, divided by the count (with
//    CUPTI: the mean of the calls' own spans within the replay);
//  * batches of samples are queued behind a kernel that holds the stream until the host has
//    enqueued them all, so host launch latency never lands between two events;
//  * after each batch a probe kernel measures the SM clock (clock64 against %globaltimer); a batch
//    run below the throttle threshold is dropped and counted, and sampling backs off briefly; a
//    batch run below full clock makes sampling rest between batches from then on, so the board
//    stays under its power limit (ClockGovernor, stopping.hpp).
// Sampling stops by the noise-adaptive criterion (stopping.hpp).
#include <cuda_runtime.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kgate/measure/call_activity.hpp"
#include "kgate/results/device.hpp"
#include "kgate/core/device_buffer.hpp"
#include "kgate/results/results.hpp"
#include "kgate/measure/stopping.hpp"

namespace kgate {

// How the cold mode empties the L2 before a sample. Both leave none of the previous sample's lines
// resident; they differ in what they leave instead. A write (cudaMemsetAsync, nvbench's way) fills
// the L2 with dirty lines, so the timed kernel's first misses pay for writing them back to DRAM —
// traffic that is not the kernel's. A read leaves clean lines that are dropped for free, the state
// a kernel meets after a read-mostly predecessor. The counter pass empties the L2 the same way
// before every replay pass, so the counters describe the launch the cold mode times.
enum class L2Flush { read, write };
std::string_view to_string(L2Flush flush);
L2Flush parse_l2_flush(std::string_view text);  // "read" | "write"; throws std::invalid_argument

constexpr int kMaxInputCopies = 64;  // input copies a cold benchmark rotates among, at most

// Where a sample's time comes from (docs/timing.md). Results name it "cupti" or "events".
enum class Timer { cupti, events };
std::string_view to_string(Timer timer);
Timer parse_timer(std::string_view text);  // "cupti" | "events"; throws std::invalid_argument

struct TimingOptions {
  Timer timer = Timer::cupti;
  KernelActivity kernel_activity = KernelActivity::concurrent;  // the CUPTI kind kernels are recorded with
  StoppingOptions stopping{};
  L2Flush flush = L2Flush::read;
  ThrottleOptions throttle{};
  // Queue each batch behind a kernel that holds the stream until the host has enqueued it all. Off
  // under a profiler that serializes launches (ncu): there the hold's own launch waits for it to
  // end, so it would only time out. GpuTimer turns it off itself when another CUPTI client holds
  // the process.
  bool hold_stream = true;
  double batch_target_s = 2e-3;       // GPU time queued behind one hold: long enough to amortize the probe
  int max_batch = 64;                 // samples per batch at most (events are preallocated)
  double hot_replay_target_s = 1e-3;  // a hot sample is one graph replay of about this length
  int max_graph_launches = 1000;
  // Cold mode rotates among at least this many separately allocated input copies where they fit
  // in placement_budget_bytes, so that its median does not hang on where one allocation lies in
  // DRAM (kgate/suite/benchmark_plan.hpp, input_copies).
  int input_placements = 8;
  double placement_budget_bytes = 4.0 * (1ull << 30);
};

// Launches the code under test on input copy `copy`.
using CopyLaunch = std::function<void(int copy, cudaStream_t stream)>;

class GpuTimer {
 public:
  GpuTimer(const DeviceInfo& device, TimingOptions options);
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  cudaStream_t stream() const { return stream_; }
  const TimingOptions& options() const { return options_; }
  // The clock samples are taken with now: options().timer, unless CUPTI could not record in this
  // process, in which case events, and timer_fallback_reason() says why (empty otherwise).
  Timer timer() const { return timer_; }
  const std::string& timer_fallback_reason() const { return fallback_reason_; }

  // Wall time of the first launch and its completion: module load and lazy loading included, as
  // a serving system pays it on its first request. Meaningful only for a kernel not launched before.
  double first_launch_s(const CopyLaunch& launch);

  TimingRecord measure_cold(const CopyLaunch& launch, int copies);
  // `count` (at most options().max_batch) cold samples on copy 0 taken as measure_cold takes them,
  // in one batch and with no stopping rule: each sample's seconds between its events. For looking
  // at a launch (a kernel trace, which this leaves CUPTI to) under the conditions it is timed in.
  std::vector<double> cold_batch(const CopyLaunch& launch, int count);
  // launch_estimate_s, when known (the cold median), sizes the graph; otherwise one timed launch
  // after a warm-up does.
  TimingRecord measure_hot(const CopyLaunch& launch, std::optional<double> launch_estimate_s = std::nullopt);

  // The SM clock now, in MHz, from a probe kernel spinning a fixed number of cycles.
  double sm_clock_mhz();

  // Empties the L2 as before every cold sample (options().flush), enqueued on stream(): also for
  // work outside the timer that should meet the cache as a cold sample does (the counter pass).
  void flush_l2();
  // Kernels one flush_l2() launches, where that is known: 1 for the read flush (a kernel); none for
  // the write flush (a memset, which the driver may or may not run as a kernel).
  std::optional<std::size_t> flush_kernels() const;

 private:
  // One batch's samples, each in seconds: between the events around the call, and with CUPTI
  // its records' span (summed over the calls of a replay, as the events are) and busy time.
  struct BatchTimes {
    std::vector<double> event_s, span_s, busy_s;
  };

  // Enqueues cold sample s: flush, then the timed call on the next of `copies` input copies.
  // Keeps a reference to `launch`.
  std::function<void(int)> cold_sampler(const CopyLaunch& launch, int copies);
  // Sample s's call between its pair of events and, while a batch records CUPTI activity, marked as
  // call s + 1 of the batch.
  void timed_call(int sample, const std::function<void()>& call);
  // Queues `count` samples behind a hold kernel, releases it and returns each sample's times;
  // with `cupti`, records the calls' activity (each sample `calls_per_sample` calls of one
  // replay). Throws ProfilerError when CUPTI fails.
  BatchTimes run_batch(int count, const std::function<void(int sample)>& enqueue_one, bool cupti = false, int calls_per_sample = 1);
  // Samples in batches of about options().batch_target_s, sized by expected_sample_s or, without
  // it, by a first batch of one sample; with timer(), falling back to events for good when CUPTI
  // fails.
  TimingRecord sample_until_done(std::optional<double> expected_sample_s, const std::function<void(int)>& enqueue_one,
                                 int launches_per_sample);
  TimingRecord sample_with(bool cupti, std::optional<double> expected_sample_s, const std::function<void(int)>& enqueue_one,
                           int launches_per_sample);

  DeviceInfo device_;
  TimingOptions options_;
  Timer timer_;
  std::string fallback_reason_;
  CallActivity* recording_ = nullptr;  // the running batch's CUPTI recording, while there is one
  cudaStream_t stream_ = nullptr;
  std::vector<cudaEvent_t> starts_, stops_;
  DeviceAllocation flush_buffer_;
  unsigned char flush_fill_ = 0;   // a write flush writes different bytes each time
  int* hold_flag_host_ = nullptr;  // pinned, mapped: the host releases the hold by writing 1
  int* hold_flag_device_ = nullptr;
  DeviceAllocation probe_result_;
};

}  // namespace kgate
