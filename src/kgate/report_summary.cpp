// The executive summary: two or three sentences a reader stops at, each figure from the model.
#include <cmath>

#include "report_format.hpp"
#include "report_model.hpp"

namespace kgate::report {
namespace {

std::string plural(std::size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

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
  if (!model.context().gpu_name.empty()) s += " on " + model.context().gpu_name;
  const BenchmarkView* best = nullptr;
  for (const BenchmarkView& v : model.views)
    if (v.ran() && v.roof.pct > 0 && (!best || v.roof.pct > best->roof.pct)) best = &v;
  if (best)
    s += "; the highest share of a measured roof is " + format_pct(best->roof.pct) + " of the " + best->roof.ceiling +
         " ceiling (" + code(best->record->name) + ")";
  std::size_t latency_bound = 0;
  for (const BenchmarkView& v : model.views)
    latency_bound += v.ran() && v.roof.pct > 0 && v.record->roofline == RooflineClass::latency_bound;
  if (latency_bound) s += ", and " + std::to_string(latency_bound) + " of them are latency-bound";
  return s + ".";
}

std::string correctness_sentence(const ReportModel& model) {
  std::size_t passed = 0, wrong = 0, unchecked = 0, not_run = 0;
  double worst_share = -1;
  TensorCheck worst;
  for (const BenchmarkView& v : model.views) {
    const BenchmarkRecord& r = *v.record;
    not_run += r.status != BenchmarkStatus::ok;
    if (!r.correct) {
      ++unchecked;
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
  std::string s =
      "Correctness: " + std::to_string(passed) + " of " + std::to_string(model.views.size()) + " benchmarks passed their check";
  if (worst_share >= 0)
    s += " (largest relative L2 error " + sig3(worst.rel_l2) + " against a limit of " + sig3(worst.limit) + ")";
  s += ", " + std::to_string(wrong) + " gave a wrong result and " + std::to_string(unchecked) + " were not checked";
  if (not_run) s += "; " + std::to_string(not_run) + " did not run (failed or skipped)";
  return s + ".";
}

}  // namespace

std::string gate_line(const ReportModel& model) {
  if (!model.comparison) return "gate: not evaluated (no baseline)";
  return std::string("gate: ") + (model.comparison->regression() ? "FAIL" : "pass") + " (" + model.comparison->summary_line() +
         ")";
}

std::vector<std::string> executive_summary(const ReportModel& model) {
  std::vector<std::string> sentences;
  if (model.comparison) {
    sentences.push_back(comparison_sentence(*model.comparison, model.inputs->baseline->source));
    sentences.push_back(biggest_change_sentence(*model.comparison));
  } else {
    sentences.push_back(measured_sentence(model));
  }
  std::string last = correctness_sentence(model);
  if (!model.comparison)
    last += " No baseline was given, so the regression gate was not evaluated.";
  else
    last += model.comparison->regression() ? " The regression gate **fails**." : " The regression gate passes.";
  sentences.push_back(std::move(last));
  return sentences;
}

}  // namespace kgate::report
