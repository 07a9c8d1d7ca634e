// Horizontal bar charts: speedup against the baseline and share of the roof per benchmark.
#include <algorithm>
#include <cmath>

#include "report_charts.hpp"
#include "kgate/report/format.hpp"

namespace kgate::report {
namespace {

constexpr double kRowHeight = 18;
constexpr double kLabelSize = 11;
constexpr double kPlotWidth = 420;
constexpr double kNoteWidth = 130;
constexpr int kAsciiWidth = 40;
constexpr std::size_t kMaxBars = 60;
constexpr std::size_t kAsciiLabel = 56;

const std::string kFaster = "#2e7d32", kSlower = "#c62828", kSame = "#9e9e9e", kNoisy = "#e0a100", kNew = "#4e79a7";

std::string verdict_colour(Verdict verdict) {
  switch (verdict) {
    case Verdict::faster: return kFaster;
    case Verdict::slower:
    case Verdict::failed: return kSlower;
    case Verdict::noisy:
    case Verdict::at_threshold: return kNoisy;
    case Verdict::same: return kSame;
    case Verdict::added:
    case Verdict::missing: return kNew;
  }
  return kSame;
}

Scale bar_scale(const BarChart& chart, double left) {
  double low = chart.origin, high = chart.origin;
  for (const Bar& b : chart.bars) {
    low = std::min({low, b.value, b.band_low > 0 ? b.band_low : low});
    high = std::max({high, b.value, b.band_high});
  }
  high = std::max(high, chart.reference);
  if (chart.log) return {low / 1.08, high * 1.08, left, left + kPlotWidth, true};
  return {low, high * 1.05, left, left + kPlotWidth, false};
}

std::string ascii_bars(const BarChart& chart, const Scale& svg_scale) {
  Scale scale = svg_scale;
  scale.pixel_low = 0;
  scale.pixel_high = kAsciiWidth;
  std::size_t label_width = 0;
  for (const Bar& b : chart.bars) label_width = std::max(label_width, std::min(b.label.size(), kAsciiLabel));
  const int origin = static_cast<int>(std::lround(scale(chart.origin)));
  std::string out = "  " + chart.title + "\n";
  for (const Bar& b : chart.bars) {
    std::string label = b.label.size() > kAsciiLabel ? b.label.substr(0, kAsciiLabel - 3) + "..." : b.label;
    label.resize(label_width, ' ');
    std::string track(kAsciiWidth + 1, ' ');
    const int end = static_cast<int>(std::lround(scale(b.value)));
    for (int i = std::min(origin, end); i <= std::max(origin, end); ++i) track[static_cast<std::size_t>(i)] = '#';
    track[static_cast<std::size_t>(origin)] = '|';
    out += "  " + label + " " + track + " " + b.note + "\n";
  }
  return out;
}

}  // namespace

std::string roofline_class_colour(RooflineClass cls) {
  switch (cls) {
    case RooflineClass::memory_bound: return "#4e79a7";
    case RooflineClass::compute_bound: return "#e15759";
    case RooflineClass::latency_bound: return "#bab0ac";
    case RooflineClass::below_roofs: return "#f28e2b";
  }
  return "#bab0ac";
}

Chart draw_bar_chart(const BarChart& chart) {
  double label_width = 0;
  for (const Bar& b : chart.bars) label_width = std::max(label_width, Svg::text_width(b.label, kLabelSize, true));
  const double left = label_width + 24, top = 92;
  // Wide enough for its title and subtitle too: a chart of a few short-named bars is narrower.
  const double width =
      std::max({left + kPlotWidth + kNoteWidth, Svg::text_width(chart.title, 16) + 32, Svg::text_width(chart.subtitle, 12) + 32});
  const double height = top + kRowHeight * static_cast<double>(chart.bars.size()) + 58;
  const Frame frame{left, top, left + kPlotWidth, top + kRowHeight * static_cast<double>(chart.bars.size())};
  const Scale x = bar_scale(chart, left);

  Svg svg(width, height);
  draw_title(svg, width, chart.title, chart.subtitle);
  double legend_x = 16;
  for (const LegendEntry& entry : chart.legend) {
    draw_legend(svg, legend_x, 70, {entry});
    legend_x += 44 + Svg::text_width(entry.label, 12);
  }
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    const double y = top + kRowHeight * static_cast<double>(i);
    if (b.band_high > 0) svg.rect(x(b.band_low), y, x(b.band_high) - x(b.band_low), kRowHeight, {.fill = "#ececec"});
  }
  const std::vector<double> ticks = chart.log ? spaced_ticks(ratio_ticks(x.low, x.high, 9), x, 44, chart.origin)
                                              : linear_ticks(x.low, x.high, 6);
  draw_axes(svg, frame, {x, ticks, chart.tick_label, chart.axis_title}, {{0, 1, frame.top, frame.bottom}, {}, chart.tick_label, ""});
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    const double y = top + kRowHeight * static_cast<double>(i);
    const double x0 = x(chart.origin), x1 = x(b.value);
    svg.rect(std::min(x0, x1), y + 3, std::max(std::fabs(x1 - x0), 1.0), kRowHeight - 6, {.fill = b.colour}, b.tooltip);
    svg.text(left - 8, y + 13, b.label, {.size = kLabelSize, .anchor = Anchor::end, .monospace = true});
    svg.text(frame.right + 8, y + 13, b.note, {.size = kLabelSize, .fill = "#333"});
  }
  svg.line(x(chart.origin), frame.top, x(chart.origin), frame.bottom, {.stroke = "#333", .stroke_width = 1.2});
  if (chart.reference > 0)
    svg.line(x(chart.reference), frame.top, x(chart.reference), frame.bottom, {.stroke = "#333", .stroke_width = 1.2, .dash = "5 3"});
  return {chart.file, chart.title, svg.str(), ascii_bars(chart, x)};
}

