#include "kgate/measure/cupti.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cupti_activity.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <tuple>
#include <utility>

#include "kgate/core/cuda_check.hpp"
#include "kgate/measure/device.hpp"
#include "kgate/base/phase_clock.hpp"
#include "kgate/base/statistics.hpp"

namespace kgate {
namespace {

// ---------------------------------------------------------------------------------------------
// Errors

std::string result_name(CUptiResult result) {
  const char* name = nullptr;
  if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS || name == nullptr)
    return "CUPTI error " + std::to_string(static_cast<int>(result));
  return name;
}

static_assert(std::string_view("; another CUPTI client already holds this process").substr(2) == kAnotherCuptiClient,
              "the remedy below must say what kAnotherCuptiClient looks for");

// The two failures that mean "not on this machine, not now" get a sentence on what to do about them.
const char* remedy(CUptiResult result) {
  switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return "; GPU performance counters are restricted to administrators here: run as root, or load the "
             "NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "; another CUPTI client already holds this process (Nsight Compute, Nsight Systems or cuda-gdb)";
    default:
      return "";
  }
}

std::string describe(CUptiResult result, const char* call) {
  std::string text = std::string(call) + " returned " + result_name(result);
  const char* message = nullptr;
  if (cuptiGetErrorMessage(result, &message) == CUPTI_SUCCESS && message != nullptr && *message != '\0')
    text += std::string(" (") + message + ")";
  return text + remedy(result);
}

void check_cupti(CUptiResult result, const char* call) {
  if (result != CUPTI_SUCCESS) throw ProfilerError(describe(result, call));
}

// CUDA failures while setting CUPTI up mean "no counters here", not a broken benchmark.
void check_runtime(cudaError_t result, const char* call) {
  if (result != cudaSuccess) throw ProfilerError(std::string(call) + " returned " + cudaGetErrorName(result));
}

#define KGATE_CUPTI_CHECK(expr) check_cupti((expr), #expr)
#define KGATE_RUNTIME_CHECK(expr) check_runtime((expr), #expr)

// CUPTI's parameter structs, zeroed, with the size CUPTI uses to tell their versions apart.
template <class Params>
Params sized(std::size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}
#define KGATE_CUPTI_PARAMS(type) sized<type>(type##_STRUCT_SIZE)

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Activity API

using TracedLaunch = KernelLaunch;

// Filled by CUPTI's buffer-completed callback, which may run on a CUPTI thread and cannot throw:
// failures wait here for KernelTrace::stop() to report them.
struct ActivitySink {
  std::mutex mutex;
  std::vector<TracedLaunch> launches;  // kernel records
  std::vector<std::pair<std::uint32_t, ActivityInterval>> transfers;  // memcpy and memset records, by correlation id
  std::vector<std::pair<std::uint32_t, std::uint64_t>> external_ids;  // correlation id -> external (call) id
  std::size_t dropped = 0;
  std::string error;
};

// Never destroyed: CUPTI may hand back its last buffers while the process exits, after static
// destructors have run.
ActivitySink& sink() {
  static ActivitySink* const instance = new ActivitySink;
  return *instance;
}

// Set while a KernelTrace or a CallActivity records: the sink and the enabled kinds are theirs.
std::atomic<bool>& trace_running() {
  static std::atomic<bool> running{false};
  return running;
}

// Set while a RangeProfiler holds the profiler enabled: kernel records taken then would include
// its replay passes' bookkeeping, so a trace refuses to start.
std::atomic<bool>& profiler_enabled() {
  static std::atomic<bool> enabled{false};
  return enabled;
}

// Takes the sink for a new recording, emptied; throws when someone else records or profiles.
void claim_sink(const char* who) {
  if (const std::string reason = activity_unavailable_reason(); !reason.empty()) throw ProfilerError(reason);
  if (profiler_enabled()) throw ProfilerError(std::string(who) + " while a RangeProfiler is enabled");
  if (trace_running().exchange(true)) throw ProfilerError(std::string(who) + " while another CUPTI activity recording is running");
  ActivitySink& target = sink();
  const std::lock_guard lock(target.mutex);
  target.launches.clear();
  target.transfers.clear();
  target.external_ids.clear();
  target.dropped = 0;
  target.error.clear();
}

