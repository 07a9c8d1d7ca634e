#pragma once
// Splitting one suite's benchmarks into shards that run at the same time (one process per GPU,
// or one CI job per runner) and are joined afterwards with `kgate merge`. Every process computes
// its shard on its own, with no coordinator, so the split is a pure function of the benchmark
// names and the recorded durations: the same inputs give the same split on every machine.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kgate/results/results.hpp"

namespace kgate {

// Shard `index` of `count`, counted from 0: "0/2" and "1/2" together are the whole suite.
struct ShardSpec {
  int index = 0, count = 1;
  std::string text() const;  // "1/2"
};

// "i/n" with 0 <= i < n. Throws std::invalid_argument saying what is wrong.
ShardSpec parse_shard(std::string_view text);

// How long each benchmark of a recorded run kept the harness busy, in seconds: its recorded wall
// time, or, in files written before that field existed, its first launch plus every timing
// mode's wall time. What the harness spends is what balancing needs, not the kernel's speed: a
// 5 us kernel can take longer to converge than a 5 ms one. Benchmarks with no time are left out.
std::map<std::string, double> benchmark_durations(const RunResults& run);

// `names` split into `count` shards, each shard's names in their order in `names`.
// Longest first, each to the shard with the least work so far (ties: the lower shard), which
// keeps the longest shard within 4/3 of the best possible split. A name with no recorded
// duration counts as the median recorded one (a benchmark added since); with no durations at
// all every benchmark counts the same, which balances by count. Depends only on the set of
// names and their durations, not on the order of `names`. Throws std::invalid_argument when
// count < 1.
std::vector<std::vector<std::string>> split_into_shards(const std::vector<std::string>& names, int count,
                                                        const std::map<std::string, double>& durations);

}  // namespace kgate
