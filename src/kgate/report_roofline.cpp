// The roofline: arithmetic intensity against achieved FLOP/s, log-log, under the ceilings this
// GPU was measured to reach in the same run (copy and read bandwidth, bf16 GEMM rate).
#include <algorithm>
#include <cmath>

#include "report_charts.hpp"
#include "report_format.hpp"

namespace kgate::report {
namespace {

constexpr double kWidth = 940, kHeight = 580;
constexpr Frame kFrame{100, 64, 660, 500};
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
// ridge with the compute roof; its label rides along it, above or below.
void draw_memory_roof(Svg& svg, const Scale& x, const Scale& y, const Roof& roof, double compute, bool label_above) {
  const double ridge = compute / roof.bytes_per_s;
  const double start = std::max(x.low, y.low / roof.bytes_per_s);
  const Style style{.stroke = kRoofColour, .stroke_width = 2, .dash = roof.dash};
  svg.line(x(start), y(start * roof.bytes_per_s), x(ridge), y(compute), style);
  const double angle = std::atan2(y(compute) - y(start * roof.bytes_per_s), x(ridge) - x(start)) * 180 / std::acos(-1.0);
  // Right of the low-intensity points that crowd the left edge, left of the ridge labels.
  const double at = start * std::pow(ridge / start, 0.5);
  const double offset = label_above ? -7 : 15;
  svg.text(x(at), y(at * roof.bytes_per_s) + offset, roof.name + " " + format_bandwidth(roof.bytes_per_s),
           {.size = 12, .fill = kRoofColour, .rotate = angle});
  svg.marker(Marker::circle, x(ridge), y(compute), 7, {.fill = "#fff", .stroke = kRoofColour, .stroke_width = 1.5},
             "ridge of the " + roof.name + " roof: " + sig3(ridge) + " FLOP/byte");
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
  // Room right of the ridges for the compute roof and its label, and above it for the labels.
  const Scale x{decade_floor(ai_low / 2), decade_ceil(ai_high * 10), kFrame.left, kFrame.right, true};
  const Scale y{flops_low / 2, compute * 4, kFrame.bottom, kFrame.top, true};

  Svg svg(kWidth, kHeight);
  draw_title(svg, kWidth, plot.title, plot.subtitle);
  draw_axes(svg, kFrame, {x, log_ticks(x.low, x.high), si, "arithmetic intensity (FLOP per byte of minimum traffic)"},
            {y, log_ticks(y.low, y.high), si, "achieved FLOP/s"});

  svg.line(x(compute / roofs.front().bytes_per_s), y(compute), x.pixel_high, y(compute),
           {.stroke = kRoofColour, .stroke_width = 2});
  svg.text(kFrame.right - 6, y(compute) - 8, "compute " + format_flops(compute),
           {.size = 12, .anchor = Anchor::end, .fill = kRoofColour});
  for (std::size_t i = 0; i < roofs.size(); ++i) draw_memory_roof(svg, x, y, roofs[i], compute, i > 0);

  const RoofMark* best = &plot.marks.front();
  for (const RoofMark& mark : plot.marks) {
    svg.marker(mark.marker, x(mark.intensity), y(mark.flops_per_s), 9,
               {.fill = mark.colour, .stroke = "#222", .stroke_width = 0.6, .opacity = 0.85}, mark.tooltip);
    if (mark.roof_pct > best->roof_pct) best = &mark;
  }
  svg.text(x(best->intensity) + 9, y(best->flops_per_s) + 4, format_pct(best->roof_pct) + " of " + best->ceiling,
           {.size = 11, .fill = "#222"});

  svg.text(kFrame.right + 20, kFrame.top + 4, plot.legend_title, {.size = 12, .bold = true});
  double legend_y = draw_legend(svg, kFrame.right + 20, kFrame.top + 24, plot.legend);
  svg.text(kFrame.right + 20, legend_y + 10, "ceilings (measured)", {.size = 12, .bold = true});
  std::vector<LegendEntry> roof_entries = {{"compute: bf16 GEMM (cuBLAS)", kRoofColour, Marker::square, "-"}};
  for (const Roof& roof : roofs)
    roof_entries.push_back({roof.name + " bandwidth", kRoofColour, Marker::square, roof.dash.empty() ? "-" : roof.dash});
  roof_entries.push_back({"ridge point", "#fff", Marker::circle, ""});
  draw_legend(svg, kFrame.right + 20, legend_y + 30, roof_entries);
  return Chart{plot.file, plot.chart_title, svg.str(), ""};
}

std::optional<Chart> roofline_chart(const ReportModel& model) {
  if (!model.has_ceilings()) return std::nullopt;
  RooflinePlot plot{.file = "roofline.svg",
                    .chart_title = "Roofline",
                    .title = "Roofline: " + (model.context().gpu_name.empty() ? std::string("this GPU") : model.context().gpu_name),
                    .subtitle = "ceilings measured in this run; each point a benchmark at its median time",
                    .calibration = model.context().calibration,
                    .legend_title = "family / variant"};
  // One colour per variant name (the same name in two families is the same colour), one marker
  // per family.
  std::vector<std::string> variants, families;
  for (const FamilyView& family : model.families) {
    families.push_back(family.name);
    for (const std::string& variant : family.variants)
      if (std::find(variants.begin(), variants.end(), variant) == variants.end()) variants.push_back(variant);
  }
  const auto colour_of = [&](const std::string& variant) {
    return palette(static_cast<std::size_t>(std::find(variants.begin(), variants.end(), variant) - variants.begin()));
  };
  const auto marker_of = [&](const std::string& family) {
    return marker_for(static_cast<std::size_t>(std::find(families.begin(), families.end(), family) - families.begin()));
  };
  for (const BenchmarkView& v : model.views) {
    if (!(v.ran() && v.record->arithmetic_intensity > 0 && v.record->flops_per_s > 0)) continue;
    const BenchmarkRecord& r = *v.record;
    plot.marks.push_back({r.arithmetic_intensity, r.flops_per_s, colour_of(r.variant), marker_of(r.family),
                          r.name + ": " + sig3(r.arithmetic_intensity) + " FLOP/byte, " + format_flops(r.flops_per_s) + ", " +
                              format_pct(v.roof.pct) + " of the " + v.roof.ceiling + " ceiling, " +
                              std::string(to_string(r.roofline)),
                          v.roof.pct, v.roof.ceiling});
  }
  for (const FamilyView& family : model.families)
    for (const std::string& variant : family.variants)
      plot.legend.push_back({family.name + " / " + variant, colour_of(variant), marker_of(family.name)});
  return draw_roofline(plot);
}

}  // namespace kgate::report