constexpr std::size_t kActivityBufferBytes = 4u << 20;
constexpr std::size_t kActivityBufferAlignment = 8;  // CUPTI's requirement

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kActivityBufferAlignment, kActivityBufferBytes));
  *size = *buffer != nullptr ? kActivityBufferBytes : 0;  // no buffer: CUPTI drops records and counts them
  *max_records = 0;                                        // as many as fit
}

TracedLaunch to_launch(const CUpti_ActivityKernel10& kernel) {
  TracedLaunch launch;
  KernelRecord& record = launch.record;
  record.name = kernel.name != nullptr ? kernel.name : "";
  record.grid[0] = kernel.gridX;
  record.grid[1] = kernel.gridY;
  record.grid[2] = kernel.gridZ;
  record.block[0] = kernel.blockX;
  record.block[1] = kernel.blockY;
  record.block[2] = kernel.blockZ;
  record.registers_per_thread = kernel.registersPerThread;
  record.static_shared_bytes = kernel.staticSharedMemory;
  record.dynamic_shared_bytes = kernel.dynamicSharedMemory;
  record.launches = 1;
  if (kernel.end > kernel.start) record.duration_s = static_cast<double>(kernel.end - kernel.start) * 1e-9;
  launch.correlation_id = kernel.correlationId;
  launch.start_ns = kernel.start;
  launch.end_ns = kernel.end;
  return launch;
}

void read_records(std::uint8_t* buffer, std::size_t valid_size) {
  std::vector<TracedLaunch> launches;
  std::vector<std::pair<std::uint32_t, ActivityInterval>> transfers;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> external_ids;
  std::string error;
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_size, &record);
    if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (status != CUPTI_SUCCESS) {
      error = describe(status, "cuptiActivityGetNextRecord");
      break;
    }
    // libcupti.so.13 writes its newest records, which are this toolkit's structs of these names.
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL:
        launches.push_back(to_launch(*reinterpret_cast<const CUpti_ActivityKernel10*>(record)));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto& copy = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        transfers.push_back({copy.correlationId, {copy.start, copy.end}});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto& set = *reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        transfers.push_back({set.correlationId, {set.start, set.end}});
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto& link = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        external_ids.push_back({link.correlationId, link.externalId});
        break;
      }
      default:  // the API records that external correlation needs enabled: nothing to keep
        break;
    }
  }
  std::size_t dropped = 0;
  const CUptiResult dropped_status = cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  if (dropped_status != CUPTI_SUCCESS && error.empty())
    error = describe(dropped_status, "cuptiActivityGetNumDroppedRecords");

  ActivitySink& target = sink();
  const std::lock_guard lock(target.mutex);
  target.launches.insert(target.launches.end(), std::make_move_iterator(launches.begin()),
                         std::make_move_iterator(launches.end()));
  target.transfers.insert(target.transfers.end(), transfers.begin(), transfers.end());
  target.external_ids.insert(target.external_ids.end(), external_ids.begin(), external_ids.end());
  target.dropped += dropped;
  if (target.error.empty()) target.error = std::move(error);
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid_size) {
  try {
    read_records(buffer, valid_size);
  } catch (...) {  // out of memory; an exception must not unwind into CUPTI
    ActivitySink& target = sink();
    const std::lock_guard lock(target.mutex);
    target.error = "out of memory while reading CUPTI activity records";
  }
  std::free(buffer);
}

std::string check_activity() {
  const DeviceProbe& probe = probe_device();
  if (!probe.device) return probe.reason;
  CUptiResult result = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (result != CUPTI_SUCCESS) return describe(result, "cuptiActivityRegisterCallbacks");
  // Enabling is where CUPTI refuses when another tool (Nsight Systems, Nsight Compute) is attached.
  result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (result != CUPTI_SUCCESS) return describe(result, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)");
  result = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (result != CUPTI_SUCCESS) return describe(result, "cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)");
  return {};
}

// Disables kernel records and hands every buffered one to buffer_completed.
CUptiResult end_activity() {
  const CUptiResult disabled = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  trace_running() = false;
  return disabled != CUPTI_SUCCESS ? disabled : flushed;
}

