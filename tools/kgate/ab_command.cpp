// kgate ab: the benchmark binaries of two builds on one GPU in alternating rounds, judged by the
// comparator on the pooled samples. The procedure and its statistics are the library's
// (include/kgate/gate/ab_rounds.hpp, ab.hpp); this file parses the flags and runs the binaries as
// processes, which is the command line's job: the library never starts a program.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "args.hpp"
#include "commands.hpp"
#include "comparator_options.hpp"
#include "kgate/base/display_path.hpp"
#include "kgate/base/text.hpp"
#include "kgate/gate/ab.hpp"
#include "kgate/gate/ab_rounds.hpp"
#include "kgate/results/results_io.hpp"
#include "process.hpp"

namespace kgate::cli {
namespace {

// kgate ab's default threshold, from an A/A on an H100 (docs/compare.md).
constexpr double kAbDefaultThreshold = 0.01;
// The longest one benchmark process may run by default: a whole suite's round (a few minutes on
// an H100 with kgate ab's short sampling) many times over, and still an end to a hung GPU.
constexpr double kDefaultProcessTimeoutS = 1800;

namespace fs = std::filesystem;

constexpr const char* kUsage = R"(usage: kgate ab --base BASE_BENCH --head HEAD_BENCH [options] [-- BENCH_FLAGS...]

Measures two builds of a suite's benchmark binary (kgate_add_suite's <suite>_bench) on this GPU
in the same job: in each of R rounds every selected benchmark runs once per binary, base and
head back to back in an order shuffled per round with the seed, each process in the binary's
usual mode (L2 flushed before every cold sample, samples at a throttled clock dropped). Each
side's rounds are pooled and judged as kgate compare judges a run against its baseline; in
addition a slower or faster verdict must hold in more than half of the rounds, else it is
noisy. Both binaries first list their benchmarks (--benchmark_list_tests, with the filter):
lists that differ are refused unless --common-only.

options:
  --base FILE             the base build's benchmark binary (e.g. the pull request's merge base)
  --head FILE             the head build's benchmark binary
  --rounds N              rounds (default 5)
  --seed N                seed of the order of base and head in each round (default 1)
  --filter RE             only the benchmarks matching RE (Google Benchmark's regular expression;
                          --benchmark_filter is accepted too)
  --common-only           when the lists differ, compare the benchmarks both builds have
  --work-dir DIR          keep each round's results and log, and the pooled base.json and
                          head.json (for kgate report), in DIR (default: a temporary directory,
                          removed afterwards)
  --process-timeout S     the longest one benchmark process (a round, a listing) may run, in
                          seconds (default 1800): then it is killed with its process group and
                          kgate ab exits 2 naming it
  --thresholds FILE       per-family and per-benchmark thresholds
                          (default: baselines/thresholds.json when it exists); the default
                          threshold of kgate ab is 1% (--threshold), not the file's default:
                          an A/A of 156 short benchmarks in 5 rounds on an H100 gave no slower or
                          faster verdict at 0.5% or 1%
)";

constexpr const char* kTail = R"(  -- BENCH_FLAGS...       flags for both binaries, after kgate ab's own, which they override:
                          --kgate_modes=headline --kgate_counters=off --kgate_min_time=0.05
                          --kgate_max_time=1 --kgate_max_samples=<1000 / rounds, at least 100>,
                          --kgate_processes=1 (the rounds are the processes; builds older than
                          the flag get none), and --kgate_check=off after the first round
  -h, --help              this text

exit status: 0 no regression, 1 a regression (slower) or a failed variant, 2 bad input or usage
(including a binary that could not run)
)";

