// The observation rules (docs/report.md, "Observations"): each turns one pattern in the model into
// a quantified sentence, and says nothing when the data do not show the pattern.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "kgate/report/format.hpp"
#include "report_model.hpp"

namespace kgate::report {
namespace {

constexpr std::size_t kMaxListed = 4;       // shapes named in one sentence before "and N more"
constexpr std::size_t kMaxRegressions = 5;  // regressions told one by one

using ShapeParts = std::vector<std::pair<std::string, std::string>>;

// "m:4096/n:4096/bf16" -> (m, 4096), (n, 4096), (bf16, "").
ShapeParts shape_parts(const std::string& shape) {
  ShapeParts parts;
  std::size_t start = 0;
  while (start <= shape.size()) {
    const std::size_t end = std::min(shape.find('/', start), shape.size());
    const std::string part = shape.substr(start, end - start);
    const std::size_t colon = part.find(':');
    parts.emplace_back(part.substr(0, colon), colon == std::string::npos ? "" : part.substr(colon + 1));
    start = end + 1;
  }
  return parts;
}

std::optional<double> numeric(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') return std::nullopt;
  return value;
}

// The subset of a variant's shapes as a condition on one dimension, per value of the others:
// "m ≤ 256", "m ≥ 4096 with n:4096/bf16; m ≥ 256 with n:8192/bf16"; nullopt when no single
// dimension's threshold describes it.
std::optional<std::string> shape_condition(const std::vector<const BenchmarkView*>& all, const std::vector<const BenchmarkView*>& subset,
                                           std::size_t key) {
  struct Member {
    std::string value;
    double number;
    bool chosen;
  };
  std::vector<std::pair<std::string, std::vector<Member>>> groups;  // the other dimensions -> members
  std::string name;
  for (const BenchmarkView* v : all) {
    const ShapeParts parts = shape_parts(v->record->shape);
    if (key >= parts.size()) return std::nullopt;
    const auto number = numeric(parts[key].second);
    if (!number) return std::nullopt;
    name = parts[key].first;
    std::string rest;
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (i != key) rest += (rest.empty() ? "" : "/") + parts[i].first + (parts[i].second.empty() ? "" : ":" + parts[i].second);
    const bool chosen = std::find(subset.begin(), subset.end(), v) != subset.end();
    auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == rest; });
    if (group == groups.end()) group = groups.insert(groups.end(), {rest, {}});
    group->second.push_back({parts[key].second, *number, chosen});
  }
  std::vector<std::pair<std::string, std::string>> clauses;  // condition, the other dimensions
  for (const auto& [rest, members] : groups) {
    std::vector<const Member*> in;
    for (const Member& m : members)
      if (m.chosen) in.push_back(&m);
    if (in.empty()) continue;
    const auto [low, high] = std::minmax_element(in.begin(), in.end(), [](auto* a, auto* b) { return a->number < b->number; });
    const auto holds = [&](auto condition) {
      return std::all_of(members.begin(), members.end(), [&](const Member& m) { return condition(m) == m.chosen; });
    };
    std::string condition;
    if (in.size() == members.size()) condition = "any " + name;
    else if (in.size() == 1) condition = name + " = " + in.front()->value;
    else if (holds([&](const Member& m) { return m.number <= (*high)->number; })) condition = name + " ≤ " + (*high)->value;
    else if (holds([&](const Member& m) { return m.number >= (*low)->number; })) condition = name + " ≥ " + (*low)->value;
    else return std::nullopt;
    clauses.emplace_back(condition, rest);
  }
  const bool uniform = clauses.size() == groups.size() &&
                       std::all_of(clauses.begin(), clauses.end(), [&](const auto& c) { return c.first == clauses.front().first; });
  if (uniform) return clauses.front().first;
  std::string text;
  for (const auto& [condition, rest] : clauses) text += (text.empty() ? "" : "; ") + condition + " with " + rest;
  return text;
}

// A subset of a variant's shapes, as briefly as the shape ids allow.
std::string describe_shapes(const std::vector<const BenchmarkView*>& all, const std::vector<const BenchmarkView*>& subset) {
  std::optional<std::string> best;
  for (std::size_t key = 0; all.size() > 1 && key < shape_parts(all.front()->record->shape).size(); ++key)
    if (const auto condition = shape_condition(all, subset, key); condition && (!best || condition->size() < best->size()))
      best = condition;
  if (best) return literal(*best);  // shape ids from the input, joined by words without markup
  std::vector<std::string> names;
  for (std::size_t i = 0; i < subset.size() && i < kMaxListed; ++i) names.push_back(code(subset[i]->record->shape));
  if (subset.size() > kMaxListed) names.push_back(std::to_string(subset.size() - kMaxListed) + " more");
  return join_words(names);
}

