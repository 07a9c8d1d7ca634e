// The first screen of the report: the gate's verdict as a badge, the benchmarks that changed with
// what changed in them, and every family on one line against the baseline, its best peer and its
// roof.
#include <algorithm>
#include <cmath>

#include "kgate/base/escape.hpp"
#include "kgate/base/text.hpp"
#include "kgate/gate/comparison_output.hpp"
#include "report_drilldown.hpp"
#include "kgate/report/format.hpp"
#include "report_inline.hpp"
#include "report_sections.hpp"

namespace kgate::report {
namespace {

constexpr std::size_t kDashboardRows = 12;  // more changed rows go to a fold under them
// The heatmap's scales: the change at which a cell is fully red or green.
constexpr double kFullShadeSpeedup = 1.10, kFullShadePeer = 1.5;

double shade(double ratio, double full) {
  if (!(ratio > 0)) return std::numeric_limits<double>::quiet_NaN();
  return std::clamp(std::log(ratio) / std::log(full), -1.0, 1.0);
}

const BenchmarkView* view_of(const ReportModel& model, const std::string& name) {
  for (const BenchmarkView& v : model.views)
    if (v.record->name == name) return &v;
  return nullptr;
}

// A benchmark's median over the history's runs, oldest first, as a line 96 px wide: where this
// change sits in the benchmark's own past. Empty with fewer than two runs that timed it.
std::string sparkline(const ReportModel& model, const std::string& name) {
  std::vector<double> medians;
  for (const HistoryRow& row : model.history)
    for (const BenchmarkRecord& r : row.run->run.benchmarks)
      if (r.name == name && r.status == BenchmarkStatus::ok && r.headline_median_s() > 0) medians.push_back(r.headline_median_s());
  if (medians.size() < 2) return "";
  constexpr double kWidth = 96, kHeight = 22, kPad = 3;
  const auto [low, high] = std::minmax_element(medians.begin(), medians.end());
  const double span = *high > *low ? *high - *low : 1;
  std::string points, title;
  for (std::size_t i = 0; i < medians.size(); ++i) {
    const double x = kPad + (kWidth - 2 * kPad) * static_cast<double>(i) / static_cast<double>(medians.size() - 1);
    const double y = kHeight - kPad - (kHeight - 2 * kPad) * (medians[i] - *low) / span;
    points += printf_string("%.1f,%.1f ", x, y);
    title += (title.empty() ? "" : ", ") + format_time(medians[i]);
  }
  const std::string last = points.substr(points.rfind(' ', points.size() - 2) + 1);
  const std::size_t comma = last.find(',');
  std::string svg = "<svg class=\"spark\" width=\"96\" height=\"22\" viewBox=\"0 0 96 22\" role=\"img\"><title>" +
                    xml_escape("median by run, oldest first: " + title) + "</title>";
  svg += "<polyline fill=\"none\" stroke=\"#57606a\" stroke-width=\"1.2\" points=\"" + points + "\"/>";
  svg += "<circle r=\"2.2\" fill=\"#cf222e\" cx=\"" + last.substr(0, comma) + "\" cy=\"" + last.substr(comma + 1, last.size() - comma - 2) +
         "\"/></svg>";
  return svg;
}

}  // namespace

bool is_change(Verdict v) { return v == Verdict::slower || v == Verdict::failed || v == Verdict::at_threshold || v == Verdict::faster; }

std::vector<const BenchmarkComparison*> changed_benchmarks(const ComparisonReport& comparison) {
  std::vector<const BenchmarkComparison*> changed;
  for (const BenchmarkComparison* row : rows_by_impact(comparison, false))
    if (is_change(row->verdict)) changed.push_back(row);
  return changed;
}

Table changes_table(const ReportModel& model, const std::vector<const BenchmarkComparison*>& rows, const std::string& page) {
  const bool history = !model.history.empty();
  Table table;
  table.compact = true;
  table.columns = {{"Benchmark"},
                   {"Verdict", false, true, term_tip("Verdict")},
                   {"Change", true, true, term_tip("Change")},
                   {"Δ time", true, true, term_tip("Δ time")},
                   {"Interval", true, false, term_tip("Interval")},
                   {"Cycles", true, false, term_tip("Cycles")},
                   {"What changed", false, true, "Kernel, launch, counter and timing differences that explain the change"}};
  if (history) table.columns.push_back({"History", false, false, "The benchmark's median in each run of the history"});
  for (const BenchmarkComparison* c : rows) {
    const BenchmarkView* view = view_of(model, c->name);
    const Tone tone = c->verdict == Verdict::faster ? Tone::good : c->fails_gate() ? Tone::bad : Tone::warn;
    std::string verdict(to_string(c->verdict));
    if (c->verdict == Verdict::slower && !c->gated) verdict += " (vendor, not gated)";
    const bool timed = c->speedup > 0;
    Cell why{"", Tone::plain};
    // The row's own columns say Δ time and cycles: its chips say the rest.
    if (view)
      for (std::string& chip : change_chips(model, *view))
        if (!chip.starts_with("Δ ") && !chip.starts_with("cycles ")) why.chips.push_back(std::move(chip));
    if (why.chips.empty()) why.text = c->notes.empty() ? "-" : literal(c->notes.front());
    std::vector<Cell> row = {{link(code(c->name), page, benchmark_anchor(c->name))},
                             {"**" + verdict + "**", tone, term_tip(verdict)},
                             {timed ? format_time_change_of_speedup(c->speedup) : "-", tone},
                             {timed ? format_time_change(c->new_median_s - c->baseline_median_s) : "-"},
                             {timed && !c->low_confidence ? format_interval(c->ci_low, c->ci_high) : "-"},
                             {format_ratio(c->cycle_speedup)},
                             std::move(why)};
    if (history) row.push_back({"", Tone::plain, "", "", {}, sparkline(model, c->name)});
    table.rows.push_back(std::move(row));
  }
  return table;
}

namespace {

// One line per family: its geomean speedup against the baseline, kgate's against the best peer, and
// the best share of a roof its own variants reach; each cell shaded from red to green.
Table family_heatmap(const ReportModel& model) {
  Table table;
  table.compact = true;
  const bool compared = model.comparison.has_value();
  table.columns = {{"Family"}};
  if (compared) table.columns.push_back({"vs baseline", true, true, "Geomean speedup of its benchmarks against the baseline"});
  const bool peers = std::any_of(model.families.begin(), model.families.end(), [](const FamilyView& f) { return !f.peers.empty(); });
  if (peers) table.columns.push_back({"vs best peer", true, true, term_tip("kgate vs peer") + " Geomean over its shapes."});
  table.columns.push_back({"Best share of its roof", true, true, term_tip("% of roof")});
  for (const FamilyView& family : model.families) {
    std::vector<Cell> row = {{link(code(family.name), "", family_anchor(family.name))}};
    if (compared) {
      Geomean speedup;
      std::size_t slower = 0;
      for (const BenchmarkView* v : family.rows)
        if (v->comparison && v->comparison->speedup > 0) {
          speedup.add(v->comparison->speedup);
          slower += v->comparison->fails_gate();
        }
      Cell cell{speedup.count() ? format_ratio(speedup.value()) + (slower ? " · " + std::to_string(slower) + " slower" : "") : "-",
                Tone::plain,
                plural(speedup.count(), "benchmark", "benchmarks") + " compared, " + std::to_string(slower) + " failing the gate"};
      cell.heat = slower ? -1 : shade(speedup.value(), kFullShadeSpeedup);
      row.push_back(std::move(cell));
    }
    if (peers) {
      Geomean vs_peer;
      for (const PeerMatch& m : family.peer_matches)
        if (m.speedup > 0) vs_peer.add(m.speedup);
      Cell cell{vs_peer.count() ? format_ratio(vs_peer.value()) : "-", Tone::plain,
                plural(vs_peer.count(), "shape", "shapes") + " with a peer"};
      cell.heat = shade(vs_peer.value(), kFullShadePeer);
      row.push_back(std::move(cell));
    }
    const BenchmarkView* best = nullptr;
    for (const BenchmarkView* v : family.rows)
      if (v->ran() && v->record->role != "peer" && (!best || v->roof.pct > best->roof.pct)) best = v;
    Cell roof{best ? roof_text(best->roof) : "-", Tone::plain, best ? best->record->name : ""};
    if (best && best->roof.pct > 0) roof.heat = std::clamp((best->roof.pct - 50) / 50, -1.0, 1.0);
    row.push_back(std::move(roof));
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace

Badge verdict_badge(const ReportModel& model) {
  if (!model.comparison) return {"NO BASELINE", Tone::muted, "The run was not compared: give `--baseline FILE` or `--baseline-dir DIR`."};
  const bool failed = model.comparison->regression();
  Badge badge{failed ? "FAIL" : "PASS", failed ? Tone::bad : Tone::good};
  // The headline's leading emoji ("❌ kgate: ...") is the Markdown's badge; the HTML draws its own.
  std::string headline = verdict_headline(*model.comparison, Glyphs::unicode);
  if (const std::size_t space = headline.find(' ');
      space != std::string::npos && std::any_of(headline.begin(), headline.begin() + static_cast<std::ptrdiff_t>(space),
                                                [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    badge.icon = headline.substr(0, space);
    headline.erase(0, space + 1);
  }
  badge.text = literal(headline);
  return badge;
}

Section dashboard_section(const ReportModel& model) {
  Section section{"Dashboard", {}};
  section.blocks.emplace_back(verdict_badge(model));
  if (model.comparison) {
    const std::vector<const BenchmarkComparison*> changed = changed_benchmarks(*model.comparison);
    if (!changed.empty()) {
      const std::size_t shown = std::min(changed.size(), kDashboardRows);
      section.blocks.emplace_back(changes_table(model, {changed.begin(), changed.begin() + static_cast<std::ptrdiff_t>(shown)}));
      if (changed.size() > shown) {
        Section more{std::to_string(changed.size() - shown) + " more changed benchmarks", {}};
        more.fold = Fold::closed;
        more.blocks.emplace_back(changes_table(model, {changed.begin() + static_cast<std::ptrdiff_t>(shown), changed.end()}));
        section.subsections.push_back(std::move(more));
      }
    }
  }
  Table heatmap = family_heatmap(model);
  section.blocks.emplace_back(std::move(heatmap));
  return section;
}

}  // namespace kgate::report
