#include "report_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "kgate/base/chain.hpp"
#include "kgate/base/statistics.hpp"
#include "kgate/report/format.hpp"

namespace kgate::report {
namespace {

int role_rank(const std::string& role) {
  if (role == "reference") return 0;
  if (role == "candidate") return 1;
  if (role == "vendor") return 2;
  if (role == "peer") return 3;
  return 4;
}

// Peers are compared once per shape, fastest against fastest (add_peer_matches), rather than in a
// column each: a family may have several (one per attention backend).
bool is_comparator(const std::string& role) { return role == "reference" || role == "vendor"; }

bool is_kgate_own(const std::string& role) { return role == "reference" || role == "candidate"; }

RoofShare roof_share(const BenchmarkRecord& r, bool has_kgate_block) {
  if (!has_kgate_block || (r.pct_of_memory_ceiling <= 0 && r.pct_of_compute_ceiling <= 0)) return {};
  if (r.pct_of_compute_ceiling > r.pct_of_memory_ceiling) return {r.pct_of_compute_ceiling, "compute"};
  return {r.pct_of_memory_ceiling, r.memory_ceiling};
}

// A peer and kgate's fastest variant at one shape are tied when their medians are within
// kPeerTieFraction, or when the samples cannot tell them apart (the interval of the ratio holds 1).
bool is_tie(const BenchmarkRecord& peer, const BenchmarkRecord& own, double speedup) {
  if (std::fabs(speedup - 1) < kPeerTieFraction) return true;
  const TimingRecord* a = peer.headline();
  const TimingRecord* b = own.headline();
  if (!a || !b || a->samples_s.size() < 2 || b->samples_s.size() < 2) return false;
  const RatioInterval ci = median_ratio_interval(a->samples_s, b->samples_s, 0.99);
  return ci.low <= 1 && ci.high >= 1;
}

double headline_median(const BenchmarkRecord& r) { return r.status == BenchmarkStatus::ok ? r.headline_median_s() : 0; }

void add_views(ReportModel& model) {
  const RunResults& run = model.inputs->current.run;
  std::map<std::string, const BenchmarkComparison*> compared;
  if (model.comparison)
    for (const BenchmarkComparison& row : model.comparison->benchmarks) compared[row.name] = &row;
  std::map<std::string, const BenchmarkRecord*> in_baseline;
  if (model.inputs->baseline)
    for (const BenchmarkRecord& r : model.inputs->baseline->run.benchmarks) in_baseline[r.name] = &r;
  for (const BenchmarkRecord& r : run.benchmarks) {
    BenchmarkView view;
    view.record = &r;
    if (const auto it = compared.find(r.name); it != compared.end()) view.comparison = it->second;
    if (const auto it = in_baseline.find(r.name); it != in_baseline.end()) view.baseline = it->second;
    view.median_s = headline_median(r);
    view.roof = roof_share(r, run.has_kgate_block);
    model.views.push_back(std::move(view));
  }
}

FamilyView& family_of(std::vector<FamilyView>& families, const std::string& name) {
  for (FamilyView& f : families)
    if (f.name == name) return f;
  families.push_back({});
  families.back().name = name;
  return families.back();
}

// How many `follows` lead from `variant` back to a first step among the family's variants (a chain
// that leaves them ends there; one in a circle is cut, links_to_start says where).
std::size_t journey_step(const FamilyView& family, const std::string& variant) {
  const auto before = [&](const std::string& at) -> std::optional<std::string> {
    const auto it = family.follows.find(at);
    return it == family.follows.end() ? std::nullopt : std::optional(it->second);
  };
  return links_to_start(variant, before, family.follows.size());
}

void add_families(ReportModel& model) {
  for (const BenchmarkView& view : model.views) {
    const BenchmarkRecord& r = *view.record;
    FamilyView& family = family_of(model.families, r.family);
    if (!family.roles.contains(r.variant)) {
      family.roles[r.variant] = r.role;
      family.variants.push_back(r.variant);
    }
    if (!r.follows.empty()) family.follows[r.variant] = r.follows;
    if (std::find(family.shapes.begin(), family.shapes.end(), r.shape) == family.shapes.end()) family.shapes.push_back(r.shape);
  }
  for (FamilyView& family : model.families) {
    std::stable_sort(family.variants.begin(), family.variants.end(), [&](const std::string& a, const std::string& b) {
      return std::pair(role_rank(family.roles[a]), journey_step(family, a)) <
             std::pair(role_rank(family.roles[b]), journey_step(family, b));
    });
    for (const std::string& variant : family.variants)
      if (is_comparator(family.roles[variant])) family.comparators.push_back(variant);
  }
  for (FamilyView& family : model.families)
    for (const std::string& shape : family.shapes)
      for (const std::string& variant : family.variants)
        for (const BenchmarkView& view : model.views)
          if (view.record->family == family.name && view.record->variant == variant && view.record->shape == shape)
            family.rows.push_back(&view);
  if (model.comparison)
    for (const BenchmarkComparison& row : model.comparison->benchmarks)
      if (row.verdict == Verdict::missing &&
          std::none_of(model.views.begin(), model.views.end(), [&](const BenchmarkView& v) { return v.record->name == row.name; }))
        family_of(model.families, row.family).missing.push_back(&row);
}

// Each step of a family's journey measured: the variant it follows against it, shape by shape.
void add_journeys(ReportModel& model) {
  for (FamilyView& family : model.families)
    for (const std::string& variant : family.variants) {
      const auto it = family.follows.find(variant);
      if (it == family.follows.end() || !family.roles.contains(it->second)) continue;
      Geomean speedup;
      for (const std::string& shape : family.shapes) {
        const BenchmarkView* before = family.find(it->second, shape);
        const BenchmarkView* after = family.find(variant, shape);
        if (before && after && before->ran() && after->ran()) speedup.add(before->median_s / after->median_s);
      }
      family.journey.push_back({.from = it->second, .to = variant, .speedup = speedup.value(), .shapes = speedup.count()});
    }
}

const FamilyView& family_named(const std::vector<FamilyView>& families, const std::string& name) {
  return *std::find_if(families.begin(), families.end(), [&](const FamilyView& f) { return f.name == name; });
}

void add_versus(ReportModel& model) {
  for (BenchmarkView& view : model.views) {
    const FamilyView& family = family_named(model.families, view.record->family);
    for (const std::string& comparator : family.comparators) {
      Versus v;
      v.variant = comparator;
      v.role = family.roles.at(comparator);
      v.self = comparator == view.record->variant;
      const BenchmarkView* other = family.find(comparator, view.record->shape);
      if (!v.self && other && other->ran() && view.ran()) v.speedup = other->median_s / view.median_s;
      view.versus.push_back(std::move(v));
    }
  }
}

void add_peer_matches(ReportModel& model) {
  for (FamilyView& family : model.families) {
    for (const std::string& variant : family.variants) {
      if (family.roles.at(variant) != "peer") continue;
      family.peers.push_back(variant);
      if (std::any_of(family.rows.begin(), family.rows.end(),
                      [&](const BenchmarkView* row) { return row->record->variant == variant && row->record->correct == false; }))
        family.wrong_peers.push_back(variant);
    }
    if (family.peers.empty()) continue;
    const auto wrong = [&](const std::string& v) {
      return std::find(family.wrong_peers.begin(), family.wrong_peers.end(), v) != family.wrong_peers.end();
    };
    for (const std::string& shape : family.shapes) {
      PeerMatch match{shape};
      bool measured = false;
      for (const BenchmarkView* row : family.rows) {
        const BenchmarkRecord& r = *row->record;
        if (r.shape != shape) continue;
        const std::string& role = family.roles.at(r.variant);
        measured = measured || role == "peer";
        if (!row->ran() || r.correct == false) continue;
        const BenchmarkView** best = nullptr;
        if (role == "peer" && !wrong(r.variant)) best = &match.peer;
        else if (is_kgate_own(role)) best = &match.kgate;
        if (best && (!*best || row->median_s < (*best)->median_s)) *best = row;
      }
      if (!measured) continue;
      if (match.peer && match.kgate) {
        match.speedup = match.peer->median_s / match.kgate->median_s;
        match.tie = is_tie(*match.peer->record, *match.kgate->record, match.speedup);
      }
      family.peer_matches.push_back(match);
    }
  }
  for (BenchmarkView& view : model.views) {
    const FamilyView& family = family_named(model.families, view.record->family);
    for (const PeerMatch& match : family.peer_matches)
      if (match.shape == view.record->shape && match.peer && view.ran()) view.vs_best_peer = match.peer->median_s / view.median_s;
  }
}

// ---------------------------------------------------------------------------------------------
// History and trend

std::vector<const NamedRun*> runs_by_date(const ReportInputs& inputs) {
  std::vector<const NamedRun*> runs;
  for (const NamedRun& run : inputs.previous) runs.push_back(&run);
  // ISO 8601 UTC dates sort as text; runs without a date (plain Google Benchmark JSON) go first.
  std::stable_sort(runs.begin(), runs.end(),
                   [](const NamedRun* a, const NamedRun* b) { return a->run.context.date < b->run.context.date; });
  runs.push_back(&inputs.current);
  return runs;
}

void add_history(ReportModel& model) {
  const ReportInputs& inputs = *model.inputs;
  if (inputs.previous.empty()) return;
  const std::vector<const NamedRun*> runs = runs_by_date(inputs);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    HistoryRow row;
    row.run = runs[i];
    row.against = inputs.baseline ? &*inputs.baseline : i > 0 ? runs[i - 1] : nullptr;
    if (row.against && row.against->source == row.run->source) row.against = nullptr;  // the baseline itself
    if (row.against && row.run == &inputs.current && inputs.baseline) row.comparison = model.comparison;
    else if (row.against)
      row.comparison = compare_runs(row.against->run, row.run->run, row.against->source, row.run->source, inputs.compare);
    model.history.push_back(std::move(row));
  }
}

// Time in `first` / time in `later` for one benchmark, when both ran in the same headline mode
// (compare's speedup is taken in the new run's headline mode; a change of mode is no speedup).
double speedup_between(const BenchmarkRecord& first, const BenchmarkRecord& later) {
  if (first.headline_mode != later.headline_mode) return 0;
  const double before = headline_median(first), after = headline_median(later);
  return before > 0 && after > 0 ? before / after : 0;
}

void add_trends(ReportModel& model) {
  if (model.history.size() < 2) return;
  const RunResults& first = model.history.front().run->run;
  std::map<std::string, const BenchmarkRecord*> first_by_name;
  for (const BenchmarkRecord& r : first.benchmarks) first_by_name[r.name] = &r;
  for (const FamilyView& family : model.families) {
    Trend trend;
    trend.family = family.name;
    for (const std::string& variant : family.variants) {
      TrendSeries series;
      series.variant = variant;
      for (const HistoryRow& row : model.history) {
        Geomean speedup;
        for (const BenchmarkRecord& r : row.run->run.benchmarks) {
          if (r.family != family.name || r.variant != variant) continue;
          const auto it = first_by_name.find(r.name);
          const double s = it == first_by_name.end() ? 0 : speedup_between(*it->second, r);
          if (s > 0) speedup.add(s);
        }
        series.speedup.push_back(speedup.value());
      }
      trend.series.push_back(std::move(series));
    }
    model.trends.push_back(std::move(trend));
  }
}

// The value after `key` in `line` ("rel_l2=0.00161" -> 0.00161); nullopt when absent.
std::optional<double> number_after(const std::string& line, const std::string& key) {
  const std::size_t at = line.find(key);
  if (at == std::string::npos) return std::nullopt;
  const char* start = line.c_str() + at + key.size();
  char* end = nullptr;
  const double value = std::strtod(start, &end);
  if (end == start) return std::nullopt;
  return value;
}

}  // namespace

