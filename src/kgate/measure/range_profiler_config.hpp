#pragma once
// What a RangeProfiler settles once, when it is made: the context and device it counts on, CUPTI's
// profiler interface, and the counter configuration of its metrics (CUPTI's host side: which
// counters each metric needs, scheduled onto those this context may read, in how many passes).
// Each throws ProfilerError, naming what this device or process lacks.
#include <cuda.h>
#include <cupti_profiler_host.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kgate::cupti {

// The current CUDA context, made (the primary one) where there is none yet.
CUcontext current_context();

// Once per process and never undone: CUPTI loads its profiling libraries and hooks the driver
// here, and every RangeProfiler of the process shares that.
void initialize_profiler_interface();

// Throws, saying which aspect (architecture, vGPU, confidential computing, ...), where the range
// profiler does not support `device`.
void require_supported_device(CUdevice device);
std::string chip_name(CUdevice device);
// Which counters this context may read (some are withheld, e.g. under MIG or vGPU); the host
// object schedules metrics only onto those. Both are asked of the driver once per process (per
// device, per context) and remembered.
std::vector<std::uint8_t> counter_availability(CUcontext context);

// CUPTI's host object for one chip: it turns metric names into a configuration and counter data
// into metric values.
class HostObject {
 public:
  HostObject(const std::string& chip, const std::vector<std::uint8_t>& availability);
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  ~HostObject();
  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

// Throws naming every metric in `metrics` that this chip does not know or this context cannot collect.
void reject_unknown_metrics(const std::vector<std::string>& metrics, const std::string& chip,
                            const std::vector<std::uint8_t>& availability);
// The configuration image that collects `metrics`, and the replay passes it needs.
std::vector<std::uint8_t> config_image(const HostObject& host, const std::vector<std::string>& metrics);
std::size_t count_passes(std::vector<std::uint8_t>& config);

// The names as CUPTI takes them, valid while `strings` is.
std::vector<const char*> c_strings(const std::vector<std::string>& strings);

}  // namespace kgate::cupti