std::string demangle(const std::string& name) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : name;  // extern "C" kernels stay as they are
}

auto fold_key(const KernelRecord& r) {
  return std::make_tuple(r.name, r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2],
                         r.registers_per_thread, r.static_shared_bytes, r.dynamic_shared_bytes);
}

// Identical launches become one record. Its duration is the median over the launches, so one cold
// first launch (instruction cache, TLB) does not move it the way it would move a mean.
std::vector<KernelRecord> fold(std::vector<TracedLaunch> launches) {
  // Correlation ids follow the order of the launching API calls; kernels of one graph launch share
  // an id and are ordered by when they started.
  std::stable_sort(launches.begin(), launches.end(), [](const TracedLaunch& a, const TracedLaunch& b) {
    return std::tie(a.correlation_id, a.start_ns) < std::tie(b.correlation_id, b.start_ns);
  });
  std::map<decltype(fold_key(KernelRecord{})), std::size_t> index;
  std::vector<KernelRecord> records;
  std::vector<std::vector<double>> durations;
  for (const TracedLaunch& launch : launches) {
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
  for (std::size_t i = 0; i < records.size(); ++i)
    records[i].duration_s = durations[i].empty() ? 0 : median(durations[i]);
  return records;
}

// ---------------------------------------------------------------------------------------------
// Range profiler

constexpr const char* kDurationMetric = "gpu__time_duration.sum";
// A replay that CUPTI never declares complete ends here with an error instead of looping on; the
// largest metric sets need a few dozen passes.
constexpr std::size_t kMaxPassesPerProfile = 256;

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

// Once per process and never undone: CUPTI loads its profiling libraries and hooks the driver
// here, and every RangeProfiler of the process shares that.
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
  if (params.isSupported != CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED &&
      params.isSupported != CUPTI_PROFILER_CONFIGURATION_DISABLED)
    return;
  const std::pair<const char*, CUpti_Profiler_Support_Level> aspects[] = {
      {"GPU architecture", params.architecture}, {"SLI", params.sli},
      {"vGPU", params.vGpu},                     {"confidential computing", params.confidentialCompute},
      {"CMP", params.cmp},                       {"WSL", params.wsl}};
  std::vector<std::string> reasons;
  for (const auto& [aspect, level] : aspects) {
    if (level == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED) reasons.push_back(std::string(aspect) + " not supported");
    if (level == CUPTI_PROFILER_CONFIGURATION_DISABLED) reasons.push_back(std::string(aspect) + " disabled");
  }
  throw ProfilerError("the CUPTI range profiler does not support this device (" + join(reasons) + ")");
}

std::string chip_name(CUdevice device) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  params.deviceIndex = static_cast<std::size_t>(device);
  KGATE_CUPTI_CHECK(cuptiDeviceGetChipName(&params));
  return params.pChipName;
}

// Which counters this context may read (some are withheld, e.g. under MIG or vGPU); the host
// object schedules metrics only onto those.
std::vector<std::uint8_t> counter_availability(CUcontext context) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  params.ctx = context;
  KGATE_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&params));
  std::vector<std::uint8_t> image(params.counterAvailabilityImageSize);
  params.pCounterAvailabilityImage = image.data();
  KGATE_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&params));
  image.resize(params.counterAvailabilityImageSize);
  return image;
}

std::vector<const char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<const char*> out;
  for (const std::string& s : strings) out.push_back(s.c_str());
  return out;
}

