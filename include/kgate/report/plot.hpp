#pragma once
// What every chart of kgate's documents shares: scales from data to pixels, ticks at round values, the
// axes with their labels and grid, a legend and the colour palette.
#include <functional>
#include <string>
#include <vector>

#include "kgate/report/svg.hpp"

namespace kgate::report {

struct Scale {
  double low = 0, high = 1;              // data range
  double pixel_low = 0, pixel_high = 1;  // where low and high land
  bool log = false;
  double operator()(double value) const;
};

// Round values inside [low, high]: decades (with 2 and 5 when few decades) on a log scale, 1-2-5
// steps on a linear one.
std::vector<double> log_ticks(double low, double high);
std::vector<double> linear_ticks(double low, double high, int at_most);
// Ratios on a log scale: the round ratios a reader expects (0.8, 0.9, 1, 1.1, 1.25, 2, ...), at
// most `at_most` of them, always with 1 when it is in range.
std::vector<double> ratio_ticks(double low, double high, std::size_t at_most);
// The ticks at least `gap` pixels apart on `scale`, walking outwards from `anchor` (kept).
std::vector<double> spaced_ticks(const std::vector<double>& ticks, const Scale& scale, double gap, double anchor);
// A tick's label: as few digits as the value needs ("0.1", "20", "1.25").
std::string tick_number(double value);

// The decade at or below / above a positive value.
double decade_floor(double value);
double decade_ceil(double value);

// The plot area, in pixels.
struct Frame {
  double left, top, right, bottom;
};

struct Axis {
  Scale scale;
  std::vector<double> ticks{};
  std::function<std::string(double)> label{};
  std::string title{};
};

// Grid lines at the ticks, the frame, tick labels and axis titles.
void draw_axes(Svg& svg, const Frame& frame, const Axis& x, const Axis& y);
void draw_title(Svg& svg, double width, const std::string& title, const std::string& subtitle = {});

struct LegendEntry {
  std::string label{};
  std::string colour{};
  Marker marker = Marker::square;
  std::string dash{};  // non-empty: a line sample instead of a marker
};
// A column of entries from (x, y) down; returns the y below the last one.
double draw_legend(Svg& svg, double x, double y, const std::vector<LegendEntry>& entries);

// Distinct colours that stay distinct for colour-blind readers (Tableau 10).
const std::string& palette(std::size_t index);
Marker marker_for(std::size_t index);

}  // namespace kgate::report
