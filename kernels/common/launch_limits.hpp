#pragma once
// Launch sizing from the device's resources: the SM count (probed once per process) and how many
// blocks of one kernel fit on an SM (asked once per kernel). Neither query touches a stream or
// synchronizes, so launch functions that use them stay capturable into CUDA graphs.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kgate/core/cuda_check.hpp"
#include "kgate/measure/device.hpp"

namespace kgate::kernels {

inline int sm_count() {
  const DeviceProbe& probe = probe_device();
  if (!probe.device) throw std::runtime_error("no CUDA device to size a launch for: " + probe.reason);
  return probe.device->sm_count;
}

// A kernel must opt in to more than 48 KiB of dynamic shared memory per block: raises `Kernel`'s
// limit to `Bytes`, once per process.
template <auto Kernel, int Bytes>
void allow_dynamic_shared() {
  static const bool allowed = [] {
    KGATE_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Bytes));
    return true;
  }();
  (void)allowed;
}

// Blocks of `Kernel` (launched with `Threads` threads and `SharedBytes` of dynamic shared memory,
// which it is allowed) that the whole device holds at once: one full wave.
template <auto Kernel, int Threads, int SharedBytes = 0>
int resident_blocks() {
  static const int blocks = [] {
    if (SharedBytes > 0) allow_dynamic_shared<Kernel, SharedBytes>();
    int per_sm = 0;
    KGATE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, Threads, SharedBytes));
    if (per_sm < 1) throw std::runtime_error("kernel does not fit on an SM with " + std::to_string(Threads) + " threads");
    return per_sm * sm_count();
  }();
  return blocks;
}

// One block per row: rows enough for many waves (8 blocks per SM), where throughput, not the latency
// of one row, sets the time.
inline bool rows_for_many_waves(long long rows) { return rows >= 8LL * sm_count(); }

// Grid for a grid-stride loop over `items` work items, `per_thread` per thread and iteration: at
// most one wave, and no more blocks than cover the work in the iterations a full wave would need.
// A full wave over 2.4 waves' worth of work gives 40% of its threads a third iteration that the
// others wait out; 80% of a wave gives every thread three.
template <auto Kernel, int Threads>
unsigned grid_stride_blocks(unsigned long long items, int per_thread = 1) {
  const unsigned long long per_block = static_cast<unsigned long long>(Threads) * per_thread;
  const unsigned long long needed = items > 0 ? (items + per_block - 1) / per_block : 1;
  const unsigned long long wave = static_cast<unsigned long long>(resident_blocks<Kernel, Threads>());
  const unsigned long long iterations = (needed + wave - 1) / wave;
  return static_cast<unsigned>((needed + iterations - 1) / iterations);
}

}  // namespace kgate::kernels
