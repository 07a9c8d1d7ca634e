// kgate merge: the shards of one suite's run (split across processes or machines) as one file;
// the merging is the library's (include/kgate/results/merge.hpp).
#include "args.hpp"
#include "commands.hpp"
#include "kgate/results/merge.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate::cli {
namespace {

constexpr const char* kUsage = R"(usage: kgate merge A.json B.json ... -o OUT.json

Merges the shards of one suite's run into one results file. Every input must be a kgate results
file of the same suite from the same GPU model; the output's context is the first input's, with
the ceilings of the first input that measured them (shards that claim their benchmarks as they
run leave the ceilings to the first shard done; the others' benchmarks are placed on them).
A benchmark in several inputs is an error unless the inputs are repetitions of it: successful
runs of the same family, variant, shape and headline mode. Their samples are then pooled per
timing mode and the summaries and derived figures recomputed. context.kgate.extra records the
inputs ("merged_from") and, per benchmark, the input(s) it came from ("source:<benchmark name>");
the other inputs' extra entries and wall-time phases (wall_s) are kept where the first has none
of that name. A peers file (kgate's own PyTorch peers) merges into a kgate run this way: its
library versions stay in extra ("peers.*") and in each peer benchmark's provenance, and its
benchmarks, measured without ceilings of their own, are placed on the run's measured ceilings.

The benchmarks of a shard (kgate_bench --kgate_shard) record in their provenance where they were
measured: gpu_name, gpu_uuid, gpu_index (the CUDA_VISIBLE_DEVICES the shard ran with, when that
named one GPU by index), host and shard. Shards of an i/n split (kgate_bench --kgate_shard) must all be given, and be of one commit; what
describes one of their processes (extra "shard", "shard_durations", "cuda_visible_devices",
and the wall time per phase, wall_s) is dropped from the merged context.

options:
  -o, --output FILE  the merged results file (written atomically)
  --partial          merge the shards given even when some of the split are missing
  -h, --help         this text

exit status: 0 merged, 2 bad input or usage
)";

}  // namespace

int run_merge(const Arguments& arguments, Io& io) {
  const auto parsed =
      parse_or_help(arguments, {.with_value = {"--output"}, .flags = {"--partial"}, .aliases = {{"-o", "--output"}}}, kUsage, io.out);
  if (!parsed) return kExitOk;
  const Args& args = *parsed;
  const auto output = args.value("--output");
  if (!output) throw UsageError("missing -o OUT.json");
  if (args.positionals().empty()) throw UsageError("no input files");
  write_merged(merge_results_files(args.positionals(), args.flag("--partial")), args.positionals().size(), *output, io);
  return kExitOk;
}

void write_merged(const MergedRun& merged, std::size_t inputs, const std::string& output, Io& io) {
  write_results_file(output, to_json(merged.run));
  io.out << "merged " << inputs << " file(s) into " << output << ": " << merged.run.benchmarks.size() << " benchmarks"
         << (merged.pooled ? " (" + std::to_string(merged.pooled) + " repetition(s) pooled)" : "") << "\n";
}

}  // namespace kgate::cli
