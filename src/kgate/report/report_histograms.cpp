// Histograms of the main efficiency figures across the run's benchmarks, as in a profiling
// report: how many benchmarks sit at each level.
#include <algorithm>
#include <cmath>

#include "report_charts.hpp"
#include "kgate/report/format.hpp"

namespace kgate::report {
namespace {

constexpr double kWidth = 580, kHeight = 340;
constexpr Frame kFrame{70, 60, 560, 280};
constexpr double kBinWidth = 10;  // percentage points

struct Histogram {
  std::string file, title, axis_title;
  std::vector<double> values;  // percentages
};

Chart draw(const Histogram& h) {
  const double top_edge = std::max(100.0, std::ceil(*std::max_element(h.values.begin(), h.values.end()) / kBinWidth) * kBinWidth);
  const std::size_t bins = static_cast<std::size_t>(top_edge / kBinWidth);
  std::vector<int> counts(bins, 0);
  for (const double v : h.values) ++counts[std::min(bins - 1, static_cast<std::size_t>(std::max(v, 0.0) / kBinWidth))];
  const int most = *std::max_element(counts.begin(), counts.end());

  const Scale x{0, top_edge, kFrame.left, kFrame.right, false};
  const Scale y{0, most * 1.15, kFrame.bottom, kFrame.top, false};
  Svg svg(kWidth, kHeight);
  draw_title(svg, kWidth, h.title, std::to_string(h.values.size()) + " benchmarks, bins of " + tick_number(kBinWidth) + " points");
  std::vector<double> y_ticks;
  for (const double t : linear_ticks(0, most * 1.15, 5))
    if (t == std::floor(t)) y_ticks.push_back(t);
  draw_axes(svg, kFrame, {x, linear_ticks(0, top_edge, 10), [](double v) { return tick_number(v) + "%"; }, h.axis_title},
            {y, y_ticks, tick_number, "benchmarks"});
  if (top_edge > 100) svg.line(x(100), kFrame.top, x(100), kFrame.bottom, {.stroke = "#333", .stroke_width = 1.2, .dash = "5 3"});
  for (std::size_t i = 0; i < bins; ++i) {
    if (counts[i] == 0) continue;
    const double low = kBinWidth * static_cast<double>(i), high = low + kBinWidth;
    svg.rect(x(low) + 1, y(counts[i]), x(high) - x(low) - 2, y(0) - y(counts[i]), {.fill = "#4e79a7"},
             std::to_string(counts[i]) + " benchmarks in [" + tick_number(low) + "%, " + tick_number(high) + "%)");
    svg.text((x(low) + x(high)) / 2, y(counts[i]) - 4, std::to_string(counts[i]), {.size = 11, .anchor = Anchor::middle});
  }
  return {h.file, h.title, svg.str(), ""};
}

std::vector<double> metric_values(const ReportModel& model, const std::string& metric) {
  std::vector<double> values;
  for (const BenchmarkView& v : model.views)
    if (const auto it = v.record->metrics.find(metric); it != v.record->metrics.end()) values.push_back(it->second);
  return values;
}

}  // namespace

std::vector<Chart> histogram_charts(const ReportModel& model) {
  std::vector<Histogram> histograms;
  Histogram roof{"hist-memory-roof.svg", "Share of the measured memory ceiling", "% of the copy or read ceiling", {}};
  // Only benchmarks whose binding roof is memory: a compute-bound kernel (prefill attention)
  // uses a sliver of the bandwidth by design, and would read as a memory-bound kernel doing badly.
  for (const BenchmarkView& v : model.views)
    if (v.ran() && model.inputs->current.run.has_kgate_block && v.record->pct_of_memory_ceiling > 0 && v.roof.ceiling != "compute")
      roof.values.push_back(v.record->pct_of_memory_ceiling);
  histograms.push_back(std::move(roof));
  histograms.push_back(
      {"hist-occupancy.svg", "Achieved occupancy", "active warps, % of the SM's maximum (CUPTI)", metric_values(model, kOccupancyMetric)});
  histograms.push_back(
      {"hist-dram-throughput.svg", "DRAM throughput", "% of peak DRAM throughput (CUPTI)", metric_values(model, kDramThroughputMetric)});
  std::vector<Chart> charts;
  for (const Histogram& h : histograms)
    if (!h.values.empty()) charts.push_back(draw(h));
  return charts;
}

}  // namespace kgate::report
