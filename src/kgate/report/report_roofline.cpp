// The roofline: arithmetic intensity against achieved FLOP/s, log-log, under the ceilings this
// GPU was measured to reach in the same run (copy and read bandwidth, bf16 GEMM rate).
#include <algorithm>
#include <cmath>
#include <map>

#include "report_charts.hpp"
#include "kgate/report/format.hpp"

namespace kgate::report {
namespace {

// The plot area of a full-size roofline and of a small multiple (one per family); the legend sits
// right of it, and the SVG grows to hold the legend whole.
constexpr Frame kFullFrame{100, 64, 660, 500};
constexpr Frame kSmallFrame{76, 58, 396, 336};
constexpr double kLegendGap = 20, kLegendRow = 19, kMargin = 14;
const std::string kRoofColour = "#333";

// "1G", "10T", "1P": FLOP/s ticks; "0.1", "1k" for intensities.
std::string si(double value) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int index = 0;
  while (value >= 1000 && index < 6) {
    value /= 1000;
    ++index;
  }
  return tick_number(value) + kPrefixes[index];
}

struct Roof {
  std::string name;  // "copy", "read"
  double bytes_per_s;
  std::string dash;
};

// The sloped part of a memory roof, from the left edge (or where it enters the plot) to its
// ridge with the compute roof; its label rides along it, above or below. `labelled` false (a small
// multiple, where labels on the lines would cover the points): the legend gives the figures.
void draw_memory_roof(Svg& svg, const Scale& x, const Scale& y, const Roof& roof, double compute, bool label_above, bool labelled) {
  const double ridge = compute / roof.bytes_per_s;
  const double start = std::max(x.low, y.low / roof.bytes_per_s);
  const Style style{.stroke = kRoofColour, .stroke_width = 2, .dash = roof.dash};
  svg.line(x(start), y(start * roof.bytes_per_s), x(ridge), y(compute), style);
  const std::string ridge_text = "ridge of the " + roof.name + " roof: " + sig3(ridge) + " FLOP/byte";
  if (!labelled) {
    svg.marker(Marker::circle, x(ridge), y(compute), 7, {.fill = "#fff", .stroke = kRoofColour, .stroke_width = 1.5}, ridge_text);
    return;
  }
  const double angle = std::atan2(y(compute) - y(start * roof.bytes_per_s), x(ridge) - x(start)) * 180 / std::acos(-1.0);
  // Right of the low-intensity points that crowd the left edge, left of the ridge labels.
  const double at = start * std::pow(ridge / start, 0.5);
  const double offset = label_above ? -7 : 15;
  svg.text(x(at), y(at * roof.bytes_per_s) + offset, roof.name + " " + format_bandwidth(roof.bytes_per_s),
           {.size = 12, .fill = kRoofColour, .rotate = angle});
  svg.marker(Marker::circle, x(ridge), y(compute), 7, {.fill = "#fff", .stroke = kRoofColour, .stroke_width = 1.5}, ridge_text);
  // Two ridges sit close together: one label above the compute line to the left of its ridge,
  // the other below it to the right.
  svg.text(x(ridge) + (label_above ? -8 : 8), y(compute) + (label_above ? -8 : 18), "ridge " + sig3(ridge) + " FLOP/B",
           {.size = 11, .anchor = label_above ? Anchor::end : Anchor::start, .fill = "#555"});
}

}  // namespace

