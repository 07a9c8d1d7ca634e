#pragma once
// Checked-in baselines: one kgate results file per GPU model and suite,
// <baseline dir>/<GPU slug>/<suite>.json, each entry carrying the provenance of the run it came
// from (BenchmarkRecord::provenance).
#include <optional>
#include <string>

#include "kgate/results/results.hpp"

namespace kgate::cli {

// Throws UsageError unless `suite` can name a baseline file (letters, digits, '-', '_', '.'):
// what --suite gives (compare, baseline update, report, history add).
void check_suite_name(const std::string& suite);

// The baseline file a run is compared with: dir/<gpu_slug(run's GPU)>/<suite>.json, the suite
// being `suite` when given, else the run's own. Throws ResultsError when the run has no kgate
// block (plain Google Benchmark JSON does not say which GPU it ran on) and UsageError on a suite
// name that is not a plain file name.
std::string baseline_file_for(const std::string& dir, const RunResults& run, const std::string& run_source,
                              const std::optional<std::string>& suite);

// Creates the folder a baseline file goes in (DIR/<GPU slug>/) where missing; throws ResultsError
// naming it when it cannot be made.
void make_baseline_folder(const std::string& file);

}  // namespace kgate::cli
