#pragma once
// The CUDA device the process runs on, probed once. Probing never throws: on a machine without a
// GPU (or without a driver) it says why, and callers skip GPU work. What a run records of the
// device is results' DeviceInfo (results/device.hpp); asking CUDA for it is measure's.
#include <optional>
#include <string>

#include "kgate/results/device.hpp"

namespace kgate {

struct DeviceProbe {
  std::optional<DeviceInfo> device;
  std::string reason;  // why there is none: "no CUDA device found (cudaErrorNoDevice: ...)"
};

// The current device (ordinal 0 unless CUDA_VISIBLE_DEVICES or cudaSetDevice say otherwise).
// Cached after the first call.
const DeviceProbe& probe_device();

// The process's context on its device, made now rather than at the first call that needs it: a
// timing process started ahead of its turn makes it while the one before still times
// (suite/next_process.hpp). Throws CudaError.
void create_context();

// Destroys the process's context and everything on it (cudaDeviceReset), for a timing process
// handing its GPU over to the next; warns on standard error when the driver refuses.
void release_device();

}  // namespace kgate