class HostObject {
 public:
  HostObject(const std::string& chip, const std::vector<std::uint8_t>& availability) {
    auto params = KGATE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    params.pChipName = chip.c_str();
    params.pCounterAvailabilityImage = availability.data();
    KGATE_CUPTI_CHECK(cuptiProfilerHostInitialize(&params));
    object_ = params.pHostObject;
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  ~HostObject() {
    auto params = KGATE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    params.pHostObject = object_;
    cuptiProfilerHostDeinitialize(&params);  // a destructor can only release; a failure here leaves nothing to do
  }
  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

CUptiResult add_metrics(const HostObject& host, std::vector<const char*> names) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  params.pHostObject = host.get();
  params.ppMetricNames = names.data();
  params.numMetrics = names.size();
  return cuptiProfilerHostConfigAddMetrics(&params);
}

// A name that ConfigAddMetrics refuses leaves its host object unusable, so each one is tried on a
// throwaway object (a few ms each), which also lets the error name every bad metric at once.
void reject_unknown_metrics(const std::vector<std::string>& metrics, const std::string& chip,
                            const std::vector<std::uint8_t>& availability) {
  std::vector<std::string> unknown;
  for (const std::string& metric : metrics) {
    const HostObject scratch(chip, availability);
    const CUptiResult result = add_metrics(scratch, {metric.c_str()});
    if (result == CUPTI_ERROR_INVALID_PARAMETER || result == CUPTI_ERROR_INVALID_METRIC_NAME)
      unknown.push_back(metric);
    else
      check_cupti(result, "cuptiProfilerHostConfigAddMetrics");
  }
  if (!unknown.empty())
    throw ProfilerError("metrics unknown on " + chip + " or not collectable here: " + join(unknown) +
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

CUptiResult disable_range_profiler(CUpti_RangeProfiler_Object* profiler) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
  params.pRangeProfilerObject = profiler;
  return cuptiRangeProfilerDisable(&params);
}

// The range profiler enabled on a context, from a RangeProfiler's first profile() call until the
// RangeProfiler goes: enabling costs more than a small kernel's whole replay, so a benchmark run
// enables it once for its counter pass, after all timing, and no timed launch meets an armed context.
class EnabledRangeProfiler {
 public:
  explicit EnabledRangeProfiler(CUcontext context) {
    auto params = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
    params.ctx = context;
    KGATE_CUPTI_CHECK(cuptiRangeProfilerEnable(&params));
    object_ = params.pRangeProfilerObject;
  }
  EnabledRangeProfiler(const EnabledRangeProfiler&) = delete;
  EnabledRangeProfiler& operator=(const EnabledRangeProfiler&) = delete;
  ~EnabledRangeProfiler() {
    if (object_ != nullptr) disable_range_profiler(object_);  // unwinding: the first error is the one to report
  }
  void disable() { check_cupti(disable_range_profiler(std::exchange(object_, nullptr)), "cuptiRangeProfilerDisable"); }
  CUpti_RangeProfiler_Object* get() const { return object_; }

 private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

std::vector<std::uint8_t> counter_data_image(CUpti_RangeProfiler_Object* profiler, std::vector<const char*> names) {
  auto size = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = profiler;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = kMaxRangesPerProfile;
  size.maxNumRangeTreeNodes = kMaxRangesPerProfile;
  KGATE_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
  std::vector<std::uint8_t> image(size.counterDataSize);
  auto init = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  init.pRangeProfilerObject = profiler;
  init.counterDataSize = image.size();
  init.pCounterData = image.data();
  KGATE_CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));
  return image;
}

// Auto range with user replay: CUPTI's kernel replay would run every pass on device memory it
// saved and restored itself, which leaves the L2 unlike any timed launch; under user replay the
// application runs each pass and prepares the device for it.
void set_config(CUpti_RangeProfiler_Object* profiler, const std::vector<std::uint8_t>& config,
                std::vector<std::uint8_t>& counter_data) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  params.pRangeProfilerObject = profiler;
  params.configSize = config.size();
  params.pConfig = config.data();
  params.counterDataImageSize = counter_data.size();
  params.pCounterDataImage = counter_data.data();
  params.range = CUPTI_AutoRange;
  params.replayMode = CUPTI_UserReplay;
  params.maxRangesPerPass = kMaxRangesPerProfile;
  params.numNestingLevels = 1;  // auto ranges are never nested
  params.minNestingLevel = 1;
  params.passIndex = 0;
  params.targetNestingLevel = 1;
  KGATE_CUPTI_CHECK(cuptiRangeProfilerSetConfig(&params));
}

void launch_and_wait(const std::function<void()>& launch_once) {
  launch_once();
  KGATE_CUDA_CHECK(cudaGetLastError());
  KGATE_CUDA_CHECK(cudaDeviceSynchronize());
}

