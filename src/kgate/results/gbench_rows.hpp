#pragma once
// Plain Google Benchmark JSON, rows without a kgate block, read into kgate's run model (private to
// the results module: parse_results hands such rows here; docs/results-format.md, "Reading plain
// Google Benchmark JSON").
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "json_node.hpp"
#include "kgate/results/results.hpp"

namespace kgate::gbench {

// The suite of a plain Google Benchmark file, which names none: a fixed name rather than the
// executable's, so that renaming the binary does not orphan its baseline or its history.
inline constexpr const char* kSuite = "gbench";

// Google Benchmark appends its run options to a benchmark's name (UseManualTime -> "/manual_time",
// Iterations(n) -> "/iterations:n", ...); kgate's own name has none of them.
std::string without_suffixes(std::string name);

// An aggregate row (mean, median, stddev, ... of the repetitions) is no sample. Throws on an
// unknown run_type.
bool is_aggregate(const json_node::Node& entry);

// What Google Benchmark's context says about the run: its date (as ISO 8601 UTC) and host. It
// names no GPU and no commit. `context` is absent when the file has none.
void read_context(const std::optional<json_node::Node>& context, RunContext& out);

// The iteration rows of each run name, gathered in file order: its repetitions, each row's
// real_time one sample.
class Runs {
 public:
  // One iteration row. Throws ResultsError on a name that repeats without being a repetition.
  void add(const json_node::Node& entry);
  // One record per run name, in file order, except those `known` names (a kgate block holds them).
  std::vector<BenchmarkRecord> records(const std::function<bool(const std::string&)>& known) const;

 private:
  struct Run {
    std::string name;
    std::vector<double> samples_s;
    std::set<long long> repetition_indices;
    int rows = 0;
    std::string error;
    bool failed = false;
  };
  static BenchmarkRecord record(const Run& run);
  std::map<std::string, Run> runs_;
  std::vector<std::string> order_;
};

}  // namespace kgate::gbench
