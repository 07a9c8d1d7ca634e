#include "report_strip_plot.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kgate/base/escape.hpp"
#include "kgate/base/figures.hpp"
#include "kgate/base/statistics.hpp"
#include "kgate/report/plot.hpp"

namespace kgate::report {
namespace {

constexpr double kStripWidth = 760, kStripHeight = 54;
constexpr Frame kStripFrame{112, 72, 736, 72 + 2 * kStripHeight};  // below the title, the legend and a note
constexpr double kStripChartHeight = kStripFrame.bottom + 52;      // tick labels and the axis title below the strips
constexpr double kDotSize = 3.6;
constexpr double kDotInset = 12;  // the dots' band inside a strip: clear of the repetition marks at its top
// The axis spans each side's 0.5th to 99.5th percentile (and every median): a few far outliers
// would otherwise squeeze the samples into a corner. The dots beyond sit at the axis's ends.
constexpr double kAxisQuantile = 0.005;
// A dot's height in its strip: i x the golden ratio, modulo 1, spreads any run of neighbours (the
// dots are in order of time) evenly over the strip, the same way every time.
constexpr double kGoldenRatio = 0.6180339887498949;

struct Strip {
  const char* label;
  const TimingRecord& timing;
  std::string colour;
  std::vector<double> dots_us{};
};

// The side's samples in µs, thinned to strip_dot_count evenly by rank, its fastest and slowest kept.
std::vector<double> dot_times_us(const std::vector<double>& samples_s) {
  std::vector<double> sorted(samples_s);
  std::sort(sorted.begin(), sorted.end());
  const std::size_t count = strip_dot_count(sorted.size());
  std::vector<double> dots;
  dots.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t rank = count == 1 ? 0 : (i * (sorted.size() - 1) + (count - 1) / 2) / (count - 1);
    dots.push_back(sorted[rank] * 1e6);
  }
  return dots;
}

// `text` cut at a character boundary, with an ellipsis, until its estimated width fits `width`.
std::string fitted_text(std::string text, double size, double width) {
  if (Svg::text_width(text, size) <= width) return text;
  while (!text.empty() && Svg::text_width(text + "…", size) > width) {
    char dropped = 0;
    do {
      dropped = text.back();
      text.pop_back();
    } while (!text.empty() && (static_cast<unsigned char>(dropped) & 0xC0) == 0x80);
  }
  return text + "…";
}

// What the dots stand for where that is not one each: "baseline 500 of 1155, new 500 of 1155
// samples, evenly by rank; 3 beyond the axis, at its ends".
std::string dots_note(const std::array<Strip, 2>& strips, std::size_t beyond) {
  std::string note;
  for (const Strip& s : strips)
    if (s.dots_us.size() < s.timing.samples_s.size())
      note += (note.empty() ? "" : ", ") + std::string(s.label) + " " + std::to_string(s.dots_us.size()) + " of " +
              std::to_string(s.timing.samples_s.size());
  if (!note.empty()) note += " samples, evenly by rank";
  if (beyond > 0) note += (note.empty() ? "" : "; ") + std::to_string(beyond) + " beyond the axis, at its ends";
  return note;
}

}  // namespace

std::size_t strip_dot_count(std::size_t samples) { return std::min(samples, kMaxStripDots); }

std::string strip_plot_file(const std::string& name) { return "strip-" + slug(name) + ".svg"; }

