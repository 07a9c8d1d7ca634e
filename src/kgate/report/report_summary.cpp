// The executive summary: two or three sentences a reader stops at, each figure from the model.
#include <algorithm>
#include <cmath>

#include "kgate/base/text.hpp"
#include "kgate/report/format.hpp"
#include "report_model.hpp"

namespace kgate::report {
namespace {

const BenchmarkComparison* extreme(const ComparisonReport& report, Verdict verdict, bool largest) {
  const BenchmarkComparison* best = nullptr;
  for (const BenchmarkComparison& row : report.benchmarks)
    if (row.verdict == verdict && (!best || (largest ? row.speedup > best->speedup : row.speedup < best->speedup))) best = &row;
  return best;
}

std::string comparison_sentence(const ComparisonReport& c, const std::string& baseline) {
  const std::size_t faster = c.count(Verdict::faster), slower = c.count(Verdict::slower);
  std::string s = "Against the baseline " + code(baseline) + ", " + std::to_string(faster) + " of " +
                  plural(c.benchmarks.size(), "benchmark", "benchmarks") + " got faster";
  if (const BenchmarkComparison* top = extreme(c, Verdict::faster, true))
    s += " (up to " + format_ratio(top->speedup) + ", " + code(top->name) + ")";
  s += " and " + std::to_string(slower) + " slower";
  if (const BenchmarkComparison* bottom = extreme(c, Verdict::slower, false))
    s += " (down to " + format_ratio(bottom->speedup) + ", " + code(bottom->name) + ")";
  s += "; " + std::to_string(c.count(Verdict::same)) + " are unchanged and " + std::to_string(c.count(Verdict::noisy)) + " noisy";
  for (const Verdict other : {Verdict::added, Verdict::missing, Verdict::failed})
    if (const std::size_t n = c.count(other)) s += ", " + std::to_string(n) + " " + std::string(to_string(other));
  const double geomean = c.geomean_speedup();
  s += geomean > 0 ? ". The geometric-mean speedup over the compared benchmarks is " + format_ratio(geomean) + "." : ".";
  return s;
}

// The largest slowdown (or, without one, the largest speedup), with compare's notes on what
// changed in its kernels, counters and clocks: the likely cause.
std::string biggest_change_sentence(const ComparisonReport& c) {
  const bool slowdowns = c.count(Verdict::slower) > 0;
  const BenchmarkComparison* biggest = extreme(c, slowdowns ? Verdict::slower : Verdict::faster, !slowdowns);
  if (!biggest) return "No benchmark changed by more than its threshold.";
  std::string s = std::string(slowdowns ? "The largest slowdown" : "The largest speedup") + ", " + code(biggest->name) + " at " +
                  format_ratio(biggest->speedup) + ", ";
  if (biggest->notes.empty()) return s + "comes with no kernel, counter or clock difference that would explain it.";
  s += "comes with: ";
  for (std::size_t i = 0; i < biggest->notes.size(); ++i) s += (i ? "; " : "") + biggest->notes[i];
  return s + ".";
}

std::string measured_sentence(const ReportModel& model) {
  std::vector<std::string> families;
  for (const FamilyView& f : model.families) families.push_back(code(f.name));
  std::string s = "Measured " + plural(model.views.size(), "benchmark", "benchmarks") + " of " +
                  plural(model.families.size(), "kernel family", "kernel families") + " (" + join_words(families) + ")";
  if (!model.context().gpu_name.empty()) s += " on " + literal(model.context().gpu_name);
  const BenchmarkView* best = nullptr;
  for (const BenchmarkView& v : model.views)
    if (v.ran() && v.roof.pct > 0 && (!best || v.roof.pct > best->roof.pct)) best = &v;
  if (best)
    s += "; the highest share of a measured roof is " + format_pct(best->roof.pct) + " of the " + best->roof.ceiling + " ceiling (" +
         code(best->record->name) + ")";
  std::size_t latency_bound = 0;
  for (const BenchmarkView& v : model.views)
    latency_bound += v.ran() && v.roof.pct > 0 && v.record->roofline == RooflineClass::latency_bound;
  if (latency_bound) s += ", and " + std::to_string(latency_bound) + " of them are latency-bound";
  return s + ".";
}

constexpr std::size_t kMaxSlowerNamed = 4;

// kgate's speedup over the fastest peer (peer median / kgate median) at each shape where both ran.
struct PeerStanding {
  std::vector<const PeerMatch*> compared, slower;
  std::size_t ties = 0;
  double geomean = 0, low = 0, high = 0;
};

PeerStanding peer_standing(const FamilyView& family) {
  PeerStanding standing;
  Geomean geomean;
  for (const PeerMatch& m : family.peer_matches) {
    if (m.speedup <= 0) continue;
    standing.low = standing.compared.empty() ? m.speedup : std::min(standing.low, m.speedup);
    standing.high = std::max(standing.high, m.speedup);
    standing.compared.push_back(&m);
    if (m.speedup < 1 && !m.tie) standing.slower.push_back(&m);
    standing.ties += m.tie;
    geomean.add(m.speedup);
  }
  standing.geomean = geomean.value();
  return standing;
}

// "`vectorized` (11), `naive` (1)": which variant was the fastest, at how many shapes.
std::string fastest_counts(const std::vector<const PeerMatch*>& matches, bool peer) {
  std::vector<std::pair<std::string, std::size_t>> counts;
  for (const PeerMatch* m : matches) {
    const std::string& variant = (peer ? m->peer : m->kgate)->record->variant;
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == variant; });
    if (it == counts.end()) counts.emplace_back(variant, 1);
    else ++it->second;
  }
  std::string out;
  for (const auto& [variant, n] : counts) out += (out.empty() ? "" : ", ") + code(variant) + " (" + std::to_string(n) + ")";
  return out;
}

