// The kernel families: one fold each, folded unless something in it changed, holding a matrix of
// its shapes (their axes as columns) by its variants, the journey, its charts, the panels of the
// benchmarks that changed, and every benchmark's row for whoever opens it.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

#include "kgate/base/escape.hpp"
#include "kgate/base/text.hpp"
#include "report_charts.hpp"
#include "report_drilldown.hpp"
#include "kgate/report/format.hpp"
#include "report_inline.hpp"
#include "report_sections.hpp"

namespace kgate::report {

std::string family_anchor(const std::string& family) { return "family-" + slug(family); }

std::string roof_text(const RoofShare& roof) {
  if (!(roof.pct > 0)) return "-";
  return format_pct(roof.pct) + " " + roof.ceiling + (roof.pct > 100 ? " †" : "");
}

// "`naive` → `vectorized` 2.10× (12 shapes) → `weight_first` 1.06× (12 shapes)": each step of the
// family's journey against the one before it, chained where one step starts at the variant the
// last one reached; where two steps start from the same variant, each branch is its own chain.
std::string journey_text(const FamilyView& family) {
  struct Chain {
    std::string text, end;
  };
  std::vector<Chain> chains;
  for (const JourneyStep& step : family.journey) {
    auto chain = std::find_if(chains.begin(), chains.end(), [&](const Chain& c) { return c.end == step.from; });
    if (chain == chains.end()) chain = chains.insert(chains.end(), {code(step.from), step.from});
    chain->text += " → " + code(step.to) + " " +
                   (step.shapes ? format_ratio(step.speedup) + " (" + plural(step.shapes, "shape", "shapes") + ")"
                                : std::string("(no shape ran both)"));
    chain->end = step.to;
  }
  std::string text;
  for (const Chain& chain : chains) text += (text.empty() ? "" : "; ") + chain.text;
  return text;
}

namespace {

// The footnote marks of a table: one number per distinct reason (a skip, an error), in order of first
// use, so the reasons sit under the table instead of in a time column.
class Footnotes {
 public:
  std::string mark(const std::string& reason) {
    auto it = std::find(reasons_.begin(), reasons_.end(), reason);
    if (it == reasons_.end()) it = reasons_.insert(reasons_.end(), reason);
    return "[" + std::to_string(it - reasons_.begin() + 1) + "]";
  }
  Bullets list() const {
    Bullets notes;
    for (std::size_t i = 0; i < reasons_.size(); ++i) notes.items.push_back("[" + std::to_string(i + 1) + "] " + literal(reasons_[i]));
    return notes;
  }
  bool empty() const { return reasons_.empty(); }

