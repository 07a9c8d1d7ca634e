// kgate merge: the shards of one suite's run (split across processes or machines) as one file.
#include <map>

#include "args.hpp"
#include "commands.hpp"
#include "kgate/results_io.hpp"
#include "kgate/roofline.hpp"
#include "kgate/statistics.hpp"

namespace kgate::cli {
namespace {

constexpr const char* kUsage = R"(usage: kgate merge A.json B.json ... -o OUT.json

Merges the shards of one suite's run into one results file. Every input must be a kgate results
file of the same suite from the same GPU model; the output's context is the first input's.
A benchmark in several inputs is an error unless the inputs are repetitions of it: successful
runs of the same family, variant, shape and headline mode. Their samples are then pooled per
timing mode and the summaries and derived figures recomputed. context.kgate.extra records the
inputs ("merged_from") and, per benchmark, the input(s) it came from ("source:<benchmark name>").

options:
  -o, --output FILE  the merged results file (written atomically)
  -h, --help         this text

exit status: 0 merged, 2 bad input or usage
)";

constexpr const char* kSourcePrefix = "source:";

bool same_benchmark(const BenchmarkRecord& a, const BenchmarkRecord& b) {
  return a.status == BenchmarkStatus::ok && b.status == BenchmarkStatus::ok && a.family == b.family &&
         a.variant == b.variant && a.shape == b.shape && a.headline_mode == b.headline_mode;
}

void pool(std::optional<TimingRecord>& into, const std::optional<TimingRecord>& from) {
  if (!from) return;
  if (!into) {
    into = from;
    return;
  }
  const double n_into = static_cast<double>(into->samples_s.size()), n_from = static_cast<double>(from->samples_s.size());
  into->sm_clock_mhz = (into->sm_clock_mhz * n_into + from->sm_clock_mhz * n_from) / (n_into + n_from);
  into->samples_s.insert(into->samples_s.end(), from->samples_s.begin(), from->samples_s.end());
  into->summary = summarize(into->samples_s);
  into->target_met = into->target_met && from->target_met;
  if (into->stop_reason != from->stop_reason) into->stop_reason += "+" + from->stop_reason;
  into->throttled_samples += from->throttled_samples;
  into->gpu_time_s += from->gpu_time_s;
  into->wall_time_s += from->wall_time_s;
}


}  // namespace

int run_merge(const Arguments& arguments, Io& io) {
  const Args args(arguments, {.with_value = {"--output"}, .flags = {}, .aliases = {{"-o", "--output"}}});
  if (args.help()) {
    io.out << kUsage;
    return kExitOk;
  }
  const auto output = args.value("--output");
  if (!output) throw UsageError("missing -o OUT.json");
  if (args.positionals().empty()) throw UsageError("no input files");

  RunResults merged;
  std::map<std::string, std::size_t> index;  // benchmark name -> position in merged
  std::string inputs;
  std::size_t pooled = 0;
  for (std::size_t f = 0; f < args.positionals().size(); ++f) {
    const std::string& path = args.positionals()[f];
    const RunResults shard = read_results_file(path);
    if (!shard.has_kgate_block)
      throw ResultsError(path + ": $.context.kgate: required field is missing (merge takes kgate results, not plain Google Benchmark JSON)");
    if (f == 0) {
      merged.context = shard.context;
    } else if (shard.context.gpu_name != merged.context.gpu_name) {
      throw ResultsError(path + ": $.context.kgate.gpu.name: ran on " + shard.context.gpu_name + ", but " +
                         args.positionals().front() + " on " + merged.context.gpu_name + " (shards of one run share a GPU model)");
    } else if (shard.context.suite != merged.context.suite) {
      throw ResultsError(path + ": $.context.kgate.suite: suite \"" + shard.context.suite + "\", but " + args.positionals().front() +
                         " is suite \"" + merged.context.suite + "\"");
    }
    inputs += (inputs.empty() ? "" : " ") + path;
    for (std::size_t i = 0; i < shard.benchmarks.size(); ++i) {
      const BenchmarkRecord& r = shard.benchmarks[i];
      const std::string source_key = kSourcePrefix + r.name;
      const auto it = index.find(r.name);
      if (it == index.end()) {
        index[r.name] = merged.benchmarks.size();
        merged.benchmarks.push_back(r);
        merged.context.extra[source_key] = path;
        continue;
      }
      BenchmarkRecord& into = merged.benchmarks[it->second];
      if (!same_benchmark(into, r))
        throw ResultsError(path + ": $.benchmarks[" + std::to_string(i) + "]: duplicate benchmark \"" + r.name + "\", also in " +
                           merged.context.extra[source_key] + ", and not a repetition (both must have succeeded, with the same "
                           "family, variant, shape and headline mode)");
      pool(into.cold, r.cold);
      pool(into.hot, r.hot);
      place_record_on_roofline(into, merged.context.calibration);  // the pooled median moves the derived figures
      merged.context.extra[source_key] += " " + path;
      ++pooled;
    }
  }
  merged.context.extra["merged_from"] = inputs;
  write_results_file(*output, to_json(merged));
  io.out << "merged " << args.positionals().size() << " file(s) into " << *output << ": " << merged.benchmarks.size()
         << " benchmarks" << (pooled ? " (" + std::to_string(pooled) + " repetition(s) pooled)" : "") << "\n";
  return kExitOk;
}

}  // namespace kgate::cli
