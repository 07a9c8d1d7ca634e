#include "kgate/gate/baseline.hpp"

#include <set>

#include "kgate/base/figures.hpp"
#include "kgate/base/text.hpp"
#include "kgate/results/detectable.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate {
namespace {

// A benchmark with one sample can never gate: compare needs two on each side for its
// significance test, and judges a change against one figure on its threshold alone (noisy, never
// slower).
bool untestable(const BenchmarkRecord& r) {
  const TimingRecord* t = r.status == BenchmarkStatus::ok ? r.headline() : nullptr;
  return t && t->samples_s.size() < 2;
}

// Why a benchmark has one sample, and how its format records more.
std::string one_sample_reason(const RunResults& run, const TimingRecord& t) {
  if (t.summary.count > t.samples_s.size())
    return "nvbench wrote only its summary of " + std::to_string(t.summary.count) + " samples: run it with --jsonbin FILE " +
           "instead of --json FILE, which writes the samples beside the JSON file";
  if (!run.has_kgate_block) return "one repetition: run it with --benchmark_repetitions=10 or more, each repetition a sample";
  return "kgate_bench kept one sample: run it again on an idle GPU";
}

// Why a record must not become a baseline entry, with what to do about it; empty when it may.
std::string unfit_reason(const BenchmarkRecord& r, const RunResults& run, const Thresholds& thresholds) {
  if (r.status == BenchmarkStatus::failed) return "failed (" + r.error + "): fix the variant; a failed variant is never recorded";
  if (r.correct == false) return "wrong result (" + r.correctness_detail + "): fix the variant; a wrong result is never recorded";
  const TimingRecord* t = r.headline();
  if (r.status != BenchmarkStatus::ok || !t) return "";
  if (untestable(r))
    return "one sample, so no comparison against it can be significant and it could never gate (" + one_sample_reason(run, *t) +
           "); never recorded";
  if (t->throttled_samples > static_cast<int>(t->samples_s.size()))
    return std::to_string(t->throttled_samples) + " of its " + r.headline_mode + " samples ran below the throttle clock and were " +
           "dropped (" + std::to_string(t->samples_s.size()) + " kept): the GPU is throttling; check its cooling and power " +
           "(nvidia-smi -q -d PERFORMANCE) and run again";
  if (r.role == "vendor") return "";  // shown, never gated (docs/compare.md): what it can detect gates nothing
  const DetectableChange detectable = detectable_change(*t, t->timer == "cupti" ? run.context.calibration.timer_resolution_s : 0);
  const double threshold = thresholds.for_benchmark(r.name, r.family);
  if (detectable.fraction() <= threshold) return "";
  std::string why;
  if (detectable.fraction() == detectable.between) {
    std::vector<std::string> medians;
    for (const double m : t->repetition_medians_s) medians.push_back(format_time(m));
    why = "its processes' medians (" + join(medians, ", ") + ") differ by that much";
  } else {
    why = detectable.fraction() == detectable.within ? "its samples scatter that much" : "the timer's tick is that coarse";
  }
  return "detects only changes of " + format_percent(detectable.fraction() * 100) + " or more, above its " +
         format_percent(threshold * 100) + " threshold (" + why + "): run it again on an idle GPU, or give it a " +
         "threshold of at least that much in thresholds.json";
}

void thin_samples(std::optional<TimingRecord>& timing) {
  if (!timing || timing->samples_s.size() <= kMaxBaselineSamples) return;
  const std::vector<double>& all = timing->samples_s;
  std::vector<double> kept;
  kept.reserve(kMaxBaselineSamples);
  for (std::size_t i = 0; i < kMaxBaselineSamples; ++i) kept.push_back(all[i * all.size() / kMaxBaselineSamples]);
  timing->samples_s = std::move(kept);
}

bool never_recorded(const BenchmarkRecord& r) { return r.status != BenchmarkStatus::ok || r.correct == false || untestable(r); }

}  // namespace