// The libraries the peers ran ("torch 2.11.0+cu130, triton 3.6.0 and liger-kernel 0.8.5"), each
// once, from their records (a record names its libraries as a list: "torch 2.11.0, triton 3.6.0").
std::string peer_libraries(const ReportModel& model) {
  std::vector<std::string> libraries;
  for (const BenchmarkView& v : model.views) {
    if (v.record->role != "peer") continue;
    const auto it = v.record->provenance.find("library");
    if (it == v.record->provenance.end()) continue;
    for (std::string library : split(it->second, ',')) {
      library.erase(0, library.find_first_not_of(' '));
      if (!library.empty() && std::find(libraries.begin(), libraries.end(), library) == libraries.end())
        libraries.push_back(std::move(library));
    }
  }
  for (std::string& library : libraries) library = literal(library);
  return join_words(libraries);
}

std::string peer_sentence(const ReportModel& model) {
  std::size_t compared = 0, slower = 0, ties = 0, families = 0;
  for (const FamilyView& family : model.families) {
    if (family.peers.empty()) continue;
    const PeerStanding standing = peer_standing(family);
    compared += standing.compared.size();
    slower += standing.slower.size();
    ties += standing.ties;
    ++families;
  }
  const std::string libraries = peer_libraries(model);
  const std::string peers = "peers" + (libraries.empty() ? "" : " (" + libraries + ")");
  if (compared == 0)
    return "The run has " + peers + " for " + plural(families, "family", "families") +
           ", but no shape at which both a peer and a kgate variant ran.";
  std::string s = "Against the fastest of the " + peers + " at each shape" + ", kgate's fastest variant is faster at " +
                  std::to_string(compared - slower - ties) + " of " + std::to_string(compared) + " shapes, " +
                  (ties ? "tied at " + std::to_string(ties) + " (within 1%)" : "tied at none") + " and " +
                  (slower ? "**slower at " + std::to_string(slower) + "**" : std::string("slower at none")) + " (" +
                  plural(families, "family", "families") + ", table below).";
  return s;
}

// Why a benchmark that ran was not checked, as its record says it ("not checked: the instance is
// larger than the 16 MiB checked in benchmarks (...)" -> "the instance is larger than the 16 MiB
// checked in benchmarks"): the words the sentence groups by.
std::string unchecked_reason(const BenchmarkRecord& r) {
  std::string reason = r.correctness_detail;
  if (reason.starts_with("not checked: ")) reason.erase(0, 13);
  if (const std::size_t aside = reason.find(" ("); aside != std::string::npos) reason.erase(aside);
  return reason.empty() ? "no reason recorded" : reason;
}

