#pragma once
// Whether kgate's CUPTI clients (kernel_trace.hpp, call_activity.hpp, range_profiler.hpp) can work
// in this process, and how they fail. Either CUPTI API may be unavailable (no GPU, no profiling
// permission, running under Nsight, unsupported device) while the other works; each says why
// instead of crashing, so a benchmark run can print one warning and still record its timings.
#include <stdexcept>
#include <string>
#include <string_view>

namespace kgate {

// A CUPTI failure, or CUPTI being unusable here; what() names the CUPTI error (cuptiGetResultString).
class ProfilerError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Why the Activity API (KernelTrace, CallActivity) / the range profiler (RangeProfiler) cannot be
// used in this process, or empty when they can. Checked once per process (the first call pays for
// the check); never throws.
std::string activity_unavailable_reason();
std::string counters_unavailable_reason();
// Part of the reason when another CUPTI client (Nsight Compute, Nsight Systems, cuda-gdb) holds
// the process.
inline constexpr std::string_view kAnotherCuptiClient = "another CUPTI client already holds this process";

}  // namespace kgate
