#include "kgate/report/plot.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "kgate/base/text.hpp"

namespace kgate::report {
namespace {

constexpr double kTickSize = 12;
constexpr double kTitleSize = 13;
const std::string kAxisColour = "#444";
const std::string kGridColour = "#e3e3e3";

}  // namespace

double Scale::operator()(double value) const {
  const double t = log ? (std::log10(value) - std::log10(low)) / (std::log10(high) - std::log10(low)) : (value - low) / (high - low);
  return pixel_low + t * (pixel_high - pixel_low);
}

std::string tick_number(double value) { return printf_string("%g", value); }

double decade_floor(double value) { return std::pow(10.0, std::floor(std::log10(value) + 1e-9)); }
double decade_ceil(double value) { return std::pow(10.0, std::ceil(std::log10(value) - 1e-9)); }

std::vector<double> log_ticks(double low, double high) {
  const double decades = std::log10(high / low);
  const std::vector<double> steps = decades <= 1.5 ? std::vector<double>{1, 2, 5} : std::vector<double>{1};
  std::vector<double> ticks;
  for (double decade = decade_floor(low); decade <= high * (1 + 1e-9); decade *= 10)
    for (const double step : steps)
      if (const double t = decade * step; t >= low * (1 - 1e-9) && t <= high * (1 + 1e-9)) ticks.push_back(t);
  return ticks;
}

std::vector<double> linear_ticks(double low, double high, int at_most) {
  const double span = high - low;
  if (!(span > 0)) return {low};
  double step = decade_floor(span / at_most);
  for (const double factor : {1.0, 2.0, 5.0, 10.0})
    if (span / (step * factor) <= at_most) {
      step *= factor;
      break;
    }
  std::vector<double> ticks;
  for (double t = std::ceil(low / step - 1e-9) * step; t <= high + step * 1e-9; t += step)
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  return ticks;
}

std::vector<double> ratio_ticks(double low, double high, std::size_t at_most) {
  static constexpr double kRatios[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.67, 0.8, 0.9, 0.95, 1,
                                       1.05, 1.1,  1.25, 1.5, 2,   4,    5,   10,   20,  50,  100};
  std::vector<double> below, above;  // each side ordered away from 1
  bool one = false;
  for (const double r : kRatios) {
    if (r < low || r > high) continue;
    if (r < 1) below.insert(below.begin(), r);
    else if (r > 1) above.push_back(r);
    else one = true;
  }
  // Thin the fuller side to every other ratio, nearest 1 kept, until they fit.
  while (below.size() + above.size() + (one ? 1 : 0) > at_most) {
    std::vector<double>& side = below.size() >= above.size() ? below : above;
    std::vector<double> kept;
    for (std::size_t i = 0; i < side.size(); i += 2) kept.push_back(side[i]);
    if (kept.size() == side.size()) kept.pop_back();
    side = std::move(kept);
  }
  std::vector<double> ticks(below.rbegin(), below.rend());
  if (one) ticks.push_back(1);
  ticks.insert(ticks.end(), above.begin(), above.end());
  return ticks;
}

std::vector<double> spaced_ticks(const std::vector<double>& ticks, const Scale& scale, double gap, double anchor) {
  std::vector<double> kept;
  for (const int direction : {-1, 1}) {
    double last = scale(anchor);
    for (std::size_t k = 0; k < ticks.size(); ++k) {
      const double t = direction < 0 ? ticks[ticks.size() - 1 - k] : ticks[k];
      if ((direction < 0 ? t >= anchor : t <= anchor)) continue;
      if (std::fabs(scale(t) - last) >= gap) {
        kept.push_back(t);
        last = scale(t);
      }
    }
  }
  if (std::find(ticks.begin(), ticks.end(), anchor) != ticks.end()) kept.push_back(anchor);
  std::sort(kept.begin(), kept.end());
  return kept;
}

void draw_axes(Svg& svg, const Frame& frame, const Axis& x, const Axis& y) {
  const Style grid{.stroke = kGridColour};
  for (const double t : x.ticks) {
    const double px = x.scale(t);
    svg.line(px, frame.top, px, frame.bottom, grid);
    svg.line(px, frame.bottom, px, frame.bottom + 5, {.stroke = kAxisColour});
    svg.text(px, frame.bottom + 19, x.label(t), {.size = kTickSize, .anchor = Anchor::middle, .fill = kAxisColour});
  }
  for (const double t : y.ticks) {
    const double py = y.scale(t);
    svg.line(frame.left, py, frame.right, py, grid);
    svg.line(frame.left - 5, py, frame.left, py, {.stroke = kAxisColour});
    svg.text(frame.left - 8, py + 4, y.label(t), {.size = kTickSize, .anchor = Anchor::end, .fill = kAxisColour});
  }
  svg.rect(frame.left, frame.top, frame.right - frame.left, frame.bottom - frame.top, {.stroke = kAxisColour});
  if (!x.title.empty())
    svg.text((frame.left + frame.right) / 2, frame.bottom + 40, x.title, {.size = kTitleSize, .anchor = Anchor::middle});
  if (y.title.empty()) return;
  const double y_middle = (frame.top + frame.bottom) / 2;
  double widest = 0;
  for (const double t : y.ticks) widest = std::max(widest, Svg::text_width(y.label(t), kTickSize));
  const double title_x = frame.left - widest - 20;
  svg.text(title_x, y_middle, y.title, {.size = kTitleSize, .anchor = Anchor::middle, .rotate = -90});
}

void draw_title(Svg& svg, double width, const std::string& title, const std::string& subtitle) {
  svg.text(width / 2, 24, title, {.size = 16, .anchor = Anchor::middle, .bold = true});
  if (!subtitle.empty()) svg.text(width / 2, 43, subtitle, {.size = 12, .anchor = Anchor::middle, .fill = "#555"});
}

double draw_legend(Svg& svg, double x, double y, const std::vector<LegendEntry>& entries) {
  for (const LegendEntry& e : entries) {
    if (e.dash.empty() && e.marker == Marker::square) svg.rect(x, y - 9, 12, 12, {.fill = e.colour, .stroke = "#999", .stroke_width = 0.5});
    else if (e.dash.empty()) svg.marker(e.marker, x + 6, y - 3, 10, {.fill = e.colour, .stroke = "#333", .stroke_width = 0.6});
    else svg.line(x - 2, y - 3, x + 14, y - 3, {.stroke = e.colour, .stroke_width = 2, .dash = e.dash == "-" ? "" : e.dash});
    svg.text(x + 20, y + 1, e.label, {.size = 12});
    y += 19;
  }
  return y;
}

const std::string& palette(std::size_t index) {
  static const std::array<std::string, 10> colours = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                                      "#b07aa1", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"};
  return colours[index % colours.size()];
}

Marker marker_for(std::size_t index) {
  static constexpr Marker markers[] = {Marker::circle, Marker::square, Marker::triangle, Marker::diamond};
  return markers[index % 4];
}

}  // namespace kgate::report
