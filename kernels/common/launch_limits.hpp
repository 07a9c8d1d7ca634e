#pragma once
// Launch sizing from the device's resources: the SM count (probed once per process) and how many
// blocks of one kernel fit on an SM (asked once per kernel). Neither query touches a stream or
// synchronizes, so launch functions that use them stay capturable into CUDA graphs.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kgate/cuda_check.hpp"
#include "kgate/device.hpp"

namespace kgate::kernels {

inline int sm_count() {
  const DeviceProbe& probe = probe_device();
  if (!probe.device) throw std::runtime_error("no CUDA device to size a launch for: " + probe.reason);
  return probe.device->sm_count;
}

// Blocks of `Kernel` (launched with `Threads` threads and no dynamic shared memory) that the whole
// device holds at once: one full wave.
template <auto Kernel, int Threads>
int resident_blocks() {
  static const int blocks = [] {
    int per_sm = 0;
    KGATE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, Threads, 0));
    if (per_sm < 1) throw std::runtime_error("kernel does not fit on an SM with " + std::to_string(Threads) + " threads");
    return per_sm * sm_count();
  }();
  return blocks;
}

// Grid for a grid-stride loop over `items` work items, `per_thread` per thread and iteration:
// enough blocks to cover the work, never more than one wave.
template <auto Kernel, int Threads>
unsigned grid_stride_blocks(unsigned long long items, int per_thread = 1) {
  const unsigned long long per_block = static_cast<unsigned long long>(Threads) * per_thread;
  const unsigned long long needed = (items + per_block - 1) / per_block;
  const unsigned long long wave = static_cast<unsigned long long>(resident_blocks<Kernel, Threads>());
  return static_cast<unsigned>(needed < wave ? (needed > 0 ? needed : 1) : wave);
}

}  // namespace kgate::kernels