void Geomean::add(double ratio) {
  log_sum_ += std::log(ratio);
  ++count_;
}

double Geomean::value() const { return count_ ? std::exp(log_sum_ / static_cast<double>(count_)) : 0; }

const BenchmarkView* FamilyView::find(const std::string& variant, const std::string& shape) const {
  for (const BenchmarkView* row : rows)
    if (row->record->variant == variant && row->record->shape == shape) return row;
  return nullptr;
}

bool ReportModel::has_ceilings() const {
  const Calibration& c = context().calibration;
  return inputs->current.run.has_kgate_block && c.copy_bytes_per_s > 0 && c.gemm_flops_per_s > 0;
}

std::vector<TensorCheck> parse_correctness_detail(const std::string& detail) {
  std::vector<TensorCheck> checks;
  std::size_t start = 0;
  while (start < detail.size()) {
    const std::size_t end = std::min(detail.find('\n', start), detail.size());
    const std::string line = detail.substr(start, end - start);
    start = end + 1;
    const std::size_t colon = line.find(": rel_l2=");
    const auto rel_l2 = number_after(line, "rel_l2="), limit = number_after(line, "(limit "), max_abs = number_after(line, "max_abs=");
    if (colon == std::string::npos || !rel_l2 || !limit || !max_abs) return {};
    TensorCheck check{line.substr(0, colon), *rel_l2, *limit, *max_abs, ""};
    if (const std::size_t v = line.find("violations="); v != std::string::npos)
      check.violations = line.substr(v + 11, line.find(' ', v) - v - 11);
    checks.push_back(std::move(check));
  }
  return checks;
}

std::string achieved_rate(const BenchmarkView& view) {
  if (view.roof.pct <= 0) return "-";
  return view.roof.ceiling == "compute" ? format_flops(view.record->flops_per_s) : format_bandwidth(view.record->bytes_per_s);
}

const KernelRecord* dominant_kernel(const BenchmarkRecord& record) {
  const KernelRecord* best = nullptr;
  for (const KernelRecord& k : record.kernels)
    if (!best || k.duration_s * std::max(k.launches, 1) > best->duration_s * std::max(best->launches, 1)) best = &k;
  return best;
}

std::size_t block_count(const KernelRecord& kernel) {
  std::size_t n = 1;
  for (const int d : kernel.grid) n *= static_cast<std::size_t>(std::max(d, 1));
  return n;
}

ReportModel build_model(const ReportInputs& inputs) {
  ReportModel model;
  model.inputs = &inputs;
  if (inputs.baseline)
    model.comparison =
        compare_runs(inputs.baseline->run, inputs.current.run, inputs.baseline->source, inputs.current.source, inputs.compare);
  add_views(model);
  add_families(model);
  add_journeys(model);
  add_versus(model);
  add_peer_matches(model);
  add_history(model);
  add_trends(model);
  return model;
}

}  // namespace kgate::report