// "16.6–30.7 µs": the unit once, when both ends share it.
std::string range(double low, double high, std::string (*format)(double)) {
  if (low == high) return format(low);
  std::string a = format(low);
  const std::string b = format(high);
  std::size_t unit = a.size();
  while (unit > 0 && !std::isdigit(static_cast<unsigned char>(a[unit - 1]))) --unit;
  if (unit < a.size() && b.ends_with(a.substr(unit))) a.erase(unit);
  return a + "–" + b;
}

std::string variant_name(const FamilyView& family, const std::string& variant) { return code(family.name + "/" + variant); }

std::vector<const BenchmarkView*> rows_of(const FamilyView& family, const std::string& variant) {
  std::vector<const BenchmarkView*> rows;
  for (const BenchmarkView* row : family.rows)
    if (row->record->variant == variant) rows.push_back(row);
  return rows;
}

// Regressions against the baseline, with compare's explanation of each.
void regressions(const ReportModel& model, std::vector<std::string>& out) {
  if (!model.comparison) return;
  std::vector<const BenchmarkComparison*> flagged;
  for (const BenchmarkComparison& row : model.comparison->benchmarks)
    if (row.verdict == Verdict::slower || row.verdict == Verdict::failed) flagged.push_back(&row);
  std::stable_sort(flagged.begin(), flagged.end(),
                   [](const auto* a, const auto* b) { return a->verdict == Verdict::failed && b->verdict != Verdict::failed; });
  for (std::size_t i = 0; i < flagged.size() && i < kMaxRegressions; ++i) {
    const BenchmarkComparison& row = *flagged[i];
    std::string s = code(row.name) + (row.verdict == Verdict::failed
                                          ? " failed"
                                          : " is slower than the baseline: " + format_time(row.baseline_median_s) + " → " +
                                                format_time(row.new_median_s) + " (" + format_ratio(row.speedup) + ")");
    for (std::size_t n = 0; n < row.notes.size(); ++n) s += (n ? "; " : ": ") + literal(row.notes[n]);
    out.push_back(s + ".");
  }
  if (flagged.size() > kMaxRegressions)
    out.push_back(std::to_string(flagged.size() - kMaxRegressions) + " more regressions are in the kernel family tables.");
}

// How close each variant comes to its roof where it is not latency-bound.
void roof_share(const FamilyView& family, std::vector<std::string>& out) {
  for (const std::string& variant : family.variants) {
    std::vector<const BenchmarkView*> bound;
    for (const BenchmarkView* row : rows_of(family, variant))
      if (row->ran() && row->roof.pct > 0 && row->record->roofline != RooflineClass::latency_bound) bound.push_back(row);
    if (bound.empty()) continue;
    const BenchmarkView* best = *std::max_element(bound.begin(), bound.end(), [](auto* a, auto* b) { return a->roof.pct < b->roof.pct; });
    std::erase_if(bound, [&](const BenchmarkView* v) { return v->roof.ceiling != best->roof.ceiling; });
    const double low =
        (*std::min_element(bound.begin(), bound.end(), [](auto* a, auto* b) { return a->roof.pct < b->roof.pct; }))->roof.pct;
    out.push_back(variant_name(family, variant) + " reaches " + range(low, best->roof.pct, format_pct) + " of the measured " +
                  best->roof.ceiling + " ceiling at its " + plural(bound.size(), "shape", "shapes") + " that are not latency-bound (" +
                  describe_shapes(rows_of(family, variant), bound) + "); best " + achieved_rate(*best) + " at " +
                  code(best->record->shape) + ".");
  }
}

