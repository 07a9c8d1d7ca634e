#include "kgate/results/merge.hpp"

#include <map>
#include <set>
#include <stdexcept>

#include "kgate/base/text.hpp"
#include "kgate/results/repetitions.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/results/roofline.hpp"
#include "kgate/results/shard.hpp"

namespace kgate {
namespace {

constexpr const char* kSourcePrefix = "source:";

// Whether an input measured the GPU's ceilings (a peers file, or a shard that left them to the
// first shard done, did not).
bool has_ceilings(const RunContext& c) { return c.calibration.copy_bytes_per_s > 0; }

// Entries of context.kgate.extra that describe one process of the run (its shard, its GPU), as
// its wall time per phase (wall_s) does: true of one shard, not of the shards merged, so they are
// dropped then; each benchmark's provenance keeps its shard and GPU (record_origin).
bool per_process_key(const std::string& key) { return key == "shard" || key == "shard_durations" || key == "cuda_visible_devices"; }

std::string extra_value(const RunContext& c, const std::string& key) {
  const auto it = c.extra.find(key);
  return it == c.extra.end() ? "" : it->second;
}

// Which GPU (and host, and shard) measured a shard's benchmark, in its provenance: merged shards
// come from several processes and machines, and a regression is read against the GPU that showed
// it. Pooled repetitions from several shards list each value once, space-separated.
void record_origin(BenchmarkRecord& r, const RunContext& c) {
  const std::string visible = extra_value(c, "cuda_visible_devices");
  const bool one_index = !visible.empty() && visible.find_first_not_of("0123456789") == std::string::npos;
  const std::pair<const char*, std::string> origin[] = {{"gpu_name", c.gpu_name},
                                                        {"gpu_uuid", c.gpu_uuid},
                                                        {"gpu_index", one_index ? visible : ""},
                                                        {"host", c.host},
                                                        {"shard", extra_value(c, "shard")}};
  for (const auto& [key, value] : origin) {
    if (value.empty()) continue;
    std::string& entry = r.provenance[key];
    if (entry.empty()) entry = value;
    else if (key != std::string("gpu_name") && (" " + entry + " ").find(" " + value + " ") == std::string::npos) entry += " " + value;
  }
}

// Shards of an i/n split ("shard" in extra, written by kgate_bench --kgate_shard) must all be
// there, or the merged file silently lacks benchmarks, which the gate reports as `missing`
// without failing.
void check_shards_complete(const std::map<std::string, std::string>& shard_of_input) {
  if (shard_of_input.empty()) return;
  int count = -1;
  std::set<int> seen;
  for (const auto& [path, text] : shard_of_input) {
    ShardSpec spec;
    try {
      spec = parse_shard(text);
    } catch (const std::invalid_argument& e) {
      throw ResultsError(path + ": $.context.kgate.extra.shard: " + e.what());
    }
    if (count >= 0 && spec.count != count)
      throw ResultsError(path + ": $.context.kgate.extra.shard: shard " + text + ", but " + shard_of_input.begin()->first + " is shard " +
                         shard_of_input.begin()->second + " (shards of one run share their count)");
    count = spec.count;
    seen.insert(spec.index);
  }
  std::string missing;
  for (int i = 0; i < count; ++i)
    if (!seen.contains(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(count);
  if (!missing.empty())
    throw ResultsError("shard(s) " + missing + " missing: the merged run would lack their benchmarks (--partial merges the rest)");
}

// Adds the benchmarks of input `path` to the merged run: each new one adopted (placed on the run's
// ceilings when its input has none), a repetition pooled, a skip never in the way of a record.
void add_benchmarks(const RunResults& shard, const std::string& path, bool is_shard, std::map<std::string, std::size_t>& index,
                    MergedRun& result) {
  RunResults& merged = result.run;
  const bool own_ceilings = has_ceilings(shard.context);
  for (std::size_t i = 0; i < shard.benchmarks.size(); ++i) {
    const BenchmarkRecord& r = shard.benchmarks[i];
    const std::string source_key = kSourcePrefix + r.name;
    const auto it = index.find(r.name);
    // A benchmark skipped by design (a shape this GPU cannot run) in every input but one, or in
    // all of them, is no conflict: a skip adds nothing to another input's record.
    const bool replaces_a_skip = it != index.end() && merged.benchmarks[it->second].status == BenchmarkStatus::skipped &&
                                 r.status != BenchmarkStatus::skipped;
    if (it != index.end() && r.status == BenchmarkStatus::skipped) continue;
    if (it == index.end() || replaces_a_skip) {
      if (it == index.end()) {
        index[r.name] = merged.benchmarks.size();
        merged.benchmarks.push_back(r);
      } else {
        merged.benchmarks[it->second] = r;
      }
      BenchmarkRecord& adopted = merged.benchmarks[index[r.name]];
      if (is_shard) record_origin(adopted, shard.context);
      if (!own_ceilings && r.status == BenchmarkStatus::ok) derive_from_calibration(adopted, merged.context.calibration);
      merged.context.extra[source_key] = path;
      continue;
    }
    BenchmarkRecord& into = merged.benchmarks[it->second];
    if (!is_repetition(into, r))
      throw ResultsError(path + ": $.benchmarks[" + std::to_string(i) + "]: duplicate benchmark \"" + r.name + "\", also in " +
                         merged.context.extra[source_key] +
                         ", and not a repetition (both must have succeeded, with the same "
                         "family, variant, shape and headline mode)");
    pool_repetition(into, r, merged.context.calibration);
    if (is_shard) record_origin(into, shard.context);
    merged.context.extra[source_key] += " " + path;
    ++result.pooled;
  }
}

}  // namespace

MergedRun merge_results(const std::vector<ResultsInput>& inputs, bool partial) {
  if (inputs.empty()) throw std::invalid_argument("merge_results: no inputs");
  MergedRun result;
  RunResults& merged = result.run;
  std::map<std::string, std::size_t> index;           // benchmark name -> position in merged
  std::map<std::string, std::string> shard_of_input;  // input -> "i/n", for the inputs that are shards
  std::string shard_commit, shard_commit_source;
  const ResultsInput& first = inputs.front();
  for (const auto& [path, shard] : inputs) {
    if (!shard.has_kgate_block)
      throw ResultsError(path +
                         ": $.context.kgate: required field is missing (merge takes kgate results, not plain Google Benchmark JSON)");
    if (shard.context.gpu_name != first.results.context.gpu_name)
      throw ResultsError(path + ": $.context.kgate.gpu.name: ran on " + shard.context.gpu_name + ", but " + first.path + " on " +
                         first.results.context.gpu_name + " (shards of one run share a GPU model)");
    if (shard.context.suite != first.results.context.suite)
      throw ResultsError(path + ": $.context.kgate.suite: suite \"" + shard.context.suite + "\", but " + first.path + " is suite \"" +
                         first.results.context.suite + "\"");
  }
  merged.context = first.results.context;
  // Shards that claim their benchmarks as they run measure the run's ceilings once, in the first
  // shard done, which need not be the first input.
  for (const ResultsInput& input : inputs) {
    if (!has_ceilings(input.results.context)) continue;
    merged.context.calibration = input.results.context.calibration;
    break;
  }
  for (const auto& [path, shard] : inputs) {
    const std::string shard_text = extra_value(shard.context, "shard");
    const bool is_shard = !shard_text.empty();
    if (is_shard) {
      // Shards measured at different commits are not one run: their benchmarks would disagree.
      const std::string& commit = shard.context.git_commit;
      if (!commit.empty() && !shard_commit.empty() && commit != shard_commit)
        throw ResultsError(path + ": $.context.kgate.provenance.git_commit: shard of commit " + commit + ", but " + shard_commit_source +
                           " is of commit " + shard_commit + " (shards of one run are built from one commit)");
      if (shard_commit.empty() && !commit.empty()) {
        shard_commit = commit;
        shard_commit_source = path;
      }
      shard_of_input[path] = shard_text;
    }
    for (const auto& [key, value] : shard.context.extra)
      if (!key.starts_with(kSourcePrefix) && key != "merged_from") merged.context.extra.try_emplace(key, value);
    for (const auto& [phase, seconds] : shard.context.wall_s) merged.context.wall_s.try_emplace(phase, seconds);
    add_benchmarks(shard, path, is_shard, index, result);
  }
  if (!partial) check_shards_complete(shard_of_input);
  if (!shard_of_input.empty()) {
    std::erase_if(merged.context.extra, [](const auto& entry) { return per_process_key(entry.first); });
    merged.context.wall_s.clear();
    merged.context.job_s.clear();  // one shard's job, not the merged run's
  }
  std::vector<std::string> paths;
  for (const ResultsInput& input : inputs) paths.push_back(input.path);
  merged.context.extra["merged_from"] = join(paths, " ");
  return result;
}

MergedRun merge_results_files(const std::vector<std::string>& paths, bool partial) {
  if (paths.empty()) throw std::invalid_argument("merge_results_files: no input files");
  std::vector<ResultsInput> inputs;
  // A claiming shard may have measured nothing of a small suite; the merged run must hold something.
  for (const std::string& path : paths) inputs.push_back({path, read_results_file_may_be_empty(path)});
  MergedRun merged = merge_results(inputs, partial);
  if (merged.run.benchmarks.empty()) throw ResultsError(join(paths, ", ") + ": no benchmarks in any input");
  return merged;
}

}  // namespace kgate
