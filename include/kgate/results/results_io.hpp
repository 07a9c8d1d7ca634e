#pragma once
// The JSON form of RunResults (docs/results-format.md): valid Google Benchmark JSON, so that
// Google Benchmark's tools/compare.py reads it, with kgate's full record in a `kgate` object in the
// context and in each benchmark. Reading also accepts plain Google Benchmark JSON from any binary,
// and nvbench's --json output (nvbench_results.hpp).
// Every validation error is one line naming the file and the JSON path of the offending value.
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "kgate/results/file_io.hpp"
#include "kgate/results/json_file.hpp"
#include "kgate/results/results.hpp"

namespace kgate {

// A results file that cannot be read or does not hold valid results. what() is one line:
// "<file>: <JSON path>: <problem>", e.g. "run.json: $.benchmarks[3].real_time: ...".
class ResultsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A complete kgate results document (Google Benchmark fields + kgate blocks).
nlohmann::json to_json(const RunResults& results);

// Adds `context.kgate` and each benchmark's `kgate` block to a document Google Benchmark wrote
// (--benchmark_out), matched by name; Google Benchmark's own fields stay as they are. A record
// with no Google Benchmark entry (a variant that failed before it ran) is appended as a full
// entry, flagged as Google Benchmark flags its errors (error_occurred, error_message).
void attach_kgate_blocks(nlohmann::json& gbench_doc, const RunResults& results);

// Whether a run may hold no benchmark. Every input a person gives must hold one; a run handed from
// one timing process to the next (timing_process.hpp) and a claiming shard's results may not: a
// shard of `kgate shard-run` may claim none of a small suite, and take nothing from the others.
enum class EmptyRun { refused, allowed };

// `source` names the input in error messages (normally the file's path).
RunResults parse_results(const nlohmann::json& doc, const std::string& source, EmptyRun empty = EmptyRun::refused);
// Reads the file with read_json_file (json_file.hpp): bounded, gzipped or not.
RunResults read_results_file(const std::string& path);
RunResults read_results_file_may_be_empty(const std::string& path);  // EmptyRun::allowed

// Writes with write_file_atomically (file_io.hpp): a reader never sees a half-written file.
// Throws ResultsError when the directory cannot be written.
void write_results_file(const std::string& path, const nlohmann::json& doc);

// One kernel record as the results file holds it (a benchmark's "kernels" entries).
nlohmann::json kernel_to_json(const KernelRecord& kernel);

}  // namespace kgate
