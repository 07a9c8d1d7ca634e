#pragma once
// The charts of kgate's documents that draw any points, not only a run's benchmarks: a roofline
// under a run's measured ceilings and horizontal bars (the report draws its benchmarks with them,
// the story a workload's steps). Each returns a report::Chart (report.hpp): standalone SVG with
// an ASCII version for the terminal where one reads well.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kgate/report/plot.hpp"
#include "kgate/report/report.hpp"
#include "kgate/results/results.hpp"

namespace kgate::report {

// A roofline of any points (benchmarks, a workload's steps) under a run's measured ceilings.
struct RoofMark {
  double intensity = 0, flops_per_s = 0;  // FLOP per byte of minimum traffic, achieved FLOP/s
  std::string colour{};
  Marker marker = Marker::circle;
  std::string tooltip{};
  double roof_pct = 0;    // its share of the roof it comes closest to: the best one is labelled
  std::string ceiling{};  // that roof: "copy", "read" or "compute"
};
struct RooflinePlot {
  std::string file{}, chart_title{}, title{}, subtitle{};
  Calibration calibration{};
  std::vector<RoofMark> marks{};
  std::string legend_title{};
  std::vector<LegendEntry> legend{};
  bool small = false;  // a small multiple: a smaller plot area, two fit side by side on a page
  // Thin lines through points that belong together (a shape's variants, in the family's order):
  // each (intensity, FLOP/s) path drawn under the markers.
  std::vector<std::vector<std::pair<double, double>>> journeys{};
};
// Not drawn without marks, or without the copy and GEMM ceilings.
std::optional<Chart> draw_roofline(const RooflinePlot& plot);
// The colour of a bound class in every chart.
std::string roofline_class_colour(RooflineClass cls);

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

}  // namespace kgate::report
