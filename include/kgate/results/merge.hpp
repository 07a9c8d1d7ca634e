#pragma once
// `kgate merge`: the shards of one suite's run (split across processes, GPUs or machines), or a run
// and its peers, as one run (docs/ci.md, docs/peers.md). Every input is a kgate results file of the
// same suite from the same GPU model; the merged context is the first input's, with the ceilings of
// the first input that measured them (a shard that did not is placed on those), context.kgate.extra
// naming the inputs ("merged_from") and each benchmark's ("source:<name>"). A benchmark in several
// inputs must be a repetition (repetitions.hpp), whose samples are pooled; a skip yields to a
// record. A shard's benchmarks keep in their provenance which GPU, host and shard measured them;
// shards of an i/n split must be of one commit and, unless `partial`, all there; what describes
// one shard's process (extra "shard", "cuda_visible_devices", ..., and wall_s) is dropped.
#include <cstddef>
#include <string>
#include <vector>

#include "kgate/results/results.hpp"

namespace kgate {

struct MergedRun {
  RunResults run;
  std::size_t pooled = 0;  // repetitions pooled into a benchmark another input had
};

struct ResultsInput {
  std::string path;  // where it was read from: what the merged run and its errors name
  RunResults results;
};

// Merges `inputs` (at least one) in order. Throws ResultsError naming the input and the JSON path
// of what does not fit.
MergedRun merge_results(const std::vector<ResultsInput>& inputs, bool partial);
// Reads `paths` and merges them (merge_results). An input may hold no benchmark (a claiming shard
// that measured none of a small suite); the merged run must hold one.
MergedRun merge_results_files(const std::vector<std::string>& paths, bool partial);

}  // namespace kgate
