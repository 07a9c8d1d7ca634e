#pragma once
// One benchmark's samples in the baseline and the new run as a strip plot, for its drill-down
// panel: two horizontal strips on one time axis in µs, every sample a dot (spread across its strip
// so that equal times do not hide each other), each repetition's median a short bar at the strip's
// top, each side's median a bar across its strip and the baseline's median dashed across both.
#include <cstddef>
#include <string>

#include "kgate/report/report.hpp"
#include "kgate/results/results.hpp"

namespace kgate::report {

// The most dots a strip draws. A side with more samples is thinned to this many, evenly by rank
// from its fastest to its slowest sample, so the strip keeps its shape: each dot is a circle in the
// HTML, and 2 × 1155 of them (an H100 run's short benchmark) weigh 200 KB per panel.
inline constexpr std::size_t kMaxStripDots = 500;
// The dots a side of `samples` samples gets.
std::size_t strip_dot_count(std::size_t samples);

// "strip-<slug of the name>.svg"
std::string strip_plot_file(const std::string& name);

// Both sides need a sample.
Chart strip_plot(const std::string& name, const TimingRecord& baseline, const TimingRecord& current);

}  // namespace kgate::report
