#pragma once
// The drill-down of one benchmark that changed (slower, failed, at the threshold, faster): what a
// reader needs to decide whether the change is real and why it happened, in one panel: the verdict
// with its figures, the samples of both runs as a strip plot with the shape of the shift, the
// launch configuration and counters baseline → new, the minimum detectable change and what set it,
// and the commands that measure it again.
#include <string>
#include <vector>

#include "report_model.hpp"

namespace kgate::report {

// The panel: a Section titled with the benchmark's name (as code). Its strip plot, where both runs
// have samples, is appended to `charts` (strip_plot_file(name)) and shown by a Figure of the panel.
// The caller gives the Section its anchor (benchmark_anchor(name)) and its place.
Section benchmark_panel(const ReportModel& model, const BenchmarkView& view, std::vector<Chart>& charts);

// Why a benchmark changed, in short chips for the summary's rows: "Δ +5.52 µs", "cycles 0.943×",
// the shift's kind (shift_chip: "const shift", "proportional", ...), then the launch properties and
// counters that changed as far as the gate explains ("registers 128 → 106", "dram__throughput
// 79.1% → 87.0%"), at most kMaxCounterChips of them, launch first, then the largest. Empty when
// nothing is known (no baseline, not compared).
inline constexpr std::size_t kMaxCounterChips = 3;
std::vector<std::string> change_chips(const ReportModel& model, const BenchmarkView& view);

// `text` as one word for a POSIX shell: in single quotes, a quote inside written '\''.
std::string shell_quoted(const std::string& text);

// The lines that measure the benchmark again: `kgate ab` between two builds, and the benchmark
// binary alone.
std::string rerun_commands(const std::string& name);

}  // namespace kgate::report