std::optional<Chart> draw_roofline(const RooflinePlot& plot) {
  const Calibration& calibration = plot.calibration;
  if (!(calibration.copy_bytes_per_s > 0 && calibration.gemm_flops_per_s > 0) || plot.marks.empty()) return std::nullopt;
  const double compute = calibration.gemm_flops_per_s;
  std::vector<Roof> roofs = {{"copy", calibration.copy_bytes_per_s, ""}};
  if (calibration.read_bytes_per_s > 0) roofs.push_back({"read", calibration.read_bytes_per_s, "7 4"});
  double ai_low = compute / roofs.front().bytes_per_s, ai_high = ai_low, flops_low = compute;
  for (const Roof& roof : roofs) {
    ai_low = std::min(ai_low, compute / roof.bytes_per_s);
    ai_high = std::max(ai_high, compute / roof.bytes_per_s);
  }
  for (const RoofMark& mark : plot.marks) {
    ai_low = std::min(ai_low, mark.intensity);
    ai_high = std::max(ai_high, mark.intensity);
    flops_low = std::min(flops_low, mark.flops_per_s);
  }
  const Frame frame = plot.small ? kSmallFrame : kFullFrame;
  // Room right of the ridges for the compute roof and its label, and above it for the labels.
  const Scale x{decade_floor(ai_low / 2), decade_ceil(ai_high * 10), frame.left, frame.right, true};
  const Scale y{flops_low / 2, compute * 4, frame.bottom, frame.top, true};

  // A small multiple names the ceilings' figures in its legend instead of along the lines.
  std::vector<LegendEntry> roof_entries = {
      {plot.small ? "compute " + format_flops(compute) + " (bf16 GEMM)" : "compute: bf16 GEMM (cuBLAS)", kRoofColour, Marker::square, "-"}};
  for (const Roof& roof : roofs)
    roof_entries.push_back({plot.small ? roof.name + " " + format_bandwidth(roof.bytes_per_s) : roof.name + " bandwidth", kRoofColour,
                            Marker::square, roof.dash.empty() ? "-" : roof.dash});
  roof_entries.push_back({"ridge point", "#fff", Marker::circle, ""});
  const RoofMark* best = &plot.marks.front();
  for (const RoofMark& mark : plot.marks)
    if (mark.roof_pct > best->roof_pct) best = &mark;
  const std::string best_text = format_pct(best->roof_pct) + " of " + best->ceiling;
  if (plot.small) roof_entries.push_back({"best: " + best_text, "none", Marker::circle, ""});
  // The legend inside the SVG, whatever its labels: the box grows to the right and down for it.
  double legend_width = Svg::text_width(plot.legend_title, 12);
  for (const LegendEntry& e : plot.legend) legend_width = std::max(legend_width, 20 + Svg::text_width(e.label, 12));
  for (const LegendEntry& e : roof_entries) legend_width = std::max(legend_width, 20 + Svg::text_width(e.label, 12));
  const double legend_x = frame.right + kLegendGap;
  const double legend_bottom = frame.top + 24 + kLegendRow * static_cast<double>(plot.legend.size() + roof_entries.size()) + 20;
  const double width = std::max(
      {legend_x + legend_width + kMargin, Svg::text_width(plot.subtitle, 12) + 2 * kMargin, Svg::text_width(plot.title, 16) + 2 * kMargin});
  const double height = std::max(frame.bottom + 64, legend_bottom + kMargin);

  Svg svg(width, height);
  draw_title(svg, width, plot.title, plot.subtitle);
  draw_axes(svg, frame,
            {x, log_ticks(x.low, x.high), si,
             plot.small ? "FLOP per byte of minimum traffic" : "arithmetic intensity (FLOP per byte of minimum traffic)"},
            {y, log_ticks(y.low, y.high), si, "achieved FLOP/s"});

  svg.line(x(compute / roofs.front().bytes_per_s), y(compute), x.pixel_high, y(compute), {.stroke = kRoofColour, .stroke_width = 2});
  if (!plot.small)
    svg.text(frame.right - 6, y(compute) - 8, "compute " + format_flops(compute), {.size = 12, .anchor = Anchor::end, .fill = kRoofColour});
  for (std::size_t i = 0; i < roofs.size(); ++i) draw_memory_roof(svg, x, y, roofs[i], compute, i > 0, !plot.small);

  for (const auto& journey : plot.journeys) {
    std::vector<std::pair<double, double>> pixels;
    for (const auto& [intensity, flops] : journey) pixels.emplace_back(x(intensity), y(flops));
    if (pixels.size() > 1) svg.polyline(pixels, {.stroke = "#8c959f", .stroke_width = 1, .opacity = 0.7});
  }
  for (const RoofMark& mark : plot.marks)
    svg.marker(mark.marker, x(mark.intensity), y(mark.flops_per_s), 9,
               {.fill = mark.colour, .stroke = "#222", .stroke_width = 0.6, .opacity = 0.85}, mark.tooltip);
  // The best point: labelled beside it, or (small) ringed and named in the legend.
  if (plot.small)
    svg.marker(Marker::circle, x(best->intensity), y(best->flops_per_s), 16, {.stroke = "#222", .stroke_width = 1.2}, best->tooltip);
  else svg.text(x(best->intensity) + 9, y(best->flops_per_s) + 4, best_text, {.size = 11, .fill = "#222"});

  svg.text(legend_x, frame.top + 4, plot.legend_title, {.size = 12, .bold = true});
  const double legend_y = draw_legend(svg, legend_x, frame.top + 24, plot.legend);
  svg.text(legend_x, legend_y + 10, "ceilings (measured)", {.size = 12, .bold = true});
  draw_legend(svg, legend_x, legend_y + 30, roof_entries);
  return Chart{plot.file, plot.chart_title, svg.str(), ""};
}