std::optional<Chart> speedup_chart(const ReportModel& model) {
  if (!model.comparison) return std::nullopt;
  BarChart chart;
  chart.file = "speedup.svg";
  chart.title = "Speedup against the baseline";
  chart.subtitle = "baseline median / new median (log scale); above 1 is faster; grey band: the benchmark's threshold";
  chart.axis_title = "speedup (×)";
  chart.log = true;
  chart.origin = 1;
  chart.tick_label = [](double v) { return tick_number(v) + "×"; };
  chart.legend = {{"faster", kFaster}, {"slower", kSlower}, {"same", kSame}, {"noisy", kNoisy}, {"threshold band", "#ececec"}};
  std::vector<const BenchmarkComparison*> rows;
  for (const BenchmarkComparison& row : model.comparison->benchmarks)
    if (row.speedup > 0) rows.push_back(&row);
  if (rows.empty()) return std::nullopt;
  // A long suite would drown its changes in a wall of unchanged bars: those are counted instead.
  if (rows.size() > kMaxBars) {
    const auto unchanged = std::erase_if(rows, [](const BenchmarkComparison* row) { return row->verdict == Verdict::same; });
    chart.subtitle += "; " + std::to_string(unchanged) + " unchanged benchmarks not drawn";
    if (rows.empty()) return std::nullopt;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) { return a->speedup < b->speedup; });
  for (const BenchmarkComparison* row : rows) {
    const std::string verdict(to_string(row->verdict));
    chart.bars.push_back({row->name, row->speedup, verdict_colour(row->verdict), format_ratio(row->speedup) + " " + verdict,
                          row->name + ": " + format_time(row->baseline_median_s) + " → " + format_time(row->new_median_s),
                          1 / (1 + row->threshold), 1 + row->threshold});
  }
  return draw_bar_chart(chart);
}

std::vector<Chart> roof_share_charts(const ReportModel& model) {
  std::vector<Chart> charts;
  // One chart per family: a whole suite's bars in one chart were a page eight screens tall.
  for (const FamilyView& family : model.families) {
    BarChart chart;
    chart.file = "roof-share-" + file_safe(family.name) + ".svg";
    chart.title = "Share of the measured roof: " + family.name;
    chart.subtitle = "achieved rate / the measured ceiling it comes closest to (copy, read or compute)";
    chart.axis_title = "% of the roof";
    chart.reference = 100;
    chart.tick_label = [](double v) { return tick_number(v) + "%"; };
    for (const RooflineClass cls :
         {RooflineClass::memory_bound, RooflineClass::compute_bound, RooflineClass::below_roofs, RooflineClass::latency_bound})
      chart.legend.push_back({std::string(to_string(cls)), roofline_class_colour(cls)});
    const std::string prefix = family.name + "/";
    for (const BenchmarkView* row : family.rows)
      if (row->ran() && row->roof.pct > 0) {
        const std::string& name = row->record->name;
        chart.bars.push_back({name.starts_with(prefix) ? name.substr(prefix.size()) : name, row->roof.pct,
                              roofline_class_colour(row->record->roofline), format_pct(row->roof.pct) + " " + row->roof.ceiling,
                              name + ": " + std::string(to_string(row->record->roofline)), 0, 0});
      }
    if (!chart.bars.empty()) charts.push_back(draw_bar_chart(chart));
  }
  return charts;
}

}  // namespace kgate::report
