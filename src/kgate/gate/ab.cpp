#include "kgate/gate/ab.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <stdexcept>

#include "kgate/base/figures.hpp"
#include "kgate/results/repetitions.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/base/statistics.hpp"

namespace kgate {
namespace {

const TimingRecord* headline_samples(const RunResults& run, const std::string& name) {
  for (const BenchmarkRecord& r : run.benchmarks)
    if (r.name == name && r.status == BenchmarkStatus::ok) {
      const TimingRecord* t = r.headline();
      return t && !t->samples_s.empty() ? t : nullptr;
    }
  return nullptr;
}

// Each round's speedup (base median / head median) for one benchmark; rounds where either side
// has no samples are left out.
std::vector<double> round_speedups(const std::vector<RunResults>& base_rounds, const std::vector<RunResults>& head_rounds,
                                   const std::string& name) {
  std::vector<double> speedups;
  for (std::size_t i = 0; i < base_rounds.size(); ++i) {
    const TimingRecord* b = headline_samples(base_rounds[i], name);
    const TimingRecord* h = headline_samples(head_rounds[i], name);
    if (b && h) speedups.push_back(median(b->samples_s) / median(h->samples_s));
  }
  return speedups;
}

}  // namespace

std::vector<bool> head_first_schedule(int rounds, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<bool> head_first;
  // One draw per round, taken as its lowest bit: the same on every standard library, unlike
  // std::bernoulli_distribution, whose algorithm is not specified.
  for (int i = 0; i < rounds; ++i) head_first.push_back((engine() & 1u) != 0);
  return head_first;
}

ListDifference diff_benchmark_lists(std::vector<std::string> base, std::vector<std::string> head) {
  std::sort(base.begin(), base.end());
  std::sort(head.begin(), head.end());
  base.erase(std::unique(base.begin(), base.end()), base.end());
  head.erase(std::unique(head.begin(), head.end()), head.end());
  ListDifference d;
  std::set_intersection(base.begin(), base.end(), head.begin(), head.end(), std::back_inserter(d.common));
  std::set_difference(base.begin(), base.end(), head.begin(), head.end(), std::back_inserter(d.base_only));
  std::set_difference(head.begin(), head.end(), base.begin(), base.end(), std::back_inserter(d.head_only));
  return d;
}

RunResults pool_rounds(const std::vector<RunResults>& rounds, const std::vector<std::string>& sources) {
  if (rounds.empty()) throw std::invalid_argument("pool_rounds: no rounds");
  RunResults pooled;
  pooled.context = rounds.front().context;
  pooled.has_kgate_block = rounds.front().has_kgate_block;
  std::map<std::string, std::size_t> index;
  for (std::size_t round = 0; round < rounds.size(); ++round) {
    const RunResults& run = rounds[round];
    const std::string& source = round < sources.size() ? sources[round] : "round " + std::to_string(round + 1);
    if (run.context.gpu_name != pooled.context.gpu_name)
      throw ResultsError(source + ": $.context.kgate.gpu.name: ran on " + run.context.gpu_name + ", but the first round on " +
                         pooled.context.gpu_name + " (the rounds of an A/B comparison share one GPU)");
    for (const BenchmarkRecord& r : run.benchmarks) {
      const auto it = index.find(r.name);
      if (it == index.end()) {
        index[r.name] = pooled.benchmarks.size();
        pooled.benchmarks.push_back(r);
        continue;
      }
      BenchmarkRecord& into = pooled.benchmarks[it->second];
      if (is_repetition(into, r)) pool_repetition(into, r, pooled.context.calibration);
      else if (r.status == BenchmarkStatus::failed && into.status != BenchmarkStatus::failed) into = r;
      else if (into.status == BenchmarkStatus::skipped && r.status == BenchmarkStatus::ok) into = r;
    }
  }
  return pooled;
}

ComparisonReport compare_rounds(const std::vector<RunResults>& base_rounds, const std::vector<RunResults>& head_rounds,
                                const std::string& base_source, const std::string& head_source, const CompareOptions& options) {
  if (base_rounds.empty() || base_rounds.size() != head_rounds.size())
    throw std::invalid_argument("compare_rounds: expected the same number of base and head rounds, at least one; got " +
                                std::to_string(base_rounds.size()) + " and " + std::to_string(head_rounds.size()));
  std::vector<std::string> base_names, head_names;
  for (std::size_t i = 0; i < base_rounds.size(); ++i) {
    base_names.push_back(base_source + " round " + std::to_string(i + 1));
    head_names.push_back(head_source + " round " + std::to_string(i + 1));
  }
  const RunResults base = pool_rounds(base_rounds, base_names);
  const RunResults head = pool_rounds(head_rounds, head_names);
  ComparisonReport report = compare_runs(base, head, base_source, head_source, options);
  if (!base.context.gpu_uuid.empty() && !head.context.gpu_uuid.empty() && base.context.gpu_uuid != head.context.gpu_uuid)
    report.warnings.push_back("base ran on " + base.context.gpu_uuid + ", head on " + head.context.gpu_uuid +
                              ": an A/B comparison is meant for one GPU");

  for (BenchmarkComparison& row : report.benchmarks) {
    if (row.verdict == Verdict::same || row.speedup == 0) continue;
    const std::vector<double> speedups = round_speedups(base_rounds, head_rounds, row.name);
    if (speedups.empty()) continue;
    std::string listed;
    for (const double s : speedups) listed.append(" ").append(format_ratio(s));
    row.notes.push_back("per round:" + listed);
    if (row.verdict != Verdict::slower && row.verdict != Verdict::faster) continue;
    const bool slower = row.verdict == Verdict::slower;
    const auto agreeing =
        static_cast<std::size_t>(std::count_if(speedups.begin(), speedups.end(), [&](double s) { return slower ? s < 1 : s > 1; }));
    if (2 * agreeing > speedups.size()) continue;
    row.notes.push_back(std::string("head ") + (slower ? "slower" : "faster") + " in only " + std::to_string(agreeing) + " of " +
                        std::to_string(speedups.size()) + " rounds: the pooled " + (slower ? "slowdown" : "speedup") +
                        " is not consistent across rounds");
    row.verdict = Verdict::noisy;
  }
  return report;
}

}  // namespace kgate