std::vector<Chart> roofline_charts(const ReportModel& model) {
  std::vector<Chart> charts;
  if (!model.has_ceilings()) return charts;
  // Small multiples, one per family: its variants (peers among them) each with a colour and a
  // marker of its own, so no two entries of a legend look alike.
  for (const FamilyView& family : model.families) {
    RooflinePlot plot{.file = "roofline-" + file_safe(family.name) + ".svg",
                      .chart_title = "Roofline: " + family.name,
                      .title = "Roofline: " + family.name,
                      .subtitle = "a point per variant and shape, a shape's variants joined; ceilings of " +
                                  (model.context().gpu_name.empty() ? std::string("this GPU") : model.context().gpu_name),
                      .calibration = model.context().calibration,
                      .legend_title = "variant",
                      .small = true};
    const auto index_of = [&](const std::string& variant) {
      return static_cast<std::size_t>(std::find(family.variants.begin(), family.variants.end(), variant) - family.variants.begin());
    };
    // The family's journey: at each shape, a line through its variants in the family's order
    // (the reference first), so each step up (or down) from the reference is one segment.
    std::map<std::string, std::size_t> journey_of_shape;
    for (const BenchmarkView* v : family.rows) {
      if (!(v->ran() && v->record->arithmetic_intensity > 0 && v->record->flops_per_s > 0)) continue;
      const BenchmarkRecord& r = *v->record;
      const auto [slot, added] = journey_of_shape.try_emplace(r.shape, plot.journeys.size());
      if (added) plot.journeys.emplace_back();
      plot.journeys[slot->second].emplace_back(r.arithmetic_intensity, r.flops_per_s);
      plot.marks.push_back({r.arithmetic_intensity, r.flops_per_s, palette(index_of(r.variant)), marker_for(index_of(r.variant)),
                            r.name + ": " + sig3(r.arithmetic_intensity) + " FLOP/byte, " + format_flops(r.flops_per_s) + ", " +
                                format_pct(v->roof.pct) + " of the " + v->roof.ceiling + " ceiling, " + std::string(to_string(r.roofline)),
                            v->roof.pct, v->roof.ceiling});
    }
    for (const std::string& variant : family.variants)
      plot.legend.push_back(
          {variant +
               (family.roles.contains(variant) && family.roles.at(variant) != "candidate" ? " (" + family.roles.at(variant) + ")" : ""),
           palette(index_of(variant)), marker_for(index_of(variant))});
    if (auto chart = draw_roofline(plot)) charts.push_back(std::move(*chart));
  }
  return charts;
}

}  // namespace kgate::report
