// The story's charts: the Gantt-style timeline (and its ASCII version), the breakdown of the step,
// each step on the roofline, and the scaling sweep.
#include "story_charts.hpp"

#include <algorithm>
#include <cmath>

#include "kgate/base/workload.hpp"
#include "kgate/report/charts.hpp"
#include "kgate/report/format.hpp"

namespace kgate::story {
namespace {

using report::Anchor;
using report::Bar;
using report::BarChart;
using report::Chart;
using report::Frame;
using report::LegendEntry;
using report::Marker;
using report::Scale;
using report::Svg;

constexpr double kRow = 18;
constexpr double kLabelSize = 11;
constexpr double kPlotWidth = 620;
constexpr double kNoteWidth = 150;
constexpr std::size_t kMaxLabel = 72;
const std::string kGapColour = "#d9d9d9";

std::string shortened(std::string text, std::size_t most) { return text.size() > most ? text.substr(0, most - 3) + "..." : text; }

std::string kernel_label(const KernelView& k) {
  return shortened(std::to_string(k.index + 1) + " " + k.step->label + " · " + report::short_kernel_name(k.kernel->kernel), kMaxLabel);
}

std::string us(double seconds) { return report::tick_number(std::round(seconds * 1e7) / 10); }

// Families in the order of their first step.
std::vector<std::string> families_in_order(const Story& story) {
  std::vector<std::string> families;
  for (const WorkloadStepRecord& step : story.workload->steps)
    if (std::find(families.begin(), families.end(), step.family) == families.end()) families.push_back(step.family);
  return families;
}

std::vector<LegendEntry> family_legend(const Story& story, bool with_gaps) {
  std::vector<LegendEntry> legend;
  for (const std::string& family : families_in_order(story)) legend.push_back({family, family_colour(story, family)});
  if (with_gaps) legend.push_back({"gaps between kernels", kGapColour});
  return legend;
}

// Legend entries side by side on one line from x, as the bar charts lay theirs out.
double legend_entry_width(const LegendEntry& entry) { return 44 + Svg::text_width(entry.label, 12); }

void draw_legend_row(Svg& svg, double x, double y, const std::vector<LegendEntry>& legend) {
  for (const LegendEntry& entry : legend) {
    report::draw_legend(svg, x, y, {entry});
    x += legend_entry_width(entry);
  }
}

// The width a legend row drawn from x = 16 needs.
double legend_row_width(const std::vector<LegendEntry>& legend) {
  double width = 16;
  for (const LegendEntry& entry : legend) width += legend_entry_width(entry);
  return width;
}

// Code points, for padding text with µ and × in it.
std::size_t display_width(const std::string& text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string pad(const std::string& text, std::size_t width, bool right = false) {
  const std::string fill(width > display_width(text) ? width - display_width(text) : 0, ' ');
  return right ? fill + text : text + fill;
}

}  // namespace

std::string family_colour(const Story& story, const std::string& family) {
  const std::vector<std::string> families = families_in_order(story);
  return report::palette(static_cast<std::size_t>(std::find(families.begin(), families.end(), family) - families.begin()));
}

std::string offset_time(double seconds) { return seconds > 0 ? report::format_time(seconds) : "0 µs"; }

std::string point_label(const Shape& point) {
  std::string label;
  for (const Dim& d : point.dims()) label += (label.empty() ? "" : " ") + d.name + ":" + std::to_string(d.value);
  return label;
}

Chart timeline_chart(const Story& story) {
  const Timeline& t = story.timeline;
  double label_width = Svg::text_width("GPU stream", kLabelSize, true);
  for (const KernelView& k : t.kernels) label_width = std::max(label_width, Svg::text_width(kernel_label(k), kLabelSize, true));
  const double left = label_width + 24, top = 96;
  const double rows = static_cast<double>(t.kernels.size() + 1);
  const double width = std::max(left + kPlotWidth + kNoteWidth, legend_row_width(family_legend(story, true))),
               height = top + kRow * rows + 58;
  const Frame frame{left, top, left + kPlotWidth, top + kRow * rows};
  const double span_us = t.span_s * 1e6;
  const Scale x{0, span_us, frame.left, frame.right, false};

  Svg svg(width, height);
  report::draw_title(svg, width, "Execution timeline: " + story_title(story),
                     "one cold run traced by CUPTI; kernels " + report::format_time(t.kernels_s) + " + gaps " +
                         report::format_time(t.gaps_s) + " = " + report::format_time(t.span_s));
  draw_legend_row(svg, 16, 72, family_legend(story, true));
  report::draw_axes(svg, frame, {x, report::linear_ticks(0, span_us, 8), report::tick_number, "µs since the first kernel started"},
                    {{0, 1, frame.top, frame.bottom}, {}, report::tick_number, ""});
  const auto bar = [&](const KernelView& k, double y, double inset) {
    const double x0 = x(k.kernel->start_s * 1e6), x1 = x(k.kernel->end_s * 1e6);
    svg.rect(x0, y + inset, std::max(x1 - x0, 1.0), kRow - 2 * inset, {.fill = family_colour(story, k.step->family)},
             k.step->label + " (" + k.step->family + "/" + k.step->variant + "): " + report::full_kernel_name(k.kernel->kernel) + ", " +
                 report::format_time(k.kernel->end_s - k.kernel->start_s) + " from " + us(k.kernel->start_s) + " µs, " +
                 report::format_pct(k.share_pct) + " of the step");
  };
  // The stream as Nsight Systems shows it: every kernel on one row, the gaps between them shaded.
  svg.text(left - 8, top + 13, "GPU stream", {.size = kLabelSize, .anchor = Anchor::end, .bold = true, .monospace = true});
  for (const KernelView& k : t.kernels) {
    if (k.gap_before_s > 0) {
      const double gap_start = x((k.kernel->start_s - k.gap_before_s) * 1e6);
      svg.rect(gap_start, top + 5, x(k.kernel->start_s * 1e6) - gap_start, kRow - 10, {.fill = kGapColour},
               "gap before " + k.step->label + ": " + report::format_time(k.gap_before_s));
    }
    bar(k, top, 3);
  }
  svg.line(frame.left, top + kRow, frame.right, top + kRow, {.stroke = "#999"});
  for (const KernelView& k : t.kernels) {
    const double y = top + kRow * static_cast<double>(k.index + 1);
    bar(k, y, 4);
    svg.text(left - 8, y + 13, kernel_label(k), {.size = kLabelSize, .anchor = Anchor::end, .monospace = true});
    svg.text(frame.right + 8, y + 13, report::format_time(k.kernel->end_s - k.kernel->start_s) + " · " + report::format_pct(k.share_pct),
             {.size = kLabelSize, .fill = "#333"});
  }
  return {"timeline.svg", "Execution timeline", svg.str(), ascii_timeline(story)};
}

std::string ascii_timeline(const Story& story, std::size_t width) {
  const Timeline& t = story.timeline;
  std::vector<std::string> steps, kernels;
  std::size_t step_width = 4, kernel_width = 6;
  for (const KernelView& k : t.kernels) {
    steps.push_back(k.step->label);
    kernels.push_back(shortened(report::short_kernel_name(k.kernel->kernel), 40));
    step_width = std::max(step_width, display_width(steps.back()));
    kernel_width = std::max(kernel_width, display_width(kernels.back()));
  }
  const auto column = [&](double seconds) {
    return static_cast<std::size_t>(std::clamp(seconds / t.span_s * static_cast<double>(width), 0.0, static_cast<double>(width)));
  };
  std::string out = "  " + std::to_string(t.kernels.size()) + " kernels on the stream in " + report::format_time(t.span_s) + ": kernels " +
                    report::format_time(t.kernels_s) + ", gaps " + report::format_time(t.gaps_s) + " (" + report::format_pct(t.gaps_pct) +
                    ")\n";
  const std::string axis_end = report::format_time(t.span_s);
  out += "  " + pad("#", 3, true) + "  " + pad("step", step_width) + "  " + pad("kernel", kernel_width) + "  " + pad("start", 9, true) +
         "  " + pad("time", 9, true) + "  " + pad("share", 6, true) + "  |0" + pad(axis_end, width - 1, true) + "|\n";
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const KernelView& k = t.kernels[i];
    std::string track(width, ' ');
    const std::size_t begin = std::min(column(k.kernel->start_s), width - 1);
    const std::size_t end = std::max(begin + 1, std::min(column(k.kernel->end_s), width));
    for (std::size_t c = begin; c < end; ++c) track[c] = '#';
    out += "  " + pad(std::to_string(i + 1), 3, true) + "  " + pad(steps[i], step_width) + "  " + pad(kernels[i], kernel_width) + "  " +
           pad(offset_time(k.kernel->start_s), 9, true) + "  " + pad(report::format_time(k.kernel->end_s - k.kernel->start_s), 9, true) +
           "  " + pad(report::format_pct(k.share_pct), 6, true) + "  |" + track + "|\n";
  }
  return out;
}

Chart breakdown_chart(const Story& story) {
  const Timeline& t = story.timeline;
  BarChart chart;
  chart.file = "breakdown.svg";
  chart.title = "Kernel time breakdown";
  chart.subtitle = "each step's kernels as a share of the step (first kernel start to last kernel end); colour: bound class";
  chart.axis_title = "% of the step";
  chart.reference = 0;
  chart.tick_label = [](double v) { return report::tick_number(v) + "%"; };
  std::vector<const StepView*> steps;
  for (const StepView& s : t.steps) steps.push_back(&s);
  std::stable_sort(steps.begin(), steps.end(), [](const StepView* a, const StepView* b) { return a->time_s > b->time_s; });
  std::vector<RooflineClass> classes;
  for (const StepView* s : steps) {
    const std::string colour = s->placed ? report::roofline_class_colour(s->roof.cls) : "#999999";
    if (s->placed && std::find(classes.begin(), classes.end(), s->roof.cls) == classes.end()) classes.push_back(s->roof.cls);
    const std::string bound = s->placed ? std::string(to_string(s->roof.cls)) : "not placed: no ceilings";
    chart.bars.push_back({s->step->label + " (" + s->step->family + "/" + s->step->variant + ")", s->share_pct, colour,
                          report::format_time(s->time_s) + " · " + report::format_pct(s->share_pct),
                          s->step->label + ": " + std::to_string(s->kernels.size()) + " kernel(s), " + bound, 0, 0});
  }
  for (const RooflineClass cls : classes) chart.legend.push_back({std::string(to_string(cls)), report::roofline_class_colour(cls)});
  if (t.gaps_s > 0) {
    chart.bars.push_back({"gaps between kernels", t.gaps_pct, kGapColour,
                          report::format_time(t.gaps_s) + " · " + report::format_pct(t.gaps_pct),
                          std::to_string(t.kernels.size() - 1) + " gaps: launch overhead on the stream", 0, 0});
    chart.legend.push_back({"gaps", kGapColour});
  }
  return report::draw_bar_chart(chart);
}

std::optional<Chart> step_roofline_chart(const Story& story) {
  const RunContext& c = story.run->context;
  report::RooflinePlot plot{.file = "roofline.svg",
                            .chart_title = "Roofline of the steps",
                            .title = "Roofline: " + story_title(story),
                            .subtitle = "each step's kernels at the step's bytes and FLOP models over their time in the timeline; " +
                                        (c.gpu_name.empty() ? std::string("ceilings measured in the run")
                                                            : c.gpu_name + "'s ceilings measured in the run"),
                            .calibration = c.calibration,
                            .legend_title = "step (family / variant)"};
  const std::vector<std::string> families = families_in_order(story);
  for (const StepView& s : story.timeline.steps) {
    if (!s.placed || !(s.roof.arithmetic_intensity > 0 && s.roof.flops_per_s > 0)) continue;
    const Marker marker =
        report::marker_for(static_cast<std::size_t>(std::find(families.begin(), families.end(), s.step->family) - families.begin()));
    plot.marks.push_back({s.roof.arithmetic_intensity, s.roof.flops_per_s, report::palette(s.index), marker,
                          s.step->label + " (" + s.step->family + "/" + s.step->variant + "): " +
                              report::sig3(s.roof.arithmetic_intensity) + " FLOP/byte, " + report::format_flops(s.roof.flops_per_s) + ", " +
                              report::format_pct(s.roof_pct) + " of the " + s.ceiling + " ceiling, " + std::string(to_string(s.roof.cls)),
                          s.roof_pct, s.ceiling});
    plot.legend.push_back(
        {std::to_string(s.index + 1) + " " + s.step->label + " (" + s.step->family + ")", report::palette(s.index), marker});
  }
  return report::draw_roofline(plot);
}

std::optional<Chart> scaling_share_chart(const Story& story) {
  std::vector<const ScalingPoint*> points;
  for (const ScalingPoint& p : story.scaling)
    if (!p.families.empty()) points.push_back(&p);
  if (points.size() < 2) return std::nullopt;
  double label_width = 0;
  for (const ScalingPoint* p : points) label_width = std::max(label_width, Svg::text_width(point_label(p->point), 12, true));
  const double left = label_width + 30, top = 96, row = 26;
  const double width = std::max(left + kPlotWidth + 40, legend_row_width(family_legend(story, true))),
               height = top + row * static_cast<double>(points.size()) + 58;
  const Frame frame{left, top, left + kPlotWidth, top + row * static_cast<double>(points.size())};
  const Scale x{0, 100, frame.left, frame.right, false};

  Svg svg(width, height);
  report::draw_title(svg, width, "Where the step's time goes, point by point",
                     "share of each point's step by kernel family (its timeline); bold: the point this story tells");
  draw_legend_row(svg, 16, 72, family_legend(story, true));
  report::draw_axes(svg, frame,
                    {x, report::linear_ticks(0, 100, 10), [](double v) { return report::tick_number(v) + "%"; }, "% of the step"},
                    {{0, 1, frame.top, frame.bottom}, {}, report::tick_number, ""});
  const std::vector<std::string> families = families_in_order(story);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ScalingPoint& p = *points[i];
    const double y = top + row * static_cast<double>(i);
    double at = 0;
    const auto segment = [&](const std::string& name, double pct, const std::string& colour) {
      if (pct <= 0) return;
      svg.rect(x(at), y + 4, x(at + pct) - x(at), row - 8, {.fill = colour, .stroke = "#fff", .stroke_width = 0.5},
               point_label(p.point) + ": " + name + " " + report::format_pct(pct));
      if (x(at + pct) - x(at) > 34)
        svg.text((x(at) + x(at + pct)) / 2, y + row / 2 + 4, report::format_pct(pct),
                 {.size = 10, .anchor = Anchor::middle, .fill = colour == kGapColour ? "#333" : "#fff"});
      at += pct;
    };
    double kernels_pct = 0;
    for (const std::string& family : families) {
      segment(family, p.family_share(family), family_colour(story, family));
      kernels_pct += p.family_share(family);
    }
    segment("gaps", 100 - kernels_pct, kGapColour);
    svg.text(left - 8, y + row / 2 + 4, point_label(p.point),
             {.size = 12, .anchor = Anchor::end, .bold = p.record == story.record, .monospace = true});
  }
  return Chart{"scaling-share.svg", "Scaling: share by family", svg.str(), ""};
}

