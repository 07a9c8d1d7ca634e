#pragma once
// kgate_bench's own flags. They follow Google Benchmark's form (--kgate_name=value) and are
// removed from argv before Google Benchmark parses the rest, so its flags keep working unchanged.
// What to measure and how goes to SuiteOptions (the suite module's, which every front door
// fills in); where the results go and how processes hand over stays here.
#include <string>

#include "kgate/results/results.hpp"
#include "kgate/suite/options.hpp"

namespace kgate::bench {

struct BenchFlags {
  SuiteOptions suite;
  std::string out;        // --kgate_out: the complete results JSON
  std::string out_dir;    // --kgate_out_dir: the same, named <date>-<gpu>.json in this folder
  std::string resume;     // --kgate_resume=FILE (internal: the results the process before handed over)
  int handover_fd = -1;   // --kgate_handover_fd=N (internal: the pipe on which the process before says go)
  std::string list_json;  // --kgate_list_json=FILE|-: write the registry listing and exit
  bool help = false;
};

// Parses and removes the --kgate_* flags (and --help, which is left for Google Benchmark too).
// Throws std::invalid_argument naming the flag on a bad value or an unknown --kgate_ flag.
BenchFlags parse_bench_flags(int& argc, char** argv);
std::string bench_usage();

// The file a run's results go to: --kgate_out, else a file named for the run (run_file_name) in
// --kgate_out_dir, which is created; empty when neither was given.
std::string results_path(const BenchFlags& flags, const RunContext& context);

}  // namespace kgate::bench
