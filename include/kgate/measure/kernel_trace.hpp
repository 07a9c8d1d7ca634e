#pragma once
// Which kernels a variant really launched (CUPTI's Activity API), with their launch configuration
// and duration, so a report shows what ran and not only what was asked for.
#include <cstdint>
#include <vector>

#include "kgate/measure/cupti_support.hpp"
#include "kgate/results/results.hpp"

namespace kgate {

// One kernel launch as CUPTI recorded it: what ran, and when on the GPU's clock.
struct KernelLaunch {
  KernelRecord record;               // launches = 1; duration_s = 0 when CUPTI could not time it
  std::uint32_t correlation_id = 0;  // orders the launching API calls
  std::uint64_t start_ns = 0, end_ns = 0;
};

// Records every kernel launched between start() and stop(). One trace may be active per process,
// and not while a CallActivity records or a RangeProfiler is enabled (start() throws ProfilerError).
class KernelTrace {
 public:
  KernelTrace() = default;
  KernelTrace(const KernelTrace&) = delete;
  KernelTrace& operator=(const KernelTrace&) = delete;
  ~KernelTrace();

  void start();
  // Synchronizes the device, then returns the launches folded by (name, grid, block, registers,
  // shared memory), in first-launch order.
  std::vector<KernelRecord> stop();
  // The same launches unfolded, each with its start and end, in the order they started.
  std::vector<KernelLaunch> stop_launches();

 private:
  bool active_ = false;
};

// Launches folded as KernelTrace::stop() folds them.
std::vector<KernelRecord> fold_launches(std::vector<KernelLaunch> launches);

}  // namespace kgate
