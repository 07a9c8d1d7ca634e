#pragma once
// The report's charts, one function each; draw_charts (report_model.hpp) gathers those the data
// support. A chart the data cannot fill is not drawn (std::nullopt).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "report_model.hpp"
#include "report_plot.hpp"

namespace kgate::report {

std::optional<Chart> roofline_chart(const ReportModel& model);
std::optional<Chart> speedup_chart(const ReportModel& model);
std::optional<Chart> roof_share_chart(const ReportModel& model);
std::vector<Chart> histogram_charts(const ReportModel& model);
std::vector<Chart> trend_charts(const ReportModel& model);

// Horizontal bars from an origin (1 for ratios on a log scale, 0 for percentages), one row each:
// the shape of the speedup and roof-share charts, drawn as SVG and as ASCII for the terminal.
struct Bar {
  std::string label{};  // drawn in monospace at the left
  double value = 0;
  std::string colour{};
  std::string note{};  // after the bar: "0.87× slower"
  std::string tooltip{};
  double band_low = 0, band_high = 0;  // a shaded interval behind the bar (the threshold band); 0: none
};

struct BarChart {
  std::string file{}, title{}, subtitle{}, axis_title{};
  std::vector<Bar> bars{};
  bool log = false;
  double origin = 0;
  double reference = 0;  // a dashed vertical line (100%); 0: none
  std::vector<LegendEntry> legend{};
  std::function<std::string(double)> tick_label{};
};
Chart draw_bar_chart(const BarChart& chart);

// A file name from a family name: letters, digits, '-' and '_' only.
std::string file_safe(const std::string& name);

}  // namespace kgate::report