// A directory for the rounds: the one given (kept), or a temporary one removed afterwards.
class WorkDir {
 public:
  explicit WorkDir(const std::optional<std::string>& given) {
    if (given) {
      path_ = *given;
      fs::create_directories(path_);
      return;
    }
    std::string pattern = (fs::temp_directory_path() / "kgate-ab-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw ResultsError(pattern + ": cannot create a temporary directory: " + std::strerror(errno));
    path_ = pattern;
    temporary_ = true;
  }
  ~WorkDir() {
    std::error_code ignored;
    if (temporary_) fs::remove_all(path_, ignored);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  bool kept() const { return !temporary_; }

 private:
  fs::path path_;
  bool temporary_ = false;
};

// The two binaries as processes: each listing, probe and round a process of its own, killed at
// --process-timeout, its output and log in the work directory.
class BinaryProcesses : public AbBinaries {
 public:
  BinaryProcesses(std::string base, std::string head, int rounds, const WorkDir& work, ProcessSetup limited, Io& io)
      : binaries_{std::move(base), std::move(head)}, rounds_(rounds), work_(work), limited_(std::move(limited)), io_(io) {}

  std::vector<std::string> list(AbSide side, const std::vector<std::string>& flags) override {
    const std::string out = file(side, "list.txt"), log = file(side, "list.log");
    if (const int status = run_process(argv(side, flags), out, log, limited_); status != 0)
      throw ResultsError(binary(side) + ": listing its benchmarks failed with exit status " + std::to_string(status) + ":\n" +
                         last_lines(log, 10));
    return split(read_text(out), '\n');
  }

  bool accepts(AbSide side, const std::vector<std::string>& flags) override {
    const std::string log = file(side, "flags.log");
    return run_process(argv(side, flags), log, log, limited_) == 0;
  }

  RunResults run_round(AbSide side, int round, const std::vector<std::string>& flags) override {
    const std::string stem = round_stem(side, round);
    const std::string out = work_.file(stem + ".json"), log = work_.file(stem + ".log");
    std::vector<std::string> round_flags = {"--kgate_out=" + out};
    round_flags.insert(round_flags.end(), flags.begin(), flags.end());
    const auto started = std::chrono::steady_clock::now();
    const auto round_failed = [&](const std::string& what) {
      return ResultsError(binary(side) + ": round " + std::to_string(round) + " " + what + "; the end of its log" +
                          (work_.kept() ? " (" + log + ")" : "") + ":\n" + last_lines(log, 12));
    };
    int status = 0;
    try {
      status = run_process(argv(side, round_flags), log, log, limited_);
    } catch (const ProcessTimeout& e) {
      throw round_failed(std::string("ran past --process-timeout (") + e.what() + ")");
    }
    // kgate_bench exits 1 when a benchmark failed: that is a result (verdict failed), not an error.
    if ((status != 0 && status != 1) || !fs::exists(out))
      throw round_failed("exited with status " + std::to_string(status) + (fs::exists(out) ? "" : " and wrote no results"));
    RunResults results = read_results_file(out);
    io_.err << "kgate ab: round " << round << "/" << rounds_ << ": " << to_string(side) << " " << seconds_since(started) << "\n";
    return results;
  }

  void tell(const std::string& text) override { io_.err << "kgate ab: " << text; }

  // Where a round's results go: round-<n>-<side>.json.
  static std::string round_stem(AbSide side, int round) { return "round-" + std::to_string(round) + "-" + to_string(side); }

 private:
  const std::string& binary(AbSide side) const { return binaries_[side == AbSide::base ? 0 : 1]; }
  std::string file(AbSide side, const std::string& name) const { return work_.file(std::string(to_string(side)) + "-" + name); }
  std::vector<std::string> argv(AbSide side, const std::vector<std::string>& flags) const {
    std::vector<std::string> all = {binary(side)};
    all.insert(all.end(), flags.begin(), flags.end());
    return all;
  }

  std::string binaries_[2];
  int rounds_;
  const WorkDir& work_;
  ProcessSetup limited_;
  Io& io_;
};

// Each side's rounds pooled into one run (base.json, head.json) for kgate report, its rounds'
// files named where they disagree.
void write_pooled_rounds(const AbOutcome& outcome, const WorkDir& work) {
  for (const AbSide side : {AbSide::base, AbSide::head}) {
    const std::vector<RunResults>& rounds = side == AbSide::base ? outcome.base_rounds : outcome.head_rounds;
    std::vector<std::string> sources;
    for (std::size_t round = 1; round <= rounds.size(); ++round)
      sources.push_back(work.file(BinaryProcesses::round_stem(side, static_cast<int>(round)) + ".json"));
    write_results_file(work.file(std::string(to_string(side)) + ".json"), to_json(pool_rounds(rounds, sources)));
  }
}

}  // namespace

OptionSpec ab_option_spec() {
  OptionSpec spec{.with_value = comparator_value_options(), .flags = comparator_flags(), .aliases = {{"--benchmark_filter", "--filter"}}};
  spec.flags.insert("--common-only");
  spec.with_value.insert({"--base", "--head", "--rounds", "--seed", "--filter", "--work-dir", "--process-timeout"});
  return spec;
}

int run_ab(const Arguments& arguments, Io& io) {
  const auto parsed = parse_or_help(arguments, ab_option_spec(), std::string(kUsage) + comparator_options_usage() + kTail, io.out);
  if (!parsed) return kExitOk;
  const Args& args = *parsed;
  AbPlan plan;
  plan.bench_flags = args.after_separator("flags for the benchmark binaries");
  const auto base_binary = args.value("--base"), head_binary = args.value("--head");
  if (!base_binary || !head_binary) throw UsageError("give both --base BASE_BENCH and --head HEAD_BENCH");
  plan.rounds = static_cast<int>(args.number("--rounds", 5, 1, 1000));
  if (plan.rounds != args.number("--rounds", 5, 1, 1000)) throw UsageError("--rounds: expected a whole number");
  const double seed = args.number("--seed", 1, 0, 9007199254740992.0);
  if (seed != std::floor(seed)) throw UsageError("--seed: expected a whole number");
  plan.seed = static_cast<std::uint64_t>(seed);
  const double process_timeout_s = args.number("--process-timeout", kDefaultProcessTimeoutS, 1, 604800);
  const ProcessSetup limited{.directory = "", .environment = {}, .time_limit = std::chrono::duration<double>(process_timeout_s)};
  plan.options = comparator_options(args, "baselines/thresholds.json");
  // Both builds run on one GPU in alternating rounds, so the gate can be finer than the nightly
  // comparison with a stored baseline: kAbDefaultThreshold unless --threshold says otherwise (the
  // file's per-family and per-benchmark entries still apply).
  if (!args.value("--threshold")) plan.options.thresholds.default_fraction = kAbDefaultThreshold;
  plan.filter = args.value("--filter");
  plan.common_only = args.flag("--common-only");
  plan.base_name = "base " + display_path(*base_binary);
  plan.head_name = "head " + display_path(*head_binary);

  const WorkDir work(args.value("--work-dir"));
  BinaryProcesses binaries(*base_binary, *head_binary, plan.rounds, work, limited, io);
  const AbOutcome outcome = refusals_as_usage_errors([&] { return run_ab_rounds(plan, binaries); });
  if (work.kept()) write_pooled_rounds(outcome, work);
  write_comparison_files(args, outcome.report);
  print_comparison(args, outcome.report, io);
  return outcome.report.regression() ? kExitGate : kExitOk;
}

}  // namespace kgate::cli
