#pragma once
// The GPU activity of each timed call (CUPTI's Activity API): the kernel, memcpy and memset records
// that the timer turns into the call's time on the GPU's own clock (timing.hpp, activity_span.hpp).
#include <cstdint>
#include <string_view>
#include <vector>

#include "kgate/base/activity_span.hpp"
#include "kgate/measure/cupti_support.hpp"

namespace kgate {

// Which CUPTI activity kind records the timed kernels: CONCURRENT_KERNEL leaves kernels free to
// overlap, KERNEL (serial) makes CUPTI serialize every kernel of the process. The timer uses the
// one measured cheaper on short kernels (docs/timing.md).
enum class KernelActivity { concurrent, serial };
std::string_view to_string(KernelActivity kind);
KernelActivity parse_kernel_activity(std::string_view text);  // "concurrent" | "serial"; throws std::invalid_argument

// Records the GPU activity (kernels, memcpys, memsets) of calls the host marks, attributed to each
// call by CUPTI's external correlation: begin_call(id) pushes the id onto the thread's stack, and
// every CUDA API call until end_call() — a kernel launch, cuBLAS's launches, a graph launch and all
// its nodes — carries it to the records it causes. Work the host enqueues outside a call (the L2
// flush, the events) belongs to none. One recorder may be active per process, and not while a
// KernelTrace or a RangeProfiler is.
class CallActivity {
 public:
  explicit CallActivity(KernelActivity kernels = KernelActivity::concurrent) : kernels_(kernels) {}
  CallActivity(const CallActivity&) = delete;
  CallActivity& operator=(const CallActivity&) = delete;
  ~CallActivity();

  void start();  // throws ProfilerError when CUPTI cannot record here (activity_unavailable_reason)
  void begin_call(std::uint64_t id);
  void end_call();
  // Synchronizes the device, flushes CUPTI's buffers and returns the records of calls 1..calls,
  // call id c at index c - 1 (empty where a call left none). Throws ProfilerError when CUPTI
  // dropped records or reported an error.
  std::vector<std::vector<ActivityInterval>> stop(std::uint64_t calls);

 private:
  KernelActivity kernels_;
  bool active_ = false;
};

// What the timer takes from each timed call's records (CallActivity::stop()'s result): its span
// (a sample that replays `calls_per_sample` calls from a graph: the sum of those calls' own spans)
// and its busy time. Throws ProfilerError for a call that left no records (its external
// correlation was lost), since a sample without records has no time.
struct SampleTimes {
  double span_s = 0, busy_s = 0;
};
std::vector<SampleTimes> sample_times(const std::vector<std::vector<ActivityInterval>>& calls, int calls_per_sample);

}  // namespace kgate
