#pragma once
// The CUDA device a run ran on, as far as kgate needs to know it. measure/device.hpp probes it.
#include <cstddef>
#include <string>

namespace kgate {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::string uuid;
  int compute_capability = 0;  // major * 10 + minor
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t global_memory_bytes = 0;
  int memory_bus_bits = 0;
  int memory_clock_khz = 0;  // as reported by the driver (0 where the runtime no longer reports it)
  int sm_clock_khz = 0;
  int driver_version = 0;  // e.g. 13000
  int runtime_version = 0;
};

}  // namespace kgate
