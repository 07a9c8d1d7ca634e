#include "range_profiler_config.hpp"

#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <map>
#include <mutex>
#include <utility>

#include "cupti_check.hpp"
#include "kgate/base/text.hpp"
#include "kgate/measure/cupti_support.hpp"
#include "kgate/measure/device.hpp"

namespace kgate::cupti {
namespace {

CUptiResult add_metrics(const HostObject& host, std::vector<const char*> names) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  params.pHostObject = host.get();
  params.ppMetricNames = names.data();
  params.numMetrics = names.size();
  return cuptiProfilerHostConfigAddMetrics(&params);
}

// What the driver says of a device or context, asked once per process and key: every
// RangeProfiler needs the chip and the counter availability, and asking took 0.13 s on an H200
// alone and up to 0.5 s while the host's other GPUs' processes started or profiled (the driver
// serves them one at a time), a third of a CUPTI test case's time.
template <typename Key, typename Value, typename Ask>
Value asked_once(std::map<Key, Value>& answers, std::mutex& mutex, const Key& key, const Ask& ask) {
  const std::lock_guard<std::mutex> hold(mutex);
  if (const auto it = answers.find(key); it != answers.end()) return it->second;
  return answers.emplace(key, ask()).first->second;
}

}  // namespace

CUcontext current_context() {
  const DeviceProbe& probe = probe_device();
  if (!probe.device) throw ProfilerError(probe.reason);
  KGATE_RUNTIME_CHECK(cudaFree(nullptr));  // creates the primary context when there is none yet
  // The driver API through the runtime: linking libcuda would stop every kgate binary from even
  // loading on a machine without the driver.
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  KGATE_RUNTIME_CHECK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &entry, 4000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || entry == nullptr) throw ProfilerError("the driver lacks cuCtxGetCurrent");
  CUcontext context = nullptr;
  const CUresult result = reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(entry)(&context);
  if (result != CUDA_SUCCESS) throw ProfilerError("cuCtxGetCurrent returned CUresult " + std::to_string(result));
  if (context == nullptr) throw ProfilerError("no current CUDA context after cudaFree(0)");
  return context;
}

void initialize_profiler_interface() {
  static const CUptiResult result = [] {
    auto params = KGATE_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    return cuptiProfilerInitialize(&params);
  }();
  check_cupti(result, "cuptiProfilerInitialize");
}

void require_supported_device(CUdevice device) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  params.cuDevice = device;
  params.api = CUPTI_PROFILER_RANGE_PROFILING;
  KGATE_CUPTI_CHECK(cuptiProfilerDeviceSupported(&params));
  if (params.isSupported != CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED && params.isSupported != CUPTI_PROFILER_CONFIGURATION_DISABLED) return;
  const std::pair<const char*, CUpti_Profiler_Support_Level> aspects[] = {{"GPU architecture", params.architecture},
                                                                          {"SLI", params.sli},
                                                                          {"vGPU", params.vGpu},
                                                                          {"confidential computing", params.confidentialCompute},
                                                                          {"CMP", params.cmp},
                                                                          {"WSL", params.wsl}};
  std::vector<std::string> reasons;
  for (const auto& [aspect, level] : aspects) {
    if (level == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED) reasons.push_back(std::string(aspect) + " not supported");
    if (level == CUPTI_PROFILER_CONFIGURATION_DISABLED) reasons.push_back(std::string(aspect) + " disabled");
  }
  throw ProfilerError("the CUPTI range profiler does not support this device (" + join(reasons, ", ") + ")");
}

std::string chip_name(CUdevice device) {
  static std::mutex mutex;
  static std::map<CUdevice, std::string> by_device;
  return asked_once(by_device, mutex, device, [device] {
    auto params = KGATE_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
    params.deviceIndex = static_cast<std::size_t>(device);
    KGATE_CUPTI_CHECK(cuptiDeviceGetChipName(&params));
    return std::string(params.pChipName);
  });
}

std::vector<std::uint8_t> counter_availability(CUcontext context) {
  static std::mutex mutex;
  static std::map<CUcontext, std::vector<std::uint8_t>> by_context;
  return asked_once(by_context, mutex, context, [context] {
    auto params = KGATE_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
    params.ctx = context;
    KGATE_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&params));
    std::vector<std::uint8_t> image(params.counterAvailabilityImageSize);
    params.pCounterAvailabilityImage = image.data();
    KGATE_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&params));
    image.resize(params.counterAvailabilityImageSize);
    return image;
  });
}

std::vector<const char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<const char*> out;
  for (const std::string& s : strings) out.push_back(s.c_str());
  return out;
}

HostObject::HostObject(const std::string& chip, const std::vector<std::uint8_t>& availability) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  params.pChipName = chip.c_str();
  params.pCounterAvailabilityImage = availability.data();
  KGATE_CUPTI_CHECK(cuptiProfilerHostInitialize(&params));
  object_ = params.pHostObject;
}

HostObject::~HostObject() {
  auto params = KGATE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  params.pHostObject = object_;
  cuptiProfilerHostDeinitialize(&params);  // a destructor can only release; a failure here leaves nothing to do
}

// A name that ConfigAddMetrics refuses leaves its host object unusable, so each one is tried on a
// throwaway object (a few ms each), which also lets the error name every bad metric at once.
void reject_unknown_metrics(const std::vector<std::string>& metrics, const std::string& chip,
                            const std::vector<std::uint8_t>& availability) {
  std::vector<std::string> unknown;
  for (const std::string& metric : metrics) {
    const HostObject scratch(chip, availability);
    const CUptiResult result = add_metrics(scratch, {metric.c_str()});
    if (result == CUPTI_ERROR_INVALID_PARAMETER || result == CUPTI_ERROR_INVALID_METRIC_NAME) unknown.push_back(metric);
    else check_cupti(result, "cuptiProfilerHostConfigAddMetrics");
  }
  if (!unknown.empty())
    throw ProfilerError("metrics unknown on " + chip + " or not collectable here: " + join(unknown, ", ") +
                        " (a metric needs a rollup such as .sum or .avg, a ratio a suffix such as .pct)");
}

std::vector<std::uint8_t> config_image(const HostObject& host, const std::vector<std::string>& metrics) {
  check_cupti(add_metrics(host, c_strings(metrics)), "cuptiProfilerHostConfigAddMetrics");
  auto size = KGATE_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  size.pHostObject = host.get();
  KGATE_CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
  std::vector<std::uint8_t> image(size.configImageSize);
  auto get = KGATE_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  get.pHostObject = host.get();
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  KGATE_CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&get));
  return image;
}

std::size_t count_passes(std::vector<std::uint8_t>& config) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  params.configImageSize = config.size();
  params.pConfigImage = config.data();
  KGATE_CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses(&params));
  return params.numOfPasses;
}

}  // namespace kgate::cupti