// Shapes too small for the GPU: the roofline's time bound is below the cost of a launch.
void latency_bound(const ReportModel& model, const FamilyView& family, std::vector<std::string>& out) {
  const double floor_s = model.context().calibration.launch_floor_s;
  for (const std::string& variant : family.variants) {
    const std::vector<const BenchmarkView*> all = rows_of(family, variant);
    std::vector<const BenchmarkView*> latency;
    for (const BenchmarkView* row : all)
      if (row->ran() && row->roof.pct > 0 && row->record->roofline == RooflineClass::latency_bound) latency.push_back(row);
    if (latency.empty()) continue;
    double low = latency.front()->median_s, high = low;
    for (const BenchmarkView* row : latency) {
      low = std::min(low, row->median_s);
      high = std::max(high, row->median_s);
    }
    std::string s = variant_name(family, variant) + " is latency-bound at " + std::to_string(latency.size()) + " of " +
                    std::to_string(all.size()) + " shapes (" + describe_shapes(all, latency) + "): " + range(low, high, format_time);
    if (floor_s > 0) s += ", " + range(low / floor_s, high / floor_s, format_ratio) + " the launch floor (" + format_time(floor_s) + ")";
    out.push_back(s + ".");
  }
}

struct Against {
  double geomean = 0, best = 0, worst = 0;
  const BenchmarkView* best_at = nullptr;
  std::vector<std::pair<const BenchmarkView*, double>> each;
};

Against against(const FamilyView& family, const std::string& variant, std::size_t comparator) {
  Against a;
  Geomean geomean;
  for (const BenchmarkView* row : rows_of(family, variant)) {
    const double s = comparator < row->versus.size() ? row->versus[comparator].speedup : 0;
    if (s <= 0) continue;
    a.each.emplace_back(row, s);
    geomean.add(s);
    if (!a.best_at || s > a.best) {
      a.best = s;
      a.best_at = row;
    }
    a.worst = a.each.size() == 1 ? s : std::min(a.worst, s);
  }
  a.geomean = geomean.value();
  return a;
}

// Every variant against the family's reference and, for candidates, against vendor and peer
// libraries; slower-than-reference shapes beyond the family's threshold are named, in `findings`:
// an optimized variant losing to the naive one is what a reader must see first.
void versus(const ReportModel& model, const FamilyView& family, std::vector<std::string>& out, std::vector<std::string>& findings) {
  for (std::size_t c = 0; c < family.comparators.size(); ++c) {
    const std::string& comparator = family.comparators[c];
    const bool is_reference = family.roles.at(comparator) == "reference";
    for (const std::string& variant : family.variants) {
      const std::string& role = family.roles.at(variant);
      if (variant == comparator || (!is_reference && role != "candidate") || (is_reference && role == "reference")) continue;
      const Against a = against(family, variant, c);
      if (a.each.empty()) continue;
      const BenchmarkView* ref = family.find(comparator, a.best_at->record->shape);
      if (is_reference && a.best > 1)
        out.push_back(variant_name(family, variant) + " is up to " + format_ratio(a.best) + " as fast as " + code(comparator) + " (" +
                      code(a.best_at->record->shape) + ": " + format_time(ref->median_s) + " → " + format_time(a.best_at->median_s) +
                      "), " + format_ratio(a.geomean) + " geomean over " + std::to_string(a.each.size()) + " shapes.");
      else if (!is_reference)
        out.push_back(variant_name(family, variant) + " against " + code(comparator) + " (" + literal(family.roles.at(comparator)) +
                      "): " + format_ratio(a.geomean) + " geomean over " + std::to_string(a.each.size()) + " shapes (" +
                      range(a.worst, a.best, format_ratio) + ").");
      if (!is_reference) continue;
      std::vector<std::string> slower;
      for (const auto& [row, s] : a.each)
        if (s < 1 / (1 + model.inputs->compare.thresholds.for_benchmark(row->record->name, family.name)))
          slower.push_back(code(row->record->shape) + " (" + format_ratio(s) + ")");
      if (!slower.empty())
        findings.push_back(variant_name(family, variant) + " is slower than " + code(comparator) + " beyond the threshold at " +
                           std::to_string(slower.size()) + " of " + std::to_string(a.each.size()) + " shapes: " + join_words(slower) + ".");
    }
  }
}

