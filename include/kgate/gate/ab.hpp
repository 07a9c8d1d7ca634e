#pragma once
// The statistics of `kgate ab`: a base and a head build measured on one GPU in alternating
// rounds, each side's rounds pooled into one run, the comparator (compare.hpp) applied to the
// pooled samples, and each verdict of a change checked against the rounds one by one
// (docs/compare.md, "kgate ab"). Running the binaries is the command line's job (tools/kgate).
#include <cstdint>
#include <string>
#include <vector>

#include "kgate/gate/compare.hpp"
#include "kgate/results/results.hpp"

namespace kgate {

// Per round, whether head runs before base. A seeded shuffle, so that what drifts within a round
// (clocks settling, the GPU warming up) does not always favour the same side, and the same seed
// gives the same schedule.
std::vector<bool> head_first_schedule(int rounds, std::uint64_t seed);

// Benchmark names of two builds (`kgate_bench --benchmark_list_tests`); each list sorted.
struct ListDifference {
  std::vector<std::string> common, base_only, head_only;
  bool same() const { return base_only.empty() && head_only.empty(); }
};
ListDifference diff_benchmark_lists(std::vector<std::string> base, std::vector<std::string> head);

// One side's rounds as one run: the first round's context; each benchmark's rounds pooled as
// repetitions (repetitions.hpp); a failure in any round makes the benchmark failed (with that
// round's error), since a fault that happens one time in five is still a fault. Throws
// ResultsError, naming `sources`, when the rounds ran on different GPU models.
RunResults pool_rounds(const std::vector<RunResults>& rounds, const std::vector<std::string>& sources);

// compare_runs(pool_rounds(base), pool_rounds(head)), then the round check. Pooled samples from a
// handful of processes overstate the significance of a change when each process carries an
// offset of its own (the between-run shift the 1 us minimum change exists for), so a `slower` or
// `faster` verdict stands only when the head's median was on that side of the base's in more
// than half of the rounds; otherwise it becomes `noisy`, with a note. Every benchmark not judged
// `same` gets a note with the speedup of each round. Rounds are paired by position: base_rounds[i]
// and head_rounds[i] ran back to back. Throws std::invalid_argument when the counts differ or are 0.
ComparisonReport compare_rounds(const std::vector<RunResults>& base_rounds, const std::vector<RunResults>& head_rounds,
                                const std::string& base_source, const std::string& head_source, const CompareOptions& options);

}  // namespace kgate
