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

}  // namespace kgate
