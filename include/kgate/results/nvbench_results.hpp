#pragma once
// nvbench's `--json` output read as a run, so that `kgate compare`, `kgate report` and `kgate
// baseline update` gate benchmarks written with nvbench (docs/results-format.md, "nvbench files").
// read_results_file and parse_results hand such a document here.
//
// One benchmark per nvbench state, named "<benchmark>/<axis>:<value>/..." in the state's axis
// order (with "/device:<id>" when the benchmark ran on several GPUs). Its cold GPU times are the
// samples when nvbench wrote them (`--jsonbin`: little-endian float32 files beside the JSON file),
// with the median of the per-sample SM clocks as the clock of the cycle check; otherwise the
// state's summaries (median, noise) give one figure per benchmark, and the run says that its
// comparison is time-only and of low confidence.
#include <string>

#include <nlohmann/json.hpp>

#include "kgate/results/results.hpp"

namespace kgate {

// The suite of an nvbench file, which names none: a fixed name, not the executable's, so that
// renaming the binary does not orphan its baseline or its history. Give a suite of several nvbench
// executables each its own name with --suite (compare, baseline update, report, history add).
inline constexpr const char* kNvbenchSuite = "nvbench";

// True for a document nvbench's JSON printer wrote: meta.version.nvbench and benchmarks[].states.
bool is_nvbench_json(const nlohmann::json& doc);

// `path` is the JSON file's (error messages name it, and sample files are found relative to its
// directory, as nvbench records them). Throws ResultsError with the JSON path of a bad value.
RunResults parse_nvbench_results(const nlohmann::json& doc, const std::string& path);

}  // namespace kgate
