#include "range_profiler_replay.hpp"

#include <cuda_runtime.h>

#include <utility>

#include "cupti_check.hpp"
#include "kgate/core/cuda_check.hpp"

namespace kgate::cupti {
namespace {

// A replay that CUPTI never declares complete ends here with an error instead of looping on; the
// largest metric sets need a few dozen passes.
constexpr std::size_t kMaxPassesPerProfile = 256;

CUptiResult disable_range_profiler(CUpti_RangeProfiler_Object* profiler) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
  params.pRangeProfilerObject = profiler;
  return cuptiRangeProfilerDisable(&params);
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

}  // namespace

EnabledRangeProfiler::EnabledRangeProfiler(CUcontext context) {
  auto params = KGATE_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
  params.ctx = context;
  KGATE_CUPTI_CHECK(cuptiRangeProfilerEnable(&params));
  object_ = params.pRangeProfilerObject;
}

EnabledRangeProfiler::~EnabledRangeProfiler() {
  if (object_ != nullptr) disable_range_profiler(object_);  // unwinding: the first error is the one to report
}

void EnabledRangeProfiler::disable() { check_cupti(disable_range_profiler(std::exchange(object_, nullptr)), "cuptiRangeProfilerDisable"); }

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
void set_config(CUpti_RangeProfiler_Object* profiler, const std::vector<std::uint8_t>& config, std::vector<std::uint8_t>& counter_data) {
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

void run_passes(CUpti_RangeProfiler_Object* profiler, const PassSetup& outside, const std::function<void()>& profiled) {
  for (std::size_t pass = 0; pass < kMaxPassesPerProfile; ++pass)
    if (run_pass(profiler, outside, profiled)) return;
  throw ProfilerError("CUPTI did not complete its user replay within " + std::to_string(kMaxPassesPerProfile) + " passes");
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

}  // namespace kgate::cupti
