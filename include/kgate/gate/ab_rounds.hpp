#pragma once
// `kgate ab` as a procedure (docs/compare.md, "kgate ab"): both builds list their benchmarks, the
// lists are matched, each round runs every selected benchmark once per build in a seeded order
// with kgate ab's sampling flags, and the rounds are judged (ab.hpp). A build is a kgate_bench
// binary or a command that writes a results file (a Python suite, an nvbench binary and a
// conversion); a command cannot list, so its list is what its first round wrote. Running the
// builds is the caller's: the command line runs them as processes (tools/kgate/ab_command.cpp),
// the tests answer from canned runs, so the procedure is tested on the CPU.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kgate/gate/compare.hpp"
#include "kgate/results/results.hpp"

namespace kgate {

enum class AbSide { base, head };
const char* to_string(AbSide side);  // "base", "head"

// What kgate ab needs of the two builds.
class AbBuilds {
 public:
  virtual ~AbBuilds() = default;
  // Whether the side is a command (--base-cmd, --head-cmd) rather than a benchmark binary: it is
  // never listed or probed, and its rounds get no flags, only the filter.
  virtual bool is_command(AbSide side) const = 0;
  // The benchmarks the side's binary lists when run with `flags` (--benchmark_list_tests=true
  // first), one name per line of its output.
  virtual std::vector<std::string> list(AbSide side, const std::vector<std::string>& flags) = 0;
  // Whether the side's binary runs with `flags` and exits 0 (a build older than a flag refuses it).
  virtual bool accepts(AbSide side, const std::vector<std::string>& flags) = 0;
  // The side's results of round `round` (from 1): a binary run with `flags` after its output
  // file's (`filter` among them), a command told `filter` (std::nullopt: every benchmark).
  virtual RunResults run_round(AbSide side, int round, const std::vector<std::string>& flags, const std::optional<std::string>& filter) = 0;
  // A line for whoever waits: which benchmarks are left out.
  virtual void tell(const std::string& line) = 0;
};

struct AbPlan {
  int rounds = 5;
  std::uint64_t seed = 1;                  // of the order of base and head in each round
  std::optional<std::string> filter{};     // Google Benchmark's regular expression; none: every benchmark
  bool common_only = false;                // compare the benchmarks both builds have when the lists differ
  std::vector<std::string> bench_flags{};  // the user's flags for the binaries, after kgate ab's own (a command has its own)
  CompareOptions options{};
  std::string base_name{}, head_name{};  // how the outputs name the builds: "base mykernels_bench"
};

struct AbOutcome {
  ComparisonReport report;                           // titled "kgate ab", its notices saying how it was measured
  std::vector<RunResults> base_rounds, head_rounds;  // each side's rounds, in order
};

// Runs the plan's rounds through `builds` and judges them. Throws std::invalid_argument when the
// builds' lists differ without plan.common_only (naming what only one of them has; after the
// first round where a side is a command) or no benchmark is left to compare, or when the filter is
// not a regular expression and a side is a command; whatever `builds` throws passes through.
// A command's results are narrowed to the benchmarks the filter matches (Google Benchmark's rule),
// so one that runs more than it was asked to still compares what was asked; with
// plan.common_only, every round's results are narrowed to the benchmarks both builds have.
AbOutcome run_ab_rounds(const AbPlan& plan, AbBuilds& builds);

// The flags of one round's run (from 1), before the user's: the headline mode only, no counters,
// short sampling with at most 1000 samples over all rounds (at least 100 a round), one process
// where the binary takes --kgate_processes, the correctness check in the first round only.
std::vector<std::string> round_flags(int round, int rounds, bool takes_processes_flag, const std::optional<std::string>& filter);

// The Google Benchmark filter (--benchmark_filter) that matches exactly these names, the one rule
// for every such filter (kgate ab's common benchmarks, the report's rerun line): '^' + name + '$',
// several names as '^(a|b)$', the characters special to its POSIX extended regular expressions
// (std::regex's or, where that is missing, regcomp's) escaped with a backslash. ']' and '}' are
// ordinary once '[' and '{' are escaped, and libstdc++'s std::regex refuses them escaped.
std::string exact_filter(const std::vector<std::string>& names);

}  // namespace kgate
