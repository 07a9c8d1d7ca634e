// One trend chart per family over the history: each variant's geometric-mean speedup against the
// first run, run by run.
#include <algorithm>
#include <filesystem>

#include "report_charts.hpp"
#include "kgate/report/format.hpp"

namespace kgate::report {
namespace {

constexpr double kHeight = 380;
constexpr double kColumn = 90;  // pixels per run

// A run's label on the x axis: its file's name without the extension.
std::string run_label(const NamedRun& run) { return std::filesystem::path(run.source).stem().string(); }

Chart draw_trend(const ReportModel& model, const Trend& trend) {
  const std::size_t runs = model.history.size();
  const double width = std::max(760.0, 320 + kColumn * static_cast<double>(runs));
  const Frame frame{80, 60, width - 180, kHeight - 90};
  constexpr double kInset = 40, kLabelRoom = 60;  // first point off the axis; last point's label inside the frame
  double low = 1, high = 1;
  for (const TrendSeries& s : trend.series)
    for (const double v : s.speedup)
      if (v > 0) {
        low = std::min(low, v);
        high = std::max(high, v);
      }
  const double pad = std::max((high - low) * 0.1, 0.05);
  const Scale y{std::max(0.0, low - pad), high + pad, frame.bottom, frame.top, false};
  const auto x = [&](std::size_t i) {
    return runs == 1 ? (frame.left + frame.right) / 2
                     : frame.left + kInset +
                           (frame.right - frame.left - kInset - kLabelRoom) * static_cast<double>(i) / static_cast<double>(runs - 1);
  };

  Svg svg(width, kHeight);
  draw_title(svg, width, "Trend: " + trend.family, "geometric-mean speedup over the shapes, against the first run (above 1: faster)");
  draw_axes(svg, frame, {{0, 1, frame.left, frame.right}, {}, {}, "run (oldest first)"},
            {y, linear_ticks(y.low, y.high, 6), [](double v) { return tick_number(v) + "×"; }, "speedup vs first run"});
  for (std::size_t i = 0; i < runs; ++i) {
    const bool slanted = runs > 6;
    svg.text(x(i), frame.bottom + 18, run_label(*model.history[i].run),
             {.size = 11, .anchor = slanted ? Anchor::end : Anchor::middle, .fill = "#444", .rotate = slanted ? -30.0 : 0.0});
  }
  svg.line(frame.left, y(1), frame.right, y(1), {.stroke = "#888", .dash = "5 3"});
  std::vector<LegendEntry> legend;
  for (std::size_t s = 0; s < trend.series.size(); ++s) {
    const TrendSeries& series = trend.series[s];
    std::vector<std::pair<double, double>> points;
    for (std::size_t i = 0; i < series.speedup.size(); ++i)
      if (series.speedup[i] > 0) points.emplace_back(x(i), y(series.speedup[i]));
    if (points.empty()) continue;
    svg.polyline(points, {.stroke = palette(s), .stroke_width = 2});
    for (std::size_t i = 0; i < series.speedup.size(); ++i)
      if (series.speedup[i] > 0)
        svg.marker(Marker::circle, x(i), y(series.speedup[i]), 8, {.fill = palette(s), .stroke = "#fff"},
                   series.variant + " in " + run_label(*model.history[i].run) + ": " + format_ratio(series.speedup[i]));
    svg.text(points.back().first + 8, points.back().second - 5, format_ratio(series.speedup.back()), {.size = 11, .fill = palette(s)});
    legend.push_back({series.variant, palette(s), Marker::circle, "-"});
  }
  draw_legend(svg, frame.right + 24, frame.top + 12, legend);
  return {"trend-" + file_safe(trend.family) + ".svg", "Trend: " + trend.family, svg.str(), ""};
}

}  // namespace

std::vector<Chart> trend_charts(const ReportModel& model) {
  std::vector<Chart> charts;
  for (const Trend& trend : model.trends) charts.push_back(draw_trend(model, trend));
  return charts;
}

}  // namespace kgate::report