std::map<std::string, std::string> baseline_provenance(const BenchmarkRecord& r, const RunContext& c, const std::string& source) {
  std::map<std::string, std::string> p = {
      {"commit", c.git_commit}, {"git_dirty", c.git_dirty ? "true" : "false"}, {"date", c.date}, {"host", c.host}, {"source", source}};
  if (c.driver_version > 0) p["driver_version"] = format_cuda_version(c.driver_version);
  if (c.runtime_version > 0) p["runtime_version"] = format_cuda_version(c.runtime_version);
  if (c.sm_clock_mhz_default > 0) p["sm_clock_mhz_default"] = printf_string("%.0f", c.sm_clock_mhz_default);
  if (const TimingRecord* t = r.headline(); t && t->sm_clock_mhz > 0) p["sm_clock_mhz"] = printf_string("%.0f", t->sm_clock_mhz);
  // A merged run (kgate merge) knows per benchmark which host, GPU and shard measured it.
  for (const char* key : {"host", "gpu_name", "gpu_uuid", "gpu_index", "shard"})
    if (const auto it = r.provenance.find(key); it != r.provenance.end()) p[key] = it->second;
  return p;
}

std::string never_a_baseline(const RunResults& run) {
  std::vector<const BenchmarkRecord*> testable, one_sample;
  for (const BenchmarkRecord& r : run.benchmarks)
    if (r.role != "peer" && r.status == BenchmarkStatus::ok) (untestable(r) ? one_sample : testable).push_back(&r);
  if (!testable.empty() || one_sample.empty()) return "";
  return "it can never gate: each of its " + std::to_string(one_sample.size()) +
         " benchmark(s) has one sample, and no comparison against one figure can be significant (" +
         one_sample_reason(run, *one_sample.front()->headline()) + ")";
}

std::vector<std::string> unfit_benchmarks(const RunResults& run, const Thresholds& thresholds) {
  std::vector<std::string> problems;
  for (const BenchmarkRecord& r : run.benchmarks)
    if (const std::string reason = r.role == "peer" ? "" : unfit_reason(r, run, thresholds); !reason.empty())
      problems.push_back(r.name + ": " + reason);
  return problems;
}

BaselineChanges record_in_baseline(RunResults& baseline, const RunResults& run, const std::string& source, const Thresholds& thresholds,
                                   bool prune) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < baseline.benchmarks.size(); ++i) index[baseline.benchmarks[i].name] = i;
  BaselineChanges changes;
  for (const BenchmarkRecord& r : run.benchmarks) {
    if (r.role == "peer") {  // measured beside kgate for the report, never gated (docs/peers.md)
      ++changes.peers;
      continue;
    }
    if (never_recorded(r)) {
      const std::string why = r.status == BenchmarkStatus::skipped ? "skipped" : unfit_reason(r, run, thresholds);
      changes.not_recorded.push_back(r.name + " (" + why + ")");
      continue;
    }
    BenchmarkRecord entry = r;
    entry.provenance = baseline_provenance(r, run.context, source);
    thin_samples(entry.cold);
    thin_samples(entry.hot);
    if (const auto it = index.find(r.name); it != index.end()) {
      baseline.benchmarks[it->second] = std::move(entry);
      ++changes.updated;
    } else {
      index[r.name] = baseline.benchmarks.size();
      baseline.benchmarks.push_back(std::move(entry));
      ++changes.added;
    }
  }
  if (changes.updated + changes.added == 0) throw ResultsError(source + ": $.benchmarks: no benchmark fit to record");
  if (prune) {
    std::set<std::string> measured;
    for (const BenchmarkRecord& r : run.benchmarks)
      if (r.status != BenchmarkStatus::skipped) measured.insert(r.name);
    std::erase_if(baseline.benchmarks, [&](const BenchmarkRecord& b) {
      if (measured.contains(b.name)) return false;
      changes.pruned.push_back(b.name);
      return true;
    });
  }
  changes.kept = baseline.benchmarks.size() - changes.updated - changes.added;
  baseline.context = run.context;  // the newest run describes the file; each entry keeps its own provenance
  baseline.has_kgate_block = true;
  return changes;
}

std::map<std::string, std::string> timers_of(const std::vector<BenchmarkRecord>& entries) {
  std::map<std::string, std::string> example;
  for (const BenchmarkRecord& r : entries)
    if (const TimingRecord* t = r.headline()) example.try_emplace(t->timer, r.name);
  return example;
}

}  // namespace kgate