// One pass: `outside` before the pass (its kernels profiled in no range), then the pass itself,
// in which auto range makes every kernel `profiled` launches a range. Returns whether CUPTI has
// every pass its configuration needs.
bool run_pass(CUpti_RangeProfiler_Object* profiler, const PassSetup& outside, const std::function<void()>& profiled) {
  if (outside) outside();
  KGATE_CUDA_CHECK(cudaDeviceSynchronize());  // the setup's work, on whatever stream, ends before the pass
  auto start = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
  start.pRangeProfilerObject = profiler;
  KGATE_CUPTI_CHECK(cuptiRangeProfilerStart(&start));
  auto stop = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
  stop.pRangeProfilerObject = profiler;
  try {
    launch_and_wait(profiled);
  } catch (...) {
    cuptiRangeProfilerStop(&stop);  // the launch's own error is the one worth reporting
    throw;
  }
  KGATE_CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
  return stop.isAllPassSubmitted != 0;
}

void run_passes(CUpti_RangeProfiler_Object* profiler, const PassSetup& outside, const std::function<void()>& profiled) {
  for (std::size_t pass = 0; pass < kMaxPassesPerProfile; ++pass)
    if (run_pass(profiler, outside, profiled)) return;
  throw ProfilerError("CUPTI did not complete its user replay within " + std::to_string(kMaxPassesPerProfile) +
                      " passes");
}

void decode(CUpti_RangeProfiler_Object* profiler) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  params.pRangeProfilerObject = profiler;
  KGATE_CUPTI_CHECK(cuptiRangeProfilerDecodeData(&params));
  if (params.numOfRangeDropped > 0)
    throw ProfilerError(std::to_string(params.numOfRangeDropped) + " kernel(s) were not profiled: one profile() call " +
                        "may launch at most " + std::to_string(kMaxRangesPerProfile) + " kernels");
}

std::vector<KernelMetrics> evaluate(const HostObject& host, const std::vector<std::string>& metrics,
                                    const std::vector<std::uint8_t>& counter_data) {
  auto info = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  KGATE_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));

  std::vector<const char*> names = c_strings(metrics);
  std::vector<KernelMetrics> kernels;
  for (std::size_t range = 0; range < info.numTotalRanges; ++range) {
    auto range_info = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params);
    range_info.pCounterDataImage = counter_data.data();
    range_info.counterDataImageSize = counter_data.size();
    range_info.rangeIndex = range;
    range_info.rangeDelimiter = "/";
    KGATE_CUPTI_CHECK(cuptiRangeProfilerCounterDataGetRangeInfo(&range_info));

    std::vector<double> values(names.size());
    auto evaluation = KGATE_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
    evaluation.pHostObject = host.get();
    evaluation.pCounterDataImage = counter_data.data();
    evaluation.counterDataImageSize = counter_data.size();
    evaluation.rangeIndex = range;
    evaluation.ppMetricNames = names.data();
    evaluation.numMetrics = names.size();
    evaluation.pMetricValues = values.data();
    KGATE_CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&evaluation));

    KernelMetrics& kernel = kernels.emplace_back();
    kernel.range_name = range_info.rangeName != nullptr ? range_info.rangeName : std::to_string(range);
    for (std::size_t i = 0; i < names.size(); ++i) kernel.values[metrics[i]] = values[i];
  }
  return kernels;
}

