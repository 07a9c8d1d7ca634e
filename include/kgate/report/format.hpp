#pragma once
// How kgate's documents print figures, names and kernels, in one place so that every section,
// chart and test of the report, and the documents built on its renderers (kgate story), agree.
#include <string>
#include <string_view>
#include <vector>

#include "kgate/base/figures.hpp"
#include "kgate/results/results.hpp"

namespace kgate::report {

// The figures every kgate output shares (base/figures.hpp: three significant digits, × and µs),
// under the names the report's sections use.
using kgate::format_bandwidth;
using kgate::format_cuda_version;
using kgate::format_flops;
using kgate::format_mhz;
using kgate::format_ratio;
using kgate::format_time;
using kgate::sig3;
inline std::string format_pct(double percent) { return format_percent(percent); }  // "46.0%"
// A counter's percentage: above 100% (impossible for a rate or a hit ratio) it is marked "131% ⚠":
// an artifact of the counter replay, not a measurement (kCounterReplayNote says why).
std::string format_counter_pct(double percent);
inline constexpr const char* kCounterReplayNote =
    "⚠ marks a counter above 100%, which no rate or hit ratio can reach: an artifact of the counter replay (each pass "
    "replays the kernel, and sectors counted in one pass are hit in the next, or CUPTI's save and restore touched the "
    "L2), not a measurement";
// A job's wall time: "235 s: build 61.2 s, correctness 21.0 s, suite 105 s, peers 7.00 s" (empty: "").
std::string format_job_phases(const std::vector<JobPhase>& job);
std::string format_bytes(double bytes);         // "48 KiB", "31488 B", "1.2 GiB"
std::string format_dims(const int (&dims)[3]);  // "4096×1×1"

// `name` as inline code, each character of it shown as is.
std::string code(std::string_view name);
// `text` as plain text in inline markup (report.hpp): each markup character in it escaped.
std::string literal(std::string_view text);

// A kernel's name short enough for a table: the demangled name without return type, namespaces,
// parameters and long template arguments ("rmsnorm_vectorized_kernel<8>").
std::string short_kernel_name(const KernelRecord& kernel);
std::string full_kernel_name(const KernelRecord& kernel);  // demangled, else mangled
// The blocks of its grid.
std::size_t block_count(const KernelRecord& kernel);

// The CUPTI metrics (kgate's default set, range_profiler.cpp) the report and the story read by name.
inline constexpr const char* kOccupancyMetric = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kDramThroughputMetric = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kIssueMetric = "sm__inst_issued.avg.pct_of_peak_sustained_elapsed";
// The SM throughput of runs recorded before kIssueMetric replaced it (8 replay passes against 2).
inline constexpr const char* kSmThroughputMetric = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kL2HitMetric = "lts__t_sector_hit_rate.pct";
inline constexpr const char* kTensorMetric = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";

// The SM-side counter a table shows: kIssueMetric, or kSmThroughputMetric where `recorded(metric)`
// says only that one is there (a run from before kIssueMetric); `title` is its column title.
struct SmSideCounter {
  const char* metric;
  const char* title;       // "Issue %" or "SM %"
  const char* mean_title;  // "Mean issue %" or "Mean SM %"
};
template <class Recorded>
SmSideCounter sm_side_counter(const Recorded& recorded) {
  if (!recorded(kIssueMetric) && recorded(kSmThroughputMetric)) return {kSmThroughputMetric, "SM %", "Mean SM %"};
  return {kIssueMetric, "Issue %", "Mean issue %"};
}

// "a, b and c"
std::string join_words(const std::vector<std::string>& words);

// "1 shape", "12 shapes"
std::string plural(std::size_t n, const char* one, const char* many);

}  // namespace kgate::report
