#include "kgate/measure/call_activity.hpp"

#include <cuda_runtime.h>
#include <cupti_activity.h>

#include <map>
#include <stdexcept>
#include <string>

#include "activity_buffers.hpp"
#include "cupti_check.hpp"
#include "kgate/core/cuda_check.hpp"

namespace kgate {
namespace {

// External correlation needs the API records on: CUPTI writes a call's correlation record just
// before the driver or runtime API record it belongs to.
constexpr CUpti_ActivityKind kCallActivityKinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
                                                     CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
constexpr CUpti_ExternalCorrelationKind kCallCorrelation = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

CUpti_ActivityKind kernel_kind(KernelActivity kind) {
  return kind == KernelActivity::serial ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

// Disables every kind a CallActivity enables and hands the buffered records to the
// buffer-completed callback; the first failure is returned.
CUptiResult end_call_activity(cupti::ActivityBuffers& buffers, KernelActivity kernels) {
  CUptiResult first = cuptiActivityDisable(kernel_kind(kernels));
  for (const CUpti_ActivityKind kind : kCallActivityKinds) {
    const CUptiResult result = cuptiActivityDisable(kind);
    if (first == CUPTI_SUCCESS) first = result;
  }
  const CUptiResult flushed = buffers.finish_recording();
  return first != CUPTI_SUCCESS ? first : flushed;
}

}  // namespace

std::vector<SampleTimes> sample_times(const std::vector<std::vector<ActivityInterval>>& calls, int calls_per_sample) {
  std::vector<SampleTimes> times;
  times.reserve(calls.size());
  for (std::size_t c = 0; c < calls.size(); ++c) {
    if (calls[c].empty())
      throw ProfilerError("CUPTI recorded no kernel, memcpy or memset for timed call " + std::to_string(c + 1) + " of " +
                          std::to_string(calls.size()) + " (external correlation lost?)");
    times.push_back({mean_call_span_s(calls[c], calls_per_sample) * calls_per_sample, busy_s(calls[c])});
  }
  return times;
}

std::string_view to_string(KernelActivity kind) { return kind == KernelActivity::serial ? "serial" : "concurrent"; }

KernelActivity parse_kernel_activity(std::string_view text) {
  if (text == "concurrent") return KernelActivity::concurrent;
  if (text == "serial") return KernelActivity::serial;
  throw std::invalid_argument("unknown CUPTI kernel activity '" + std::string(text) + "' (concurrent | serial)");
}

CallActivity::~CallActivity() {
  if (active_) end_call_activity(cupti::ActivityBuffers::process(), kernels_);
}

void CallActivity::start() {
  if (active_) throw ProfilerError("CallActivity::start() called twice");
  cupti::ActivityBuffers& buffers = cupti::ActivityBuffers::process();
  buffers.start_recording("CallActivity::start()");
  std::string failure;
  if (const CUptiResult r = cuptiActivityEnable(kernel_kind(kernels_)); r != CUPTI_SUCCESS)
    failure = cupti::describe(r, kernels_ == KernelActivity::serial ? "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL)"
                                                                    : "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)");
  for (const CUpti_ActivityKind kind : kCallActivityKinds)
    if (const CUptiResult r = cuptiActivityEnable(kind); r != CUPTI_SUCCESS && failure.empty())
      failure = cupti::describe(r, ("cuptiActivityEnable(kind " + std::to_string(static_cast<int>(kind)) + ")").c_str());
  if (!failure.empty()) {
    end_call_activity(buffers, kernels_);
    throw ProfilerError(failure);
  }
  active_ = true;
}

void CallActivity::begin_call(std::uint64_t id) { KGATE_CUPTI_CHECK(cuptiActivityPushExternalCorrelationId(kCallCorrelation, id)); }

void CallActivity::end_call() { KGATE_CUPTI_CHECK(cuptiActivityPopExternalCorrelationId(kCallCorrelation, nullptr)); }

std::vector<std::vector<ActivityInterval>> CallActivity::stop(std::uint64_t calls) {
  if (!active_) throw ProfilerError("CallActivity::stop() without start()");
  const cudaError_t synchronized = cudaDeviceSynchronize();  // unfinished work has no end time yet
  active_ = false;
  cupti::ActivityBuffers& buffers = cupti::ActivityBuffers::process();
  cupti::check_cupti(end_call_activity(buffers, kernels_), "cuptiActivityDisable/cuptiActivityFlushAll");
  check_cuda(synchronized, "cudaDeviceSynchronize()", __FILE__, __LINE__);

  const cupti::ActivityRecords records = buffers.take();
  if (!records.error.empty()) throw ProfilerError(records.error);
  if (records.dropped > 0) throw ProfilerError("CUPTI dropped " + std::to_string(records.dropped) + " activity records");
  std::map<std::uint32_t, std::uint64_t> call_of;  // correlation id -> call id
  for (const auto& [correlation, call] : records.external_ids) call_of[correlation] = call;
  std::vector<std::vector<ActivityInterval>> by_call(calls);
  const auto keep = [&](std::uint32_t correlation, const ActivityInterval& interval) {
    const auto it = call_of.find(correlation);
    if (it != call_of.end() && it->second >= 1 && it->second <= calls) by_call[it->second - 1].push_back(interval);
  };
  for (const KernelLaunch& launch : records.launches) keep(launch.correlation_id, {launch.start_ns, launch.end_ns});
  for (const auto& [correlation, interval] : records.transfers) keep(correlation, interval);
  return by_call;
}

}  // namespace kgate
