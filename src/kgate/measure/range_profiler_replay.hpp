#pragma once
// One replay session of CUPTI's range profiler (the target side), as RangeProfiler::session runs
// it: the profiler enabled on the context, a counter data image, the configuration set for auto
// ranges under user replay, the passes, and the counters decoded and evaluated into metric values.
// Each throws ProfilerError on a CUPTI failure.
#include <cuda.h>
#include <cupti_range_profiler.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kgate/measure/range_profiler.hpp"
#include "range_profiler_config.hpp"

namespace kgate::cupti {

// The range profiler enabled on a context, from a RangeProfiler's first profile() call until the
// RangeProfiler goes: enabling costs more than a small kernel's whole replay, so a benchmark run
// enables it once for its counter pass, outside any timing, and releases it after, so no timed launch meets an armed context.
class EnabledRangeProfiler {
 public:
  explicit EnabledRangeProfiler(CUcontext context);
  EnabledRangeProfiler(const EnabledRangeProfiler&) = delete;
  EnabledRangeProfiler& operator=(const EnabledRangeProfiler&) = delete;
  ~EnabledRangeProfiler();
  void disable();  // throws where CUPTI refuses: the destructor, unwinding, cannot
  CUpti_RangeProfiler_Object* get() const { return object_; }

 private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

// A counter data image for `names`, with room for kMaxRangesPerProfile ranges.
std::vector<std::uint8_t> counter_data_image(CUpti_RangeProfiler_Object* profiler, std::vector<const char*> names);
void set_config(CUpti_RangeProfiler_Object* profiler, const std::vector<std::uint8_t>& config, std::vector<std::uint8_t>& counter_data);

// Runs the call, then checks its launches and waits for them.
void launch_and_wait(const std::function<void()>& launch_once);
// Passes until CUPTI has every one its configuration needs: each runs `outside` (its kernels in no
// range) and then `profiled`, every kernel of which auto range makes a range.
void run_passes(CUpti_RangeProfiler_Object* profiler, const PassSetup& outside, const std::function<void()>& profiled);
void decode(CUpti_RangeProfiler_Object* profiler);
// Every range's values of `metrics`, in launch order.
std::vector<KernelMetrics> evaluate(const HostObject& host, const std::vector<std::string>& metrics,
                                    const std::vector<std::uint8_t>& counter_data);

}  // namespace kgate::cupti