std::optional<Chart> scaling_time_chart(const Story& story) {
  if (story.scaling.size() < 2) return std::nullopt;
  BarChart chart;
  chart.file = "scaling-time.svg";
  chart.title = "Time per token";
  chart.subtitle = "the step's end-to-end time (cold) divided by the tokens it processes; colour: the family with the most time";
  chart.axis_title = "µs per token (one layer)";
  chart.tick_label = report::tick_number;
  std::vector<std::string> dominant;
  for (const ScalingPoint& p : story.scaling) {
    const std::string family = p.families.empty() ? "" : p.families.front().family;
    const std::string colour = family.empty() ? "#999999" : family_colour(story, family);
    if (!family.empty() && std::find(dominant.begin(), dominant.end(), family) == dominant.end()) {
      dominant.push_back(family);
      chart.legend.push_back({family, colour});
    }
    chart.bars.push_back({point_label(p.point) + (p.record == story.record ? " *" : ""), p.per_token_s * 1e6, colour,
                          report::format_time(p.per_token_s) + " · step " + report::format_time(p.step_s),
                          point_label(p.point) + ": step " + report::format_time(p.step_s) +
                              (family.empty() ? "" : ", " + family + " " + report::format_pct(p.families.front().share_pct)),
                          0, 0});
  }
  return report::draw_bar_chart(chart);
}

std::string story_title(const Story& story) {
  const WorkloadRecord& w = *story.workload;
  const Workload* workload = WorkloadRegistry::instance().find_workload(w.workload);
  std::string title = (w.model.display_name.empty() ? w.model.name : w.model.display_name) + " " + w.workload + " step";
  for (const Dim& d : story.point.dims()) {
    std::string option = d.name;
    if (workload)
      for (const WorkloadParameter& p : workload->parameters())
        if (p.dim == d.name) option = p.option;
    title += ", " + option + " " + std::to_string(d.value);
  }
  return title;
}

}  // namespace kgate::story