Chart strip_plot(const std::string& name, const TimingRecord& baseline, const TimingRecord& current) {
  std::array<Strip, 2> strips{{{"baseline", baseline, palette(0)}, {"new", current, palette(1)}}};
  double low = INFINITY, high = -INFINITY;
  for (Strip& s : strips) {
    s.dots_us = dot_times_us(s.timing.samples_s);
    std::vector<double> marks = {percentile(s.timing.samples_s, kAxisQuantile), percentile(s.timing.samples_s, 1 - kAxisQuantile),
                                 median(s.timing.samples_s)};
    marks.insert(marks.end(), s.timing.repetition_medians_s.begin(), s.timing.repetition_medians_s.end());
    for (const double m : marks) {
      low = std::min(low, m * 1e6);
      high = std::max(high, m * 1e6);
    }
  }
  const double pad = high > low ? (high - low) * 0.05 : high * 0.01;
  low = std::max(low - pad, 0.0);
  high += pad;
  const Scale x{low, high, kStripFrame.left, kStripFrame.right, false};
  std::size_t beyond = 0;
  for (const Strip& s : strips)
    beyond += static_cast<std::size_t>(std::count_if(s.dots_us.begin(), s.dots_us.end(), [&](double v) { return v < low || v > high; }));

  Svg svg(kStripWidth, kStripChartHeight);
  draw_title(svg, kStripWidth, fitted_text(name, 16 * 1.1, kStripWidth - 40),  // bold: wider than the estimate
             "dot: a sample · diamond: a repetition's median · bar: the median");
  if (const std::string note = dots_note(strips, beyond); !note.empty())
    svg.text(kStripWidth / 2, 59, fitted_text(note, 11, kStripWidth - 24), {.size = 11, .anchor = Anchor::middle, .fill = "#555"});
  draw_axes(svg, kStripFrame, {x, linear_ticks(low, high, 10), tick_number, "time per sample (µs)"},
            {{0, 1, kStripFrame.bottom, kStripFrame.top, false}, {}, tick_number, ""});
  svg.line(kStripFrame.left, kStripFrame.top + kStripHeight, kStripFrame.right, kStripFrame.top + kStripHeight, {.stroke = "#d0d7de"});

  for (std::size_t k = 0; k < strips.size(); ++k) {
    const Strip& s = strips[k];
    const double top = kStripFrame.top + kStripHeight * static_cast<double>(k);
    const double center = median(s.timing.samples_s);
    svg.text(kStripFrame.left - 10, top + kStripHeight / 2 - 3, s.label, {.size = 12, .anchor = Anchor::end, .bold = true});
    svg.text(kStripFrame.left - 10, top + kStripHeight / 2 + 12, "median " + kgate::format_time(center),
             {.size = 11, .anchor = Anchor::end, .fill = "#555"});
    for (std::size_t i = 0; i < s.dots_us.size(); ++i) {
      const double height = std::fmod(static_cast<double>(i + 1) * kGoldenRatio, 1.0);
      svg.marker(Marker::circle, x(std::clamp(s.dots_us[i], low, high)), top + kDotInset + height * (kStripHeight - kDotInset - 6),
                 kDotSize, {.fill = s.colour, .opacity = 0.5});
    }
    svg.rect(x(center * 1e6) - 1, top + 1, 2, kStripHeight - 2, {.fill = "#222"},
             std::string(s.label) + ": median " + kgate::format_time(center) + " of " + std::to_string(s.timing.samples_s.size()) +
                 " samples");
    const std::vector<double>& repetitions = s.timing.repetition_medians_s;
    for (std::size_t j = 0; j < repetitions.size(); ++j)
      svg.marker(Marker::diamond, x(repetitions[j] * 1e6), top + 6, 7, {.fill = "#ffffff", .stroke = "#222", .stroke_width = 1.2},
                 std::string(s.label) + ": repetition " + std::to_string(j + 1) + " of " + std::to_string(repetitions.size()) +
                     ", median " + kgate::format_time(repetitions[j]));
  }
  // The baseline's median carried across the new strip: the shift reads as the gap to it.
  const double baseline_median = x(median(baseline.samples_s) * 1e6);
  svg.line(baseline_median, kStripFrame.top + kStripHeight, baseline_median, kStripFrame.bottom,
           {.stroke = "#555", .stroke_width = 1.2, .dash = "4 3"});
  return {strip_plot_file(name), "Samples of " + name + ", baseline and new", svg.str(), ""};
}

}  // namespace kgate::report