 private:
  std::vector<std::string> reasons_{};
};

Cell time_cell(const BenchmarkView& v, Footnotes& footnotes) {
  if (v.ran()) return {format_time(v.median_s)};
  const BenchmarkRecord& r = *v.record;
  return {to_string(r.status) + " " + footnotes.mark(r.error.empty() ? "no reason recorded" : r.error),
          r.status == BenchmarkStatus::failed ? Tone::bad : Tone::muted};
}

Cell verdict_cell(const BenchmarkComparison& row) {
  std::string text(to_string(row.verdict));
  if (row.low_confidence) text += " (low confidence)";
  switch (row.verdict) {
    case Verdict::slower:
    case Verdict::failed: return {"**" + text + "**", Tone::bad};
    case Verdict::faster: return {text, Tone::good};
    case Verdict::noisy: return {text, Tone::warn};
    default: return {text, Tone::plain};
  }
}

Table family_table(const ReportModel& model, const FamilyView& family, Footnotes& footnotes) {
  const bool compared = model.comparison.has_value();
  Table table;
  table.compact = true;
  table.columns = {{"Shape"}, {"Variant"}};
  if (compared) table.columns.insert(table.columns.end(), {{"Baseline", true, false}, {"New", true}, {"Speedup", true}, {"Verdict"}});
  else table.columns.insert(table.columns.end(), {{"Median", true}, {"rsd", true, false}});
  table.columns.insert(table.columns.end(), {{"Achieved", true, false}, {"% of roof", true}, {"Bound", false, false}});
  for (const std::string& comparator : family.comparators)
    table.columns.push_back({"vs " + literal(comparator) + " (" + literal(family.roles.at(comparator)) + ")", true});
  if (!family.peers.empty()) table.columns.push_back({"vs best peer", true});

  for (const BenchmarkView* v : family.rows) {
    const BenchmarkRecord& r = *v->record;
    std::vector<Cell> row = {shape_cell(r), variant_cell(r)};
    if (compared) {
      const BenchmarkComparison* c = v->comparison;
      row.push_back({c ? format_time(c->baseline_median_s) : "-"});
      row.push_back(v->ran() ? Cell{format_time(c ? c->new_median_s : v->median_s)} : time_cell(*v, footnotes));
      row.push_back({c ? format_ratio(c->speedup) : "-"});
      row.push_back(c ? verdict_cell(*c) : Cell{"-"});
    } else {
      row.push_back(time_cell(*v, footnotes));
      const TimingRecord* t = v->ran() ? r.headline() : nullptr;
      row.push_back({t ? format_pct(t->summary.rel_stddev() * 100) : "-"});
    }
    row.push_back({achieved_rate(*v)});
    row.push_back({v->roof.pct > 0 ? format_pct(v->roof.pct) + " " + v->roof.ceiling : "-"});
    row.push_back({v->ran() && v->roof.pct > 0 ? std::string(to_string(r.roofline)) : "-"});
    for (const Versus& vs : v->versus) {
      if (vs.self) row.push_back({"—", Tone::muted});
      else row.push_back({format_ratio(vs.speedup), vs.speedup >= 1 ? Tone::plain : Tone::warn});
    }
    if (!family.peers.empty())
      row.push_back(v->vs_best_peer > 0 ? Cell{format_ratio(v->vs_best_peer), v->vs_best_peer >= 1 ? Tone::plain : Tone::warn} : Cell{"-"});
    table.rows.push_back(std::move(row));
  }
  return table;
}

// The range of a peer's one-time compile over its shapes ("compiled in 3.1–9.8 s per shape"), or "".
std::string compile_time(const FamilyView& family, const std::string& peer) {
  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (const BenchmarkView* row : family.rows) {
    const auto it = row->record->provenance.find("compile_s");
    if (row->record->variant != peer || it == row->record->provenance.end()) continue;
    const double s = std::strtod(it->second.c_str(), nullptr);
    low = std::min(low, s);
    high = std::max(high, s);
  }
  if (high <= 0) return "";
  return "compiled in " + (low == high ? sig3(high) : sig3(low) + "–" + sig3(high)) + " s per shape (before timing, not in its time)";
}

// Where a peer beats kgate: the kernel it ran, so the reader knows what to study; one line per
// peer and kernel, with the launch shapes it took ("grids 1×1×1 to 256×1×1, block 512×1×1").
std::string winning_kernels(const FamilyView& family) {
  struct Group {
    std::string peer, kernel;
    std::vector<const KernelRecord*> launches;
  };
  std::vector<Group> groups;
  for (const PeerMatch& m : family.peer_matches) {
    if (!m.peer || m.speedup <= 0 || m.speedup >= 1) continue;
    const KernelRecord* k = dominant_kernel(*m.peer->record);
    if (!k) continue;
    const std::string& peer = m.peer->record->variant;
    const std::string kernel = short_kernel_name(*k);
    auto group = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.peer == peer && g.kernel == kernel; });
    if (group == groups.end()) group = groups.insert(groups.end(), Group{peer, kernel, {}});
    group->launches.push_back(k);
  }
  if (groups.empty()) return "";
  const auto distinct = [](std::vector<const KernelRecord*> launches, auto dims) {
    std::sort(launches.begin(), launches.end(),
              [](const KernelRecord* a, const KernelRecord* b) { return block_count(*a) < block_count(*b); });
    std::vector<std::string> out;
    for (const KernelRecord* k : launches)
      if (const std::string d = format_dims(dims(*k)); std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    return out;
  };
  std::vector<std::string> lines;
  for (const Group& g : groups) {
    const std::vector<std::string> grids = distinct(g.launches, [](const KernelRecord& k) -> const int(&)[3] { return k.grid; });
    const std::vector<std::string> blocks = distinct(g.launches, [](const KernelRecord& k) -> const int(&)[3] { return k.block; });
    const std::string grid_text = grids.size() == 1   ? "grid " + grids.front()
                                  : grids.size() <= 3 ? "grids " + join_words(grids)
                                                      : "grids " + grids.front() + " to " + grids.back();
    const std::size_t n = g.launches.size();
    lines.push_back(code(g.peer) + " ran " + code(g.kernel) + " at " + plural(n, "shape", "shapes") + " (" + grid_text + ", " +
                    (blocks.size() == 1 ? "block " : "blocks ") + join_words(blocks) + ")");
  }
  return "Where a peer is faster, the kernel it ran: " + join_words(lines) + ".";
}

// What each peer runs, from its records' provenance, and the peers left out for a wrong result.
Bullets peer_notes(const FamilyView& family) {
  Bullets notes;
  for (const std::string& peer : family.peers) {
    const BenchmarkRecord* first = nullptr;
    for (const BenchmarkView* row : family.rows)
      if (row->record->variant == peer && (!first || row->record->correct)) first = row->record;
    if (!first) continue;
    const auto said = [&](const char* key) {
      const auto it = first->provenance.find(key);
      return it == first->provenance.end() ? std::string() : it->second;
    };
    std::string text = code(peer) + " (peer)";
    if (!said("call").empty()) text += ": " + code(said("call"));
    if (!said("library").empty()) text += ", " + literal(said("library"));
    if (!said("note").empty()) text += ". " + literal(said("note"));
    if (const std::string compiled = compile_time(family, peer); !compiled.empty()) text += "; " + compiled;
    // Peers' figures may come from baselines/<GPU>/peers.json rather than this run (kgate peers reuse).
    text += said("figures").empty()
                ? ". Measured in this run"
                : ". Figures " + literal(said("figures")) + ", measured " + literal(said("date")) + " on " + literal(said("host"));
    if (std::find(family.wrong_peers.begin(), family.wrong_peers.end(), peer) != family.wrong_peers.end())
      text += ". **Left out of the comparison: its output failed the check** (" + literal(first->correctness_detail) + ")";
    else if (first->correct) text += ". Output checked against kgate's definition at " + code(first->shape) + ": " + check_figures(*first);
    notes.items.push_back(text + ".");
  }
  if (const std::string wins = winning_kernels(family); !wins.empty()) notes.items.push_back(wins);
  return notes;
}

// A shape's axes as the matrix shows them: the ones that vary over the family's shapes get a column
// each (b, hq, hkv, d, l), the ones every shape shares are said once above the matrix.
struct ShapeAxes {
  std::vector<std::string> varying{};                                  // in the order the shapes name them
  std::vector<std::pair<std::string, std::string>> shared{};           // axis -> its one value
  std::map<std::string, std::map<std::string, std::string>> values{};  // shape -> axis -> value
};

// "b:16/hq:32/bf16" -> {b: 16, hq: 32, dtype: bf16}; a part without ':' is the data type.
std::vector<std::pair<std::string, std::string>> shape_fields(const std::string& shape) {
  std::vector<std::pair<std::string, std::string>> fields;
  for (const std::string& part : split(shape, '/')) {
    const std::size_t colon = part.find(':');
    if (colon == std::string::npos) fields.emplace_back("dtype", part);
    else fields.emplace_back(part.substr(0, colon), part.substr(colon + 1));
  }
  return fields;
}

ShapeAxes shape_axes(const std::vector<std::string>& shapes) {
  ShapeAxes axes;
  std::vector<std::string> order;
  for (const std::string& shape : shapes) {
    axes.values[shape];  // a shape without fields (plain Google Benchmark's) has a row too
    for (const auto& [axis, value] : shape_fields(shape)) {
      axes.values[shape][axis] = value;
      if (std::find(order.begin(), order.end(), axis) == order.end()) order.push_back(axis);
    }
  }
  for (const std::string& axis : order) {
    std::string first;
    bool same = true;
    for (const std::string& shape : shapes) {
      const auto& fields = axes.values[shape];
      const auto it = fields.find(axis);
      if (it == fields.end()) {
        same = false;
        break;
      }
      if (first.empty()) first = it->second;
      same = same && it->second == first;
    }
    if (same && shapes.size() > 1) axes.shared.emplace_back(axis, first);
    else axes.varying.push_back(axis);
  }
  return axes;
}

bool changed(const BenchmarkComparison* c) { return c && is_change(c->verdict); }

Tone verdict_tone(const BenchmarkComparison& c) {
  switch (c.verdict) {
    case Verdict::slower: return c.fails_gate() ? Tone::bad : Tone::warn;
    case Verdict::failed: return Tone::bad;
    case Verdict::faster: return Tone::good;
    case Verdict::at_threshold:
    case Verdict::noisy: return Tone::warn;
    default: return Tone::plain;
  }
}

// What a cell shows on hover: every figure of the benchmark the matrix has no room for.
std::string cell_tip(const BenchmarkView& v) {
  const BenchmarkRecord& r = *v.record;
  std::string tip = r.name + ": " + format_time(v.median_s);
  if (const BenchmarkComparison* c = v.comparison; c && c->speedup > 0)
    tip += "; baseline " + format_time(c->baseline_median_s) + ", speedup " + format_ratio(c->speedup) + " (" +
           std::string(to_string(c->verdict)) + ")";
  if (v.roof.pct > 0) tip += "; " + format_pct(v.roof.pct) + " of the " + v.roof.ceiling + " roof, " + std::string(to_string(r.roofline));
  return tip;
}

const BenchmarkView* fastest_own(const FamilyView& family, const std::string& shape) {
  const BenchmarkView* best = nullptr;
  for (const BenchmarkView* row : family.rows) {
    const std::string& role = family.roles.at(row->record->variant);
    if (row->record->shape == shape && row->ran() && row->record->correct != false && role != "peer" && role != "vendor" &&
        (!best || row->median_s < best->median_s))
      best = row;
  }
  return best;
}

Cell variant_matrix_cell(const BenchmarkView* v, const BenchmarkView* fastest, const std::set<std::string>& panels, Footnotes& footnotes) {
  if (!v) return {"—", Tone::muted, "not in this run"};
  const BenchmarkRecord& r = *v->record;
  if (!v->ran()) {
    const std::string reason = r.error.empty() ? "no reason recorded" : r.error;
    return {to_string(r.status) + " " + footnotes.mark(reason), r.status == BenchmarkStatus::failed ? Tone::bad : Tone::muted,
            r.name + ": " + reason, benchmark_anchor(r.name)};
  }
  const bool has_panel = panels.contains(r.name);
  std::string time = v == fastest ? "**" + format_time(v->median_s) + "**" : format_time(v->median_s);
  Cell cell{has_panel ? link(time, "", benchmark_anchor(r.name)) : time, Tone::plain, cell_tip(*v),
            has_panel ? "" : benchmark_anchor(r.name)};
  if (const BenchmarkComparison* c = v->comparison; c && c->verdict != Verdict::same && c->speedup > 0) {
    cell.tone = verdict_tone(*c);
    cell.chips.push_back(std::string(to_string(c->verdict)) + " " + format_ratio(c->speedup));
  }
  return cell;
}

// Shapes by variants: the axes that vary, each kgate variant's time (the fastest in bold, a change
// against the baseline as a chip), the fastest peer and kgate's standing against it, and the best
// share of a roof at that shape.
Table family_matrix(const FamilyView& family, const ShapeAxes& axes, const std::set<std::string>& panels, Footnotes& footnotes) {
  Table table;
  table.matrix = true;
  table.compact = true;
  for (const std::string& axis : axes.varying) table.columns.push_back({literal(axis), true, true, term_tip("axis")});
  std::vector<std::string> own;
  for (const std::string& variant : family.variants)
    if (family.roles.at(variant) != "peer") own.push_back(variant);
  for (const std::string& variant : own)
    table.columns.push_back({code(variant), true, true, literal(family.roles.at(variant)) + " variant: median time per call"});
  const bool peers = !family.peers.empty();
  if (peers) {
    table.columns.push_back({"Best peer", true, true, term_tip("Best peer")});
    table.columns.push_back({"kgate vs peer", true, true, term_tip("kgate vs peer")});
  }
  table.columns.push_back({"Best roof", true, false, term_tip("% of roof")});
  for (const std::string& shape : family.shapes) {
    std::vector<Cell> row;
    const auto& fields = axes.values.at(shape);
    for (const std::string& axis : axes.varying) {  // each names the whole shape on hover
      const auto it = fields.find(axis);
      row.push_back({it == fields.end() ? "-" : literal(it->second), Tone::plain, shape});
    }
    const BenchmarkView* fastest = fastest_own(family, shape);
    for (const std::string& variant : own) row.push_back(variant_matrix_cell(family.find(variant, shape), fastest, panels, footnotes));
    if (peers) {
      const auto match =
          std::find_if(family.peer_matches.begin(), family.peer_matches.end(), [&](const PeerMatch& m) { return m.shape == shape; });
      const PeerMatch* m = match == family.peer_matches.end() ? nullptr : &*match;
      if (m && m->peer) {
        Cell peer{format_time(m->peer->median_s), Tone::plain, cell_tip(*m->peer), benchmark_anchor(m->peer->record->name)};
        peer.chips.push_back(code(m->peer->record->variant));
        row.push_back(std::move(peer));
      } else {
        row.push_back({"-", Tone::muted, "no peer ran at this shape"});
      }
      if (m && m->speedup > 0)
        row.push_back({format_ratio(m->speedup) + (m->tie ? " tie" : ""),
                       m->tie           ? Tone::plain
                       : m->speedup < 1 ? Tone::bad
                                        : Tone::good,
                       m->tie ? "within " + format_pct(kPeerTieFraction * 100) + " or the interval holds 1: a tie" : ""});
      else row.push_back({"-", Tone::muted});
    }
    row.push_back({fastest ? roof_text(fastest->roof) : "-"});
    table.rows.push_back(std::move(row));
  }
  return table;
}

// "12 shapes × 4 variants · 2 slower · kgate vs best peer 1.35× (slower at 3) · best roof 98.2% read"
std::string family_summary(const FamilyView& family, const ShapeAxes& axes) {
  std::size_t own = 0;
  for (const std::string& variant : family.variants) own += family.roles.at(variant) != "peer";
  std::string line = plural(family.shapes.size(), "shape", "shapes") + " × " + plural(own, "variant", "variants");
  std::map<Verdict, std::size_t> verdicts;
  for (const BenchmarkView* row : family.rows)
    if (changed(row->comparison)) ++verdicts[row->comparison->verdict];
  for (const auto& [verdict, n] : verdicts) line += " · **" + std::to_string(n) + " " + std::string(to_string(verdict)) + "**";
  Geomean vs_peer;
  std::size_t behind = 0;
  for (const PeerMatch& m : family.peer_matches)
    if (m.speedup > 0) {
      vs_peer.add(m.speedup);
      behind += m.speedup < 1 && !m.tie;
    }
  if (vs_peer.count())
    line += " · vs best peer " + format_ratio(vs_peer.value()) + (behind ? " (slower at " + std::to_string(behind) + ")" : "");
  double best = 0;
  for (const std::string& shape : family.shapes)
    if (const BenchmarkView* v = fastest_own(family, shape)) best = std::max(best, v->roof.pct);
  if (best > 0) line += " · best roof " + format_pct(best);
  if (!axes.shared.empty()) {
    std::vector<std::string> shared;
    for (const auto& [axis, value] : axes.shared) shared.push_back(literal(axis) + " " + literal(value));
    line += " · " + join_words(shared);
  }
  return line;
}

Section family_fold(const ReportModel& model, const FamilyView& family, std::vector<Chart>& charts) {
  Section fold{literal(family.name), {}};
  fold.id = family_anchor(family.name);
  std::set<std::string> panels;
  for (const BenchmarkView* row : family.rows)
    if (changed(row->comparison)) panels.insert(row->record->name);
  fold.fold = panels.empty() ? Fold::closed : Fold::open;
  if (family.rows.empty()) {
    fold.blocks.emplace_back(Paragraph{"No benchmark of this family is in the run.", true});
  } else {
    const ShapeAxes axes = shape_axes(family.shapes);
    fold.summary = family_summary(family, axes);
    if (!axes.shared.empty()) {
      std::vector<std::string> shared;
      for (const auto& [axis, value] : axes.shared) shared.push_back(code(axis + ":" + value));
      fold.blocks.emplace_back(Paragraph{"Every shape has " + join_words(shared) + ".", true});
    }
    Footnotes footnotes;
    fold.blocks.emplace_back(family_matrix(family, axes, panels, footnotes));
    if (!footnotes.empty()) fold.blocks.emplace_back(footnotes.list());
  }
  if (!family.journey.empty())
    fold.blocks.emplace_back(
        Paragraph{"**Journey**, each step's speedup over the variant before it (geomean over the shapes both "
                  "ran): " +
                  journey_text(family) + "."});
  Section family_charts{"Roofline and share of the roof", {}};
  family_charts.fold = Fold::closed;
  for (const std::string prefix : {"roofline-", "roof-share-"})
    for (const Chart& chart : charts)
      if (chart.file == prefix + file_safe(family.name) + ".svg")
        family_charts.blocks.emplace_back(Figure{chart.file, chart_caption(chart.file), !model.comparison && prefix == "roof-share-"});
  family_charts.summary = "each benchmark on the measured roofs";
  if (!family.missing.empty()) {
    std::vector<std::string> names;
    for (const BenchmarkComparison* row : family.missing) names.push_back(code(row->name));
    fold.blocks.emplace_back(Paragraph{"In the baseline but not in this run: " + join_words(names) + ".", true});
  }
  if (!family_charts.blocks.empty()) fold.subsections.push_back(std::move(family_charts));
  for (const BenchmarkView* row : family.rows)
    if (panels.contains(row->record->name)) {
      Section panel = benchmark_panel(model, *row, charts);
      panel.id = benchmark_anchor(row->record->name);
      fold.subsections.push_back(std::move(panel));
    }
  if (!family.peers.empty()) {
    Section peers{"Peers", {}};
    peers.fold = Fold::closed;
    peers.summary = "what each peer runs, its check, and the kernels that beat kgate";
    peers.blocks.emplace_back(peer_notes(family));
    fold.subsections.push_back(std::move(peers));
  }
  if (!family.rows.empty()) {
    Section every{"Every benchmark", {}};
    every.fold = Fold::closed;
    every.summary = plural(family.rows.size(), "row", "rows") + ": times, rates, roofs and the speedup over each comparator";
    Footnotes every_footnotes;
    every.blocks.emplace_back(family_table(model, family, every_footnotes));
    if (!every_footnotes.empty()) every.blocks.emplace_back(every_footnotes.list());
    fold.subsections.push_back(std::move(every));
  }
  return fold;
}

}  // namespace

Section families_section(const ReportModel& model, std::vector<Chart>& charts) {
  Section section{"Kernel families", {}};
  section.blocks.emplace_back(
      Paragraph{"One fold per family, open where a benchmark changed. Its matrix has a row per shape (the axes that vary as columns, "
                "the ones every shape shares above it) and a column per kgate variant: the median time per call, the fastest in bold, "
                "a change against the baseline as a tag; hover a cell for its figures. **Best peer** is the fastest other library at "
                "that shape and **kgate vs peer** its time over kgate's fastest (above 1: kgate is faster). Each changed benchmark has "
                "a panel below its family's matrix."});
  for (const FamilyView& family : model.families) section.subsections.push_back(family_fold(model, family, charts));
  return section;
}

}  // namespace kgate::report