// Counts add up over kernels; everything else is a rate or a ratio of one kernel's run, which
// counts for the whole call in proportion to how long that kernel ran.
std::map<std::string, double> combine(const std::vector<KernelMetrics>& kernels,
                                      const std::vector<std::string>& metrics) {
  double total_time = 0;
  for (const KernelMetrics& kernel : kernels) total_time += kernel.values.at(kDurationMetric);
  std::map<std::string, double> combined;
  for (const std::string& metric : metrics) {
    const bool additive = metric.ends_with(".sum");
    double value = 0;
    for (const KernelMetrics& kernel : kernels) {
      const double weight = total_time > 0 ? kernel.values.at(kDurationMetric) / total_time
                                           : 1.0 / static_cast<double>(kernels.size());
      value += kernel.values.at(metric) * (additive ? 1.0 : weight);
    }
    if (!kernels.empty()) combined[metric] = value;
  }
  return combined;
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::string check_counters() {
  try {
    const RangeProfiler probe(std::vector<std::string>{kDurationMetric});
  } catch (const std::exception& error) {
    return error.what();
  }
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string activity_unavailable_reason() {
  static const std::string reason = check_activity();
  return reason;
}

std::string counters_unavailable_reason() {
  static const std::string reason = check_counters();
  return reason;
}

KernelTrace::~KernelTrace() {
  if (active_) end_activity();  // abandoned without stop(): only the CUPTI state needs undoing
}

void KernelTrace::start() {
  if (active_) throw ProfilerError("KernelTrace::start() called twice");
  claim_sink("KernelTrace::start()");
  const CUptiResult result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (result != CUPTI_SUCCESS) {
    trace_running() = false;
    throw ProfilerError(describe(result, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)"));
  }
  active_ = true;
}

std::vector<KernelRecord> KernelTrace::stop() { return fold(stop_launches()); }

std::vector<KernelRecord> fold_launches(std::vector<KernelLaunch> launches) { return fold(std::move(launches)); }

// ---------------------------------------------------------------------------------------------
// CallActivity

namespace {

// External correlation needs the API records on: CUPTI writes a call's correlation record just
// before the driver or runtime API record it belongs to.
constexpr CUpti_ActivityKind kCallActivityKinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                                     CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                                                     CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
constexpr CUpti_ExternalCorrelationKind kCallCorrelation = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

CUpti_ActivityKind kernel_kind(KernelActivity kind) {
  return kind == KernelActivity::serial ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

// Disables every kind a CallActivity enables and hands the buffered records to buffer_completed;
// the first failure is returned.
CUptiResult end_call_activity(KernelActivity kernels) {
  CUptiResult first = cuptiActivityDisable(kernel_kind(kernels));
  for (const CUpti_ActivityKind kind : kCallActivityKinds) {
    const CUptiResult result = cuptiActivityDisable(kind);
    if (first == CUPTI_SUCCESS) first = result;
  }
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  trace_running() = false;
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
  if (active_) end_call_activity(kernels_);
}

void CallActivity::start() {
  if (active_) throw ProfilerError("CallActivity::start() called twice");
  claim_sink("CallActivity::start()");
  std::string failure;
  if (const CUptiResult r = cuptiActivityEnable(kernel_kind(kernels_)); r != CUPTI_SUCCESS)
    failure = describe(r, kernels_ == KernelActivity::serial ? "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL)"
                                                              : "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)");
  for (const CUpti_ActivityKind kind : kCallActivityKinds)
    if (const CUptiResult r = cuptiActivityEnable(kind); r != CUPTI_SUCCESS && failure.empty())
      failure = describe(r, ("cuptiActivityEnable(kind " + std::to_string(static_cast<int>(kind)) + ")").c_str());
  if (!failure.empty()) {
    end_call_activity(kernels_);
    throw ProfilerError(failure);
  }
  active_ = true;
}

void CallActivity::begin_call(std::uint64_t id) {
  KGATE_CUPTI_CHECK(cuptiActivityPushExternalCorrelationId(kCallCorrelation, id));
}

void CallActivity::end_call() { KGATE_CUPTI_CHECK(cuptiActivityPopExternalCorrelationId(kCallCorrelation, nullptr)); }

std::vector<std::vector<ActivityInterval>> CallActivity::stop(std::uint64_t calls) {
  if (!active_) throw ProfilerError("CallActivity::stop() without start()");
  const cudaError_t synchronized = cudaDeviceSynchronize();  // unfinished work has no end time yet
  active_ = false;
  check_cupti(end_call_activity(kernels_), "cuptiActivityDisable/cuptiActivityFlushAll");
  check_cuda(synchronized, "cudaDeviceSynchronize()", __FILE__, __LINE__);

  ActivitySink& target = sink();
  const std::lock_guard lock(target.mutex);
  if (!target.error.empty()) throw ProfilerError(target.error);
  if (target.dropped > 0) throw ProfilerError("CUPTI dropped " + std::to_string(target.dropped) + " activity records");
  std::map<std::uint32_t, std::uint64_t> call_of;  // correlation id -> call id
  for (const auto& [correlation, call] : target.external_ids) call_of[correlation] = call;
  std::vector<std::vector<ActivityInterval>> by_call(calls);
  const auto keep = [&](std::uint32_t correlation, const ActivityInterval& interval) {
    const auto it = call_of.find(correlation);
    if (it != call_of.end() && it->second >= 1 && it->second <= calls) by_call[it->second - 1].push_back(interval);
  };
  for (const TracedLaunch& launch : target.launches) keep(launch.correlation_id, {launch.start_ns, launch.end_ns});
  for (const auto& [correlation, interval] : target.transfers) keep(correlation, interval);
  target.launches.clear();
  target.transfers.clear();
  target.external_ids.clear();
  return by_call;
}

std::vector<KernelLaunch> KernelTrace::stop_launches() {
  if (!active_) throw ProfilerError("KernelTrace::stop() without start()");
  const cudaError_t synchronized = cudaDeviceSynchronize();  // unfinished kernels have no end time yet
  active_ = false;
  check_cupti(end_activity(), "cuptiActivityDisable/cuptiActivityFlushAll");
  check_cuda(synchronized, "cudaDeviceSynchronize()", __FILE__, __LINE__);

  std::vector<TracedLaunch> launches;
  {
    ActivitySink& target = sink();
    const std::lock_guard lock(target.mutex);
    if (!target.error.empty()) throw ProfilerError(target.error);
    if (target.dropped > 0)
      throw ProfilerError("CUPTI dropped " + std::to_string(target.dropped) + " kernel activity records");
    launches.swap(target.launches);
  }
  for (TracedLaunch& launch : launches) launch.record.demangled = demangle(launch.record.name);
  std::stable_sort(launches.begin(), launches.end(), [](const TracedLaunch& a, const TracedLaunch& b) {
    return std::tie(a.start_ns, a.correlation_id) < std::tie(b.start_ns, b.correlation_id);
  });
  return launches;
}

std::vector<std::string> default_range_metrics() {
  return {
      kDurationMetric,
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "lts__t_sector_hit_rate.pct",
      "l1tex__t_sector_hit_rate.pct",
      // Every tensor-core instruction (HMMA, IMMA, Hopper's wgmma), not only the HMMA subset.
      "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
  };
}

struct RangeProfiler::State {
  std::vector<std::string> metrics;    // as asked for
  std::vector<std::string> collected;  // plus gpu__time_duration.sum, which combining needs
  PassSetup before_each_pass;
  CUcontext context = nullptr;
  std::unique_ptr<HostObject> host;
  std::vector<std::uint8_t> config;
  std::size_t passes = 0;
  std::unique_ptr<EnabledRangeProfiler> enabled;  // from the first profile() on
  PhaseSeconds seconds_by_step;

  void disable() {
    enabled.reset();
    profiler_enabled() = false;
  }
};

RangeProfiler::RangeProfiler(std::vector<std::string> metrics, PassSetup before_each_pass)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.metrics = std::move(metrics);
  s.before_each_pass = std::move(before_each_pass);
  s.collected = s.metrics;
  if (!contains(s.collected, kDurationMetric)) s.collected.push_back(kDurationMetric);

  s.context = current_context();
  initialize_profiler_interface();
  int device = 0;  // the runtime's ordinal is the driver's CUdevice and CUPTI's device index
  KGATE_RUNTIME_CHECK(cudaGetDevice(&device));
  require_supported_device(device);
  const std::string chip = chip_name(device);
  const std::vector<std::uint8_t> availability = counter_availability(s.context);

  reject_unknown_metrics(s.collected, chip, availability);
  s.host = std::make_unique<HostObject>(chip, availability);
  s.config = config_image(*s.host, s.collected);
  s.passes = count_passes(s.config);

  // Permission and a second profiling client are refused here, at enabling: better now than at
  // the first profile() in the middle of a run.
  EnabledRangeProfiler(s.context).disable();
}

RangeProfiler::~RangeProfiler() {
  if (state_ && state_->enabled) state_->disable();
}

std::vector<KernelMetrics> RangeProfiler::session(const std::vector<std::function<void()>>& calls,
                                                 const PassSetup& outside, const std::function<void()>& profiled) {
  // A trace would record every replayed pass as a launch of its own.
  if (trace_running()) throw ProfilerError("RangeProfiler::profile() while a KernelTrace is recording");
  State& s = *state_;
  if (!s.enabled) {
    s.enabled = std::make_unique<EnabledRangeProfiler>(s.context);
    profiler_enabled() = true;
  }
  CUpti_RangeProfiler_Object* profiler = s.enabled->get();
  PhaseClock clock(s.seconds_by_step);
  std::vector<std::uint8_t> counter_data;
  try {
    // Unprofiled: one-time work must not fall into the first pass only.
    for (const std::function<void()>& call : calls) launch_and_wait(call);
    clock.lap("unprofiled");
    counter_data = counter_data_image(profiler, c_strings(s.collected));
    set_config(profiler, s.config, counter_data);
    clock.lap("configure");
    run_passes(profiler, outside, profiled);
    clock.lap("passes");
    decode(profiler);
    clock.lap("decode");
  } catch (...) {
    s.disable();  // the next call starts afresh, not inside a replay left half done
    throw;
  }
  std::vector<KernelMetrics> kernels = evaluate(*s.host, s.collected, counter_data);
  clock.lap("evaluate");
  return kernels;
}

RangeProfile RangeProfiler::result_of(std::vector<KernelMetrics> kernels) const {
  const State& s = *state_;
  RangeProfile result;
  result.kernels = std::move(kernels);
  result.combined = combine(result.kernels, s.collected);
  if (!contains(s.metrics, kDurationMetric)) {
    for (KernelMetrics& kernel : result.kernels) kernel.values.erase(kDurationMetric);
    result.combined.erase(kDurationMetric);
  }
  return result;
}

RangeProfile RangeProfiler::profile(const std::function<void()>& launch_once) {
  return result_of(session({launch_once}, state_->before_each_pass, launch_once));
}

std::vector<RangeProfile> RangeProfiler::profile_batch(const std::vector<BatchedCall>& calls,
                                                       std::size_t setup_kernels) {
  std::size_t expected = 0;
  for (const BatchedCall& call : calls) expected += setup_kernels + call.kernels;
  if (expected > kMaxRangesPerProfile)
    throw ProfilerError("a batch may launch at most " + std::to_string(kMaxRangesPerProfile) + " kernels, setups included; this one launches " +
                        std::to_string(expected));
  std::vector<std::function<void()>> launches;
  for (const BatchedCall& call : calls) launches.push_back(call.launch);
  const PassSetup& setup = state_->before_each_pass;
  std::vector<KernelMetrics> ranges = session(launches, {}, [&] {
    for (const BatchedCall& call : calls) {
      if (setup) setup();
      KGATE_CUDA_CHECK(cudaDeviceSynchronize());  // the setup may use any stream
      call.launch();
      KGATE_CUDA_CHECK(cudaDeviceSynchronize());
    }
  });
  if (ranges.size() != expected)
    throw ProfilerError("the batch's passes launched " + std::to_string(ranges.size()) + " kernels where its calls and setups declare " +
                        std::to_string(expected) + ": the ranges cannot be attributed");
  std::vector<RangeProfile> profiles;
  auto range = ranges.begin();
  for (const BatchedCall& call : calls) {
    range += static_cast<std::ptrdiff_t>(setup_kernels);
    std::vector<KernelMetrics> kernels(std::make_move_iterator(range),
                                       std::make_move_iterator(range + static_cast<std::ptrdiff_t>(call.kernels)));
    range += static_cast<std::ptrdiff_t>(call.kernels);
    // Named as a profile() of the call alone names them: the launch's index within the call.
    for (std::size_t i = 0; i < kernels.size(); ++i) kernels[i].range_name = std::to_string(i);
    profiles.push_back(result_of(std::move(kernels)));
  }
  return profiles;
}

const std::vector<std::string>& RangeProfiler::metrics() const { return state_->metrics; }

std::size_t RangeProfiler::passes() const { return state_->passes; }

const PhaseSeconds& RangeProfiler::seconds_by_step() const { return state_->seconds_by_step; }

}  // namespace kgate
