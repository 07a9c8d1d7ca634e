#pragma once
// The subcommands behind kgate_main. Each takes the arguments after its own name, writes its
// output to `out`, and returns the exit status; bad input is thrown (UsageError, ResultsError)
// and turned into exit status 2 by kgate_main.
#include <ostream>
#include <string>
#include <vector>

#include "args.hpp"
#include "kgate/results/merge.hpp"

namespace kgate::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitGate = 1;   // regression, failed variant, refused baseline update
inline constexpr int kExitUsage = 2;  // bad input or usage

struct Io {
  std::ostream& out;
  std::ostream& err;
  bool colour = false;  // stdout is a terminal and NO_COLOR is unset
};

using Arguments = std::vector<std::string>;

int run_compare(const Arguments& args, Io& io);
int run_baseline(const Arguments& args, Io& io);  // "update" and "show"
int run_merge(const Arguments& args, Io& io);
void write_merged(const MergedRun& merged, std::size_t inputs, const std::string& output, Io& io);  // and says so, as kgate merge does
int run_job_time(const Arguments& args, Io& io);   // records a job's wall time by phase in its run
int run_peers(const Arguments& args, Io& io);      // "record" and "reuse": the stored peers of a GPU
int run_ab(const Arguments& args, Io& io);         // runs two builds' benchmark binaries; gates like compare
OptionSpec ab_option_spec();                       // kgate ab's options, which kgate pr-gate passes on
int run_report(const Arguments& args, Io& io);     // writes files; never gates
int run_story(const Arguments& args, Io& io);      // may run kgate_bench; writes files
int run_history(const Arguments& args, Io& io);    // "add", "show", "changes"; changes gates on a new slowdown
int run_bisect(const Arguments& args, Io& io);     // builds commits and runs kgate ab between them
int run_pr_gate(const Arguments& args, Io& io);    // builds base and head when asked, then kgate ab and kgate report
int run_shard_run(const Arguments& args, Io& io);  // the suite split over this machine's GPUs, merged
int run_nightly(const Arguments& args, Io& io);    // merges shards, compares, reports; appends to the history

}  // namespace kgate::cli
