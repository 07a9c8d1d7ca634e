#pragma once
// What a run may add to a stored baseline (`kgate baseline update`, docs/compare.md): an entry is
// fit when the gate can use it: it ran, it was right, it has samples to test, they came at full
// clock, and it can detect a change of its threshold's size (a gated benchmark whose repetitions
// scatter wider than its threshold would hide exactly the regressions it is for). The file itself,
// its lock and the command line are the caller's (tools/kgate/baseline.cpp).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "kgate/gate/compare.hpp"
#include "kgate/results/results.hpp"

namespace kgate {

// A baseline keeps at most this many samples per mode, evenly spaced in time order: the U test and
// the median-ratio interval lose nothing material, and a suite's baseline stays small enough for a repository.
inline constexpr std::size_t kMaxBaselineSamples = 1000;

// Why `run` can never be a baseline, as a whole: each benchmark it timed (peers aside) has one
// sample, and no comparison against one figure can be significant. Empty when it can.
std::string never_a_baseline(const RunResults& run);

// The benchmarks of `run` unfit for a baseline, each "<name>: <why, and what to do about it>";
// peers (never gated) are not judged.
std::vector<std::string> unfit_benchmarks(const RunResults& run, const Thresholds& thresholds);

// The provenance a stored entry carries (its own replaced): the commit, date, host, driver and
// runtime, the default and measured SM clock of the run `context` describes, `source` (the file it
// was read from), and from a merged run which host, GPU and shard measured it.
std::map<std::string, std::string> baseline_provenance(const BenchmarkRecord& r, const RunContext& context, const std::string& source);

// What record_in_baseline did to the stored entries.
struct BaselineChanges {
  std::size_t updated = 0, added = 0, kept = 0;
  std::size_t peers = 0;                    // peer benchmarks of the run, never recorded
  std::vector<std::string> not_recorded{};  // "<name> (<why>)": skipped, failed, wrong or one sample
  std::vector<std::string> pruned{};        // with prune: the entries dropped
};

// Records the fit benchmarks of `run` (read from `source`) in `baseline`: each entry replaced or
// added, with its samples thinned to kMaxBaselineSamples and its provenance (the run's commit,
// date, host, driver and clocks, and where a merged run measured it); the rest kept, or with
// `prune` dropped unless the run measured them (a failed benchmark keeps its entry: the next
// compare must still see what it used to take). The baseline's context becomes the run's.
// Throws ResultsError naming `source` when no benchmark is fit to record.
BaselineChanges record_in_baseline(RunResults& baseline, const RunResults& run, const std::string& source, const Thresholds& thresholds,
                                   bool prune);

// The timers of the entries' headline modes, each with one entry as an example: with more than
// one, compare would refuse to judge a CUPTI-timed benchmark against an event-timed one.
std::map<std::string, std::string> timers_of(const std::vector<BenchmarkRecord>& entries);

}  // namespace kgate