std::string correctness_sentence(const ReportModel& model) {
  std::size_t passed = 0, wrong = 0, failed = 0, skipped = 0;
  std::vector<std::pair<std::string, std::size_t>> unchecked;  // reason -> benchmarks, in order of first appearance
  double worst_share = -1;
  TensorCheck worst;
  for (const BenchmarkView& v : model.views) {
    const BenchmarkRecord& r = *v.record;
    failed += r.status == BenchmarkStatus::failed;
    skipped += r.status == BenchmarkStatus::skipped;
    if (r.status != BenchmarkStatus::ok) continue;
    if (!r.correct) {
      const std::string reason = unchecked_reason(r);
      auto it = std::find_if(unchecked.begin(), unchecked.end(), [&](const auto& u) { return u.first == reason; });
      if (it == unchecked.end()) it = unchecked.insert(unchecked.end(), {reason, 0});
      ++it->second;
      continue;
    }
    (*r.correct ? passed : wrong) += 1;
    if (*r.correct)
      for (const TensorCheck& check : parse_correctness_detail(r.correctness_detail))
        if (check.limit > 0 && check.rel_l2 / check.limit > worst_share) {
          worst_share = check.rel_l2 / check.limit;
          worst = check;
        }
  }
  // The correctness suite, when given, is what "correct" means; the bench-time checks follow it.
  std::string s;
  if (const std::vector<SuiteCase>& suite = model.inputs->correctness; !suite.empty()) {
    const auto count = [&](SuiteCase::Result result) {
      return std::to_string(std::count_if(suite.begin(), suite.end(), [&](const SuiteCase& c) { return c.result == result; }));
    };
    s = "The correctness suite: " + count(SuiteCase::Result::passed) + " of " + std::to_string(suite.size()) + " cases passed, " +
        count(SuiteCase::Result::failed) + " failed and " + count(SuiteCase::Result::skipped) + " were skipped. At bench time, ";
  } else {
    s = "Correctness at bench time: ";
  }
  s += std::to_string(passed) + " of " + std::to_string(model.views.size()) + " benchmarks passed their check";
  if (worst_share >= 0) s += " (largest relative L2 error " + sig3(worst.rel_l2) + " against a limit of " + sig3(worst.limit) + ")";
  s += " and " + std::to_string(wrong) + " gave a wrong result";
  if (!unchecked.empty()) {
    std::size_t n = 0;
    std::vector<std::string> why;
    for (const auto& [reason, count] : unchecked) {
      n += count;
      why.push_back(std::to_string(count) + " because " + literal(reason));
    }
    s += "; " + std::to_string(n) + " ran unchecked (" + join_words(why) + ")";
  }
  if (failed + skipped)
    s += "; " + std::to_string(failed + skipped) + " did not run: " + std::to_string(failed) + " failed and " + std::to_string(skipped) +
         " were skipped (their reasons are under their families' tables)";
  return s + ".";
}

}  // namespace

std::string gate_line(const ReportModel& model) {
  if (!model.comparison) return "gate: not evaluated (no baseline)";
  return std::string("gate: ") + (model.comparison->regression() ? "FAIL" : "pass") + " (" + model.comparison->summary_line() + ")";
}

std::vector<std::string> executive_summary(const ReportModel& model) {
  std::vector<std::string> sentences;
  if (model.comparison) {
    sentences.push_back(comparison_sentence(*model.comparison, model.inputs->baseline->source));
    sentences.push_back(biggest_change_sentence(*model.comparison));
  } else {
    sentences.push_back(measured_sentence(model));
  }
  if (std::any_of(model.families.begin(), model.families.end(), [](const FamilyView& f) { return !f.peers.empty(); }))
    sentences.push_back(peer_sentence(model));
  std::string last = correctness_sentence(model);
  if (!model.comparison) last += " No baseline was given, so the regression gate was not evaluated.";
  else last += model.comparison->regression() ? " The regression gate **fails**." : " The regression gate passes.";
  sentences.push_back(std::move(last));
  return sentences;
}

Table peer_summary_table(const ReportModel& model) {
  Table table;
  table.compact = true;
  table.columns = {{"Family"},      {"kgate's fastest"},      {"Fastest peer"}, {"Shapes", true}, {"kgate speedup", true},
                   {"Range", true}, {"Where kgate is slower"}};
  for (const FamilyView& family : model.families) {
    if (family.peers.empty()) continue;
    const PeerStanding s = peer_standing(family);
    if (s.compared.empty()) {
      table.rows.push_back({{code(family.name)}, {"-"}, {"-"}, {"0"}, {"-"}, {"-"}, {"no shape where both ran", Tone::muted}});
      continue;
    }
    const std::string n = std::to_string(s.compared.size());
    Cell slower{s.ties ? "nowhere: faster or tied at all " + n + " shapes" : "nowhere: faster at all " + n + " shapes", Tone::good};
    if (!s.slower.empty()) {
      std::vector<std::string> named;
      for (const PeerMatch* m : s.slower)
        if (named.size() < kMaxSlowerNamed) named.push_back(code(m->shape) + " (" + format_ratio(m->speedup) + ")");
      if (s.slower.size() > named.size()) named.push_back(std::to_string(s.slower.size() - named.size()) + " more");
      slower = {"**slower at " + std::to_string(s.slower.size()) + " of " + n + "**: " + join_words(named), Tone::bad};
    }
    table.rows.push_back({{code(family.name)},
                          {fastest_counts(s.compared, false)},
                          {fastest_counts(s.compared, true)},
                          {n},
                          {format_ratio(s.geomean) + " geomean", s.geomean < 1 ? Tone::bad : Tone::good},
                          {format_interval(s.low, s.high) + "×"},
                          slower});
  }
  return table;
}

}  // namespace kgate::report