// Grids smaller than the GPU: some SMs get no block at all.
void few_blocks(const ReportModel& model, const FamilyView& family, std::vector<std::string>& out) {
  const std::size_t sms = model.sm_count();
  if (sms == 0) return;
  for (const std::string& variant : family.variants) {
    const std::vector<const BenchmarkView*> all = rows_of(family, variant);
    std::vector<const BenchmarkView*> small;
    std::size_t low = 0, high = 0;
    for (const BenchmarkView* row : all) {
      const KernelRecord* k = dominant_kernel(*row->record);
      if (!k || block_count(*k) >= sms) continue;
      const std::size_t blocks = block_count(*k);
      low = small.empty() ? blocks : std::min(low, blocks);
      high = std::max(high, blocks);
      small.push_back(row);
    }
    if (small.empty()) continue;
    const std::string blocks = low == high ? std::to_string(low) : std::to_string(low) + "–" + std::to_string(high);
    out.push_back(variant_name(family, variant) + " launches fewer blocks than the GPU's " + std::to_string(sms) + " SMs at " +
                  std::to_string(small.size()) + " of " + std::to_string(all.size()) + " shapes (" + describe_shapes(all, small) +
                  "): " + blocks + (high == 1 ? " block" : " blocks") + ", so at most " + std::to_string(high) + " of " +
                  std::to_string(sms) + " SMs have work.");
  }
}

// Timings that stopped before reaching their noise target: their medians are less certain.
void noise(const ReportModel& model, std::vector<std::string>& out) {
  std::size_t timed = 0;
  std::map<std::string, std::size_t> reasons;
  std::map<double, std::size_t> targets;
  const BenchmarkView* noisiest = nullptr;
  for (const BenchmarkView& v : model.views) {
    const TimingRecord* t = v.ran() ? v.record->headline() : nullptr;
    if (!t) continue;
    ++timed;
    if (t->target_met || t->target_rel_stddev <= 0) continue;
    ++reasons[t->stop_reason.empty() ? "unknown" : t->stop_reason];
    ++targets[t->target_rel_stddev];
    if (!noisiest || t->summary.rel_stddev() > noisiest->record->headline()->summary.rel_stddev()) noisiest = &v;
  }
  if (!noisiest) return;
  std::size_t missed = 0;
  std::vector<std::string> why;
  for (const auto& [reason, n] : reasons) {
    missed += n;
    why.push_back(std::to_string(n) + " " + literal(reason));
  }
  const double target_low = targets.begin()->first * 100, target_high = targets.rbegin()->first * 100;
  out.push_back(std::to_string(missed) + " of " + std::to_string(timed) +
                " benchmarks stopped before their relative standard deviation reached its target (" +
                range(target_low, target_high, format_pct) + "): " + join_words(why) + "; the largest is " +
                format_pct(noisiest->record->headline()->summary.rel_stddev() * 100) + " (" + code(noisiest->record->name) + ").");
}

void throttling(const ReportModel& model, std::vector<std::string>& out) {
  std::size_t benchmarks = 0;
  long long samples = 0;
  for (const BenchmarkView& v : model.views)
    for (const auto* t : {&v.record->cold, &v.record->hot})
      if (*t && (*t)->throttled_samples > 0) {
        ++benchmarks;
        samples += (*t)->throttled_samples;
      }
  if (benchmarks)
    out.push_back(std::to_string(samples) + " samples of " + std::to_string(benchmarks) +
                  " timings were dropped because the SM clock was throttled.");
}

void power_rest(const ReportModel& model, std::vector<std::string>& out) {
  std::size_t timings = 0;
  long long dropped = 0;
  for (const BenchmarkView& v : model.views)
    for (const auto* t : {&v.record->cold, &v.record->hot})
      if (*t && (*t)->rested) {
        ++timings;
        dropped += (*t)->power_limited_samples;
      }
  if (timings)
    out.push_back(std::to_string(timings) +
                  " timings rested between batches once the board lowered its SM clock to stay under its power limit, "
                  "so that they are at full clock run after run; " +
                  std::to_string(dropped) + " samples taken before the rests began were dropped.");
}

}  // namespace

std::vector<std::string> observations(const ReportModel& model) {
  // Findings first (changes against the baseline, variants slower than their reference), then
  // each family's standing.
  std::vector<std::string> out, standing;
  regressions(model, out);
  for (const FamilyView& family : model.families) {
    roof_share(family, standing);
    latency_bound(model, family, standing);
    versus(model, family, standing, out);
    few_blocks(model, family, standing);
  }
  out.insert(out.end(), standing.begin(), standing.end());
  noise(model, out);
  throttling(model, out);
  power_rest(model, out);
  return out;
}

}  // namespace kgate::report
