#include "kgate/measure/kernel_trace.hpp"

#include <cuda_runtime.h>
#include <cupti_activity.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "activity_buffers.hpp"
#include "cupti_check.hpp"
#include "kgate/base/statistics.hpp"
#include "kgate/core/cuda_check.hpp"

namespace kgate {
namespace {

// Disables kernel records and hands every buffered one to the buffer-completed callback.
CUptiResult end_trace(cupti::ActivityBuffers& buffers) {
  const CUptiResult disabled = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const CUptiResult flushed = buffers.finish_recording();
  return disabled != CUPTI_SUCCESS ? disabled : flushed;
}

std::string demangle(const std::string& name) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : name;  // extern "C" kernels stay as they are
}

auto fold_key(const KernelRecord& r) {
  return std::make_tuple(r.name, r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2], r.registers_per_thread,
                         r.static_shared_bytes, r.dynamic_shared_bytes);
}

}  // namespace

// Identical launches become one record. Its duration is the median over the launches, so one cold
// first launch (instruction cache, TLB) does not move it the way it would move a mean.
std::vector<KernelRecord> fold_launches(std::vector<KernelLaunch> launches) {
  // Correlation ids follow the order of the launching API calls; kernels of one graph launch share
  // an id and are ordered by when they started.
  std::stable_sort(launches.begin(), launches.end(), [](const KernelLaunch& a, const KernelLaunch& b) {
    return std::tie(a.correlation_id, a.start_ns) < std::tie(b.correlation_id, b.start_ns);
  });
  std::map<decltype(fold_key(KernelRecord{})), std::size_t> index;
  std::vector<KernelRecord> records;
  std::vector<std::vector<double>> durations;
  for (const KernelLaunch& launch : launches) {
    const auto [slot, inserted] = index.try_emplace(fold_key(launch.record), records.size());
    if (inserted) {
      records.push_back(launch.record);
      records.back().launches = 0;
      records.back().demangled = demangle(launch.record.name);
      durations.emplace_back();
    }
    ++records[slot->second].launches;
    if (launch.record.duration_s > 0) durations[slot->second].push_back(launch.record.duration_s);
  }
  for (std::size_t i = 0; i < records.size(); ++i) records[i].duration_s = durations[i].empty() ? 0 : median(durations[i]);
  return records;
}

KernelTrace::~KernelTrace() {
  if (active_) end_trace(cupti::ActivityBuffers::process());  // abandoned without stop(): only the CUPTI state needs undoing
}

void KernelTrace::start() {
  if (active_) throw ProfilerError("KernelTrace::start() called twice");
  cupti::ActivityBuffers& buffers = cupti::ActivityBuffers::process();
  buffers.start_recording("KernelTrace::start()");
  const CUptiResult result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (result != CUPTI_SUCCESS) {
    buffers.cancel_recording();
    throw ProfilerError(cupti::describe(result, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)"));
  }
  active_ = true;
}

std::vector<KernelRecord> KernelTrace::stop() { return fold_launches(stop_launches()); }

std::vector<KernelLaunch> KernelTrace::stop_launches() {
  if (!active_) throw ProfilerError("KernelTrace::stop() without start()");
  const cudaError_t synchronized = cudaDeviceSynchronize();  // unfinished kernels have no end time yet
  active_ = false;
  cupti::ActivityBuffers& buffers = cupti::ActivityBuffers::process();
  cupti::check_cupti(end_trace(buffers), "cuptiActivityDisable/cuptiActivityFlushAll");
  check_cuda(synchronized, "cudaDeviceSynchronize()", __FILE__, __LINE__);

  cupti::ActivityRecords records = buffers.take();
  if (!records.error.empty()) throw ProfilerError(records.error);
  if (records.dropped > 0) throw ProfilerError("CUPTI dropped " + std::to_string(records.dropped) + " kernel activity records");
  std::vector<KernelLaunch> launches = std::move(records.launches);
  for (KernelLaunch& launch : launches) launch.record.demangled = demangle(launch.record.name);
  std::stable_sort(launches.begin(), launches.end(), [](const KernelLaunch& a, const KernelLaunch& b) {
    return std::tie(a.start_ns, a.correlation_id) < std::tie(b.start_ns, b.correlation_id);
  });
  return launches;
}

}  // namespace kgate
