// The per-benchmark tables: correctness, and the kernel families' times, speedups and roofs.
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>

#include "kgate/base/escape.hpp"
#include "report_format.hpp"
#include "report_sections.hpp"

namespace kgate::report {
namespace {

constexpr const char* kNoReason = "no reason recorded";

std::string figures(const BenchmarkRecord& r) {
  const std::vector<TensorCheck> checks = parse_correctness_detail(r.correctness_detail);
  std::string out;
  for (const TensorCheck& c : checks) {
    out += (out.empty() ? "" : "; ") + literal(c.tensor) + ": rel_l2 " + sig3(c.rel_l2) + " (limit " + sig3(c.limit) + "), max_abs " +
           sig3(c.max_abs);
    if (!c.violations.empty()) out += ", " + literal(c.violations) + " outside the bound";
  }
  if (!checks.empty()) return out;
  for (const char ch : r.correctness_detail) out += ch == '\n' ? std::string("; ") : std::string(1, ch);
  return out.empty() ? "-" : literal(out);
}

// Plain Google Benchmark JSON has no variant and shape: the rest of the name stands for the shape.
Cell shape_cell(const BenchmarkRecord& r) {
  if (!r.shape.empty()) return {code(r.shape)};
  return {r.name.size() > r.family.size() + 1 ? code(r.name.substr(r.family.size() + 1)) : "-"};
}

Cell variant_cell(const BenchmarkRecord& r) { return {r.variant.empty() ? "-" : code(r.variant)}; }

Cell result_cell(const BenchmarkRecord& r) {
  if (r.status == BenchmarkStatus::failed) return {"did not run: " + literal(r.error), Tone::bad};
  if (!r.correct) return {"not checked", Tone::muted};
  return *r.correct ? Cell{"pass", Tone::good} : Cell{"**FAIL**", Tone::bad};
}

Cell time_cell(const BenchmarkView& v) {
  if (v.ran()) return {format_time(v.median_s)};
  const BenchmarkRecord& r = *v.record;
  return {to_string(r.status) + (r.error.empty() ? "" : ": " + literal(r.error)),
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

Table family_table(const ReportModel& model, const FamilyView& family) {
  const bool compared = model.comparison.has_value();
  Table table;
  table.compact = true;
  table.columns = {{"Shape"}, {"Variant"}};
  if (compared)
    table.columns.insert(table.columns.end(), {{"Baseline", true, false}, {"New", true}, {"Speedup", true}, {"Verdict"}});
  else
    table.columns.insert(table.columns.end(), {{"Median", true}, {"rsd", true, false}});
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
      row.push_back(v->ran() ? Cell{format_time(c ? c->new_median_s : v->median_s)} : time_cell(*v));
      row.push_back({c ? format_ratio(c->speedup) : "-"});
      row.push_back(c ? verdict_cell(*c) : Cell{"-"});
    } else {
      row.push_back(time_cell(*v));
      const TimingRecord* t = v->ran() ? r.headline() : nullptr;
      row.push_back({t ? format_pct(t->summary.rel_stddev() * 100) : "-"});
    }
    row.push_back({achieved_rate(*v)});
    row.push_back({v->roof.pct > 0 ? format_pct(v->roof.pct) + " " + v->roof.ceiling : "-"});
    row.push_back({v->ran() && v->roof.pct > 0 ? std::string(to_string(r.roofline)) : "-"});
    for (const Versus& vs : v->versus) {
      if (vs.self)
        row.push_back({"—", Tone::muted});
      else
        row.push_back({format_ratio(vs.speedup), vs.speedup >= 1 ? Tone::plain : Tone::warn});
    }
    if (!family.peers.empty())
      row.push_back(v->vs_best_peer > 0 ? Cell{format_ratio(v->vs_best_peer), v->vs_best_peer >= 1 ? Tone::plain : Tone::warn}
                                        : Cell{"-"});
    table.rows.push_back(std::move(row));
  }
  return table;
}

Cell peer_speedup_cell(double speedup) {
  if (speedup <= 0) return {"-", Tone::muted};
  if (speedup < 1) return {"**" + format_ratio(speedup) + " (kgate slower)**", Tone::bad};
  return {format_ratio(speedup), Tone::good};
}

// Per shape: the fastest peer against kgate's fastest variant, and kgate's speedup over it.
Table peer_table(const FamilyView& family) {
  Table table;
  table.compact = true;
  table.columns = {{"Shape"}, {"Fastest peer"}, {"Peer median", true}, {"kgate's fastest"}, {"kgate median", true},
                   {"kgate speedup", true}};
  for (const PeerMatch& m : family.peer_matches) {
    std::vector<Cell> row = {{code(m.shape)}};
    for (const auto& [side, absent] : {std::pair{m.peer, "no peer ran"}, std::pair{m.kgate, "no kgate variant ran"}}) {
      row.push_back(side ? Cell{code(side->record->variant)} : Cell{absent, Tone::muted});
      row.push_back({side ? format_time(side->median_s) : "-"});
    }
    row.push_back(peer_speedup_cell(m.speedup));
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
  return "compiled in " + (low == high ? sig3(high) : sig3(low) + "–" + sig3(high)) +
         " s per shape (before timing, not in its time)";
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
    std::sort(launches.begin(), launches.end(), [](const KernelRecord* a, const KernelRecord* b) { return block_count(*a) < block_count(*b); });
    std::vector<std::string> out;
    for (const KernelRecord* k : launches)
      if (const std::string d = format_dims(dims(*k)); std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    return out;
  };
  std::vector<std::string> lines;
  for (const Group& g : groups) {
    const std::vector<std::string> grids = distinct(g.launches, [](const KernelRecord& k) -> const int(&)[3] { return k.grid; });
    const std::vector<std::string> blocks = distinct(g.launches, [](const KernelRecord& k) -> const int(&)[3] { return k.block; });
    const std::string grid_text = grids.size() == 1 ? "grid " + grids.front()
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
    if (std::find(family.wrong_peers.begin(), family.wrong_peers.end(), peer) != family.wrong_peers.end())
      text += ". **Left out of the comparison: its output failed the check** (" + literal(first->correctness_detail) + ")";
    else if (first->correct)
      text += ". Output checked against kgate's definition at " + code(first->shape) + ": " + figures(*first);
    notes.items.push_back(text + ".");
  }
  if (const std::string wins = winning_kernels(family); !wins.empty()) notes.items.push_back(wins);
  return notes;
}

}  // namespace

// The correctness suite as ctest ran it: counts that add up to its cases, the failures by name,
// the skips by reason, and every case in a folded table.
void suite_blocks(const ReportInputs& inputs, Section& section) {
  std::size_t passed = 0, failed = 0;
  std::map<std::string, std::size_t> skipped;  // reason -> cases
  std::vector<std::string> failures;
  Table table;
  table.columns = {{"Variant"}, {"Shape"}, {"Result"}, {"Why skipped"}};
  for (const SuiteCase& c : inputs.correctness) {
    const char* result = c.result == SuiteCase::Result::passed ? "pass" : c.result == SuiteCase::Result::failed ? "**FAIL**" : "skipped";
    table.rows.push_back({{code(c.variant)},
                          {c.shape.empty() ? "-" : code(c.shape)},
                          {result, c.result == SuiteCase::Result::failed ? Tone::bad : c.result == SuiteCase::Result::skipped ? Tone::muted : Tone::good},
                          {c.reason.empty() ? "-" : literal(c.reason)}});
    if (c.result == SuiteCase::Result::passed) ++passed;
    if (c.result == SuiteCase::Result::failed) {
      ++failed;
      failures.push_back(code(c.variant + (c.shape.empty() ? "" : " " + c.shape)));
    }
    if (c.result == SuiteCase::Result::skipped) ++skipped[c.reason];
  }
  std::size_t skipped_count = 0;
  for (const auto& [reason, n] : skipped) skipped_count += n;
  section.blocks.push_back(Subheading{"Correctness suite"});
  section.blocks.push_back(Paragraph{
      "The GPU correctness suite (" + code(inputs.correctness_source) + ", ctest's JUnit): " +
          std::to_string(inputs.correctness.size()) + " cases (variant × test shape), " + std::to_string(passed) + " passed, " +
          (failed ? "**" + std::to_string(failed) + " failed**" : std::string("0 failed")) + ", " + std::to_string(skipped_count) +
          " skipped." + (failures.empty() ? "" : " Failed: " + join_words(failures) + "."),
      true});
  if (!skipped.empty()) {
    Bullets reasons{{}, true};
    for (const auto& [reason, n] : skipped) reasons.items.push_back(std::to_string(n) + " skipped: " + literal(reason));
    section.blocks.push_back(std::move(reasons));
  }
  table.folded = std::to_string(inputs.correctness.size()) + " cases (show each)";
  section.blocks.push_back(std::move(table));
  section.blocks.push_back(Subheading{"Checks at bench time"});
}

Section correctness_section(const ReportModel& model) {
  Section section{"Correctness", {}};
  if (!model.inputs->correctness.empty()) suite_blocks(*model.inputs, section);
  std::size_t passed = 0, wrong = 0;
  std::map<std::string, std::size_t> unchecked;  // reason -> benchmarks
  for (const BenchmarkView& v : model.views) {
    const BenchmarkRecord& r = *v.record;
    if (!r.correct)
      ++unchecked[r.correctness_detail.empty() ? kNoReason : r.correctness_detail];
    else
      (*r.correct ? passed : wrong) += 1;
  }
  std::size_t not_checked = 0;
  for (const auto& [reason, n] : unchecked) not_checked += n;
  section.blocks.push_back(Paragraph{
      "`kgate_bench` checks each benchmark's output against the family's fp64 CPU reference before timing it: of " +
      std::to_string(model.views.size()) + " benchmarks, " + std::to_string(passed) + " passed, " + std::to_string(wrong) +
      " gave a wrong result, " + std::to_string(not_checked) + " were not checked."});
  if (!unchecked.empty()) {
    Bullets reasons;
    for (const auto& [reason, n] : unchecked)
      reasons.items.push_back(std::to_string(n) + (reason.starts_with("not checked") ? " " : " not checked: ") + literal(reason));
    section.blocks.push_back(reasons);
  }
  if (passed + wrong == 0 && unchecked.contains(kNoReason) && unchecked.size() == 1) return section;  // nothing to tabulate
  for (const FamilyView& family : model.families) {
    if (family.rows.empty()) continue;
    section.blocks.push_back(Subheading{literal(family.name)});
    Table table;
    table.columns = {{"Shape"}, {"Variant"}, {"Result"}, {"Error figures (per output tensor)"}};
    std::size_t family_passed = 0, family_unchecked = 0;
    for (const BenchmarkView* v : family.rows) {
      const BenchmarkRecord& r = *v->record;
      table.rows.push_back({shape_cell(r), variant_cell(r), result_cell(r), {r.correct ? figures(r) : "-"}});
      family_passed += r.correct == true;
      family_unchecked += !r.correct && r.status != BenchmarkStatus::failed;
    }
    // A family with nothing wrong is shown folded: its figures are there for whoever wants them.
    if (family_passed + family_unchecked == family.rows.size())
      table.folded =
          std::to_string(family_passed) + " passed, " + std::to_string(family_unchecked) + " not checked (show the figures)";
    section.blocks.push_back(std::move(table));
  }
  return section;
}

std::string family_anchor(const std::string& family) { return "family-" + slug(family); }

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

// Blocks are built in place (emplace_back): moving a temporary Block variant in made g++ 13 warn
// that the Table alternative's vectors may be used uninitialized.
Section families_section(const ReportModel& model) {
  Section section{"Kernel families", {}};
  std::string intro =
      "One table per family, one row per shape and variant. **Median** is the headline mode's median time per launch; "
      "**% of roof** is the achieved rate against the measured ceiling it comes closest to (copy or read bandwidth, "
      "or the GEMM rate); **vs X** is X's median time divided by this row's at the same shape (above 1: this variant is faster).";
  if (model.comparison)
    intro =
        "One table per family, one row per shape and variant. **Speedup** = baseline median / new median, judged by `kgate "
        "compare`'s "
        "rules (docs/compare.md); **% of roof** is the achieved rate against the measured ceiling it comes closest to; **vs X** "
        "is X's "
        "median time divided by this row's at the same shape (above 1: this variant is faster).";
  intro += " Where a family has peers (other libraries measured beside kgate, docs/peers.md), **vs best peer** is the "
           "fastest peer's median divided by this row's, and a second table gives per shape the fastest peer against "
           "kgate's fastest variant (its reference or a candidate).";
  section.blocks.emplace_back(Paragraph{intro});
  for (const FamilyView& family : model.families) {
    section.blocks.emplace_back(Subheading{literal(family.name), true, family_anchor(family.name)});
    if (!family.rows.empty()) section.blocks.emplace_back(family_table(model, family));
    if (!family.journey.empty())
      section.blocks.emplace_back(Paragraph{"**Journey**, each step's speedup over the variant before it (geomean over the "
                                            "shapes both ran): " +
                                            journey_text(family) + "."});
    if (!family.peer_matches.empty()) {
      section.blocks.emplace_back(Paragraph{"kgate against the fastest peer at each shape (speedup: peer median / kgate median):"});
      section.blocks.emplace_back(peer_table(family));
      section.blocks.emplace_back(peer_notes(family));
    }
    if (!family.missing.empty()) {
      std::vector<std::string> names;
      for (const BenchmarkComparison* row : family.missing) names.push_back(code(row->name));
      section.blocks.emplace_back(Paragraph{"In the baseline but not in this run: " + join_words(names) + ".", true});
    }
  }
  return section;
}

}  // namespace kgate::report
