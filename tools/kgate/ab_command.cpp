// kgate ab: two builds on one GPU in alternating rounds, each a benchmark binary or a command that
// writes a results file, judged by the comparator on the pooled samples. The procedure and its
// statistics are the library's (include/kgate/gate/ab_rounds.hpp, ab.hpp); this file parses the
// flags and runs the builds as processes, which is the command line's job: the library never
// starts a program.
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

constexpr const char* kUsage = R"(usage: kgate ab (--base BASE_BENCH | --base-cmd CMD) (--head HEAD_BENCH | --head-cmd CMD) [options]
                [-- BENCH_FLAGS...]

Measures two builds of a suite's benchmark binary (kgate_add_suite's <suite>_bench) on this GPU
in the same job: in each of R rounds every selected benchmark runs once per binary, base and
head back to back in an order shuffled per round with the seed, each process in the binary's
usual mode (L2 flushed before every cold sample, samples at a throttled clock dropped). Each
side's rounds are pooled and judged as kgate compare judges a run against its baseline; in
addition a slower or faster verdict must hold in more than half of the rounds, else it is
noisy. Both binaries first list their benchmarks (--benchmark_list_tests, with the filter):
lists that differ are refused unless --common-only.

Either build may be a command instead (--base-cmd, --head-cmd): a Python suite, an nvbench
binary with --json, a script. Each round runs it once with sh -c and, in its environment,
  KGATE_OUT     where to write the round's results (an absolute path): kgate, Google Benchmark
                or nvbench JSON, whatever kgate compare reads
  KGATE_FILTER  which benchmarks to run, as a Google Benchmark filter (empty: all of them)
  KGATE_ROUND   the round, from 1
e.g. --head-cmd 'python3 bench.py --out "$KGATE_OUT"' (in single quotes: the command's shell
expands the variables). A command is not listed: its list is what it wrote in round 1. Of what
it writes, only the benchmarks the filter selects are compared; it samples as it was written
to (BENCH_FLAGS are the binaries').

options:
  --base FILE             the base build's benchmark binary (e.g. the pull request's merge base)
  --base-cmd CMD          the base build as a command that writes KGATE_OUT (instead of --base)
  --head FILE             the head build's benchmark binary
  --head-cmd CMD          the head build as a command that writes KGATE_OUT (instead of --head)
  --rounds N              rounds (default 5)
  --seed N                seed of the order of base and head in each round (default 1)
  --filter RE             only the benchmarks matching RE (Google Benchmark's regular expression;
                          --benchmark_filter is accepted too)
  --common-only           when the lists differ, compare the benchmarks both builds have
  --work-dir DIR          keep each round's results and log, and the pooled base.json and
                          head.json (for kgate report), in DIR (default: a temporary directory,
                          removed afterwards)
  --process-timeout S     the longest one process (a round, a listing) may run, in seconds
                          (default 1800): then it is killed with its process group and
                          kgate ab exits 2 naming it
  --thresholds FILE       per-family and per-benchmark thresholds
                          (default: baselines/thresholds.json when it exists); the default
                          threshold of kgate ab is 1% (--threshold), not the file's default:
                          an A/A of 156 short benchmarks in 5 rounds on an H100 gave no slower or
                          faster verdict at 0.5% or 1%
)";

constexpr const char* kTail = R"(  -- BENCH_FLAGS...       flags for the binaries, after kgate ab's own, which they override:
                          --kgate_modes=headline --kgate_counters=off --kgate_min_time=0.05
                          --kgate_max_time=1 --kgate_max_samples=<1000 / rounds, at least 100>,
                          --kgate_processes=1 (the rounds are the processes; builds older than
                          the flag get none), and --kgate_check=off after the first round
  -h, --help              this text

exit status: 0 no regression, 1 a regression (slower) or a failed variant, 2 bad input or usage
(including a binary or command that could not run: a round's exit status other than 0 or 1, 1
being a failed benchmark, or no results file written)
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

// A build as the user gave it: a benchmark binary (--base, --head) or a command (--base-cmd,
// --head-cmd).
struct Build {
  std::string program;           // the binary's path or the command's text
  std::string command_option{};  // "--base-cmd" or "--head-cmd" for a command; empty for a binary
  bool command() const { return !command_option.empty(); }
  // How an error names it: the binary's path, or the command as given ("--head-cmd 'sh bench.sh'").
  std::string name() const { return command() ? command_line(command_option, {program}) : program; }
};

// The two builds as processes: each listing, probe and round a process of its own, killed at
// --process-timeout, its output and log in the work directory. A command runs with sh -c, told
// where to write and what to run by KGATE_OUT, KGATE_FILTER and KGATE_ROUND.
class BuildProcesses : public AbBuilds {
 public:
  BuildProcesses(Build base, Build head, int rounds, const WorkDir& work, ProcessSetup limited, Io& io)
      : builds_{std::move(base), std::move(head)}, rounds_(rounds), work_(work), limited_(std::move(limited)), io_(io) {}

  bool is_command(AbSide side) const override { return build(side).command(); }

  std::vector<std::string> list(AbSide side, const std::vector<std::string>& flags) override {
    const std::string out = file(side, "list.txt"), log = file(side, "list.log");
    if (const int status = run_process(argv(side, flags), out, log, limited_); status != 0)
      throw ResultsError(build(side).name() + ": listing its benchmarks failed with exit status " + std::to_string(status) + ":\n" +
                         last_lines(log, 10));
    return split(read_text(out), '\n');
  }

  bool accepts(AbSide side, const std::vector<std::string>& flags) override {
    const std::string log = file(side, "flags.log");
    return run_process(argv(side, flags), log, log, limited_) == 0;
  }

  RunResults run_round(AbSide side, int round, const std::vector<std::string>& flags, const std::optional<std::string>& filter) override {
    const std::string stem = round_stem(side, round);
    const std::string out = fs::absolute(work_.file(stem + ".json")).string(), log = work_.file(stem + ".log");
    fs::remove(out);  // a kept --work-dir's file from an earlier comparison is no result of this round
    ProcessSetup setup = limited_;
    std::vector<std::string> run;
    if (is_command(side)) {
      run = {"sh", "-c", build(side).program};
      setup.environment = {"KGATE_OUT=" + out, "KGATE_FILTER=" + filter.value_or(""), "KGATE_ROUND=" + std::to_string(round)};
    } else {
      run = argv(side, {"--kgate_out=" + out});
      run.insert(run.end(), flags.begin(), flags.end());
    }
    const auto started = std::chrono::steady_clock::now();
    const auto round_failed = [&](const std::string& what) {
      return ResultsError(build(side).name() + ": round " + std::to_string(round) + " " + what + "; the end of its log" +
                          (work_.kept() ? " (" + log + ")" : "") + ":\n" + last_lines(log, 12));
    };
    int status = 0;
    try {
      status = run_process(run, log, log, setup);
    } catch (const ProcessTimeout& e) {
      throw round_failed(std::string("ran past --process-timeout (") + e.what() + ")");
    }
    // kgate_bench exits 1 when a benchmark failed: that is a result (verdict failed), not an error.
    // A command's round counts as a binary's does.
    if ((status != 0 && status != 1) || !fs::exists(out))
      throw round_failed("exited with status " + std::to_string(status) +
                         (fs::exists(out)    ? ""
                          : is_command(side) ? " and wrote no results to $KGATE_OUT"
                                             : " and wrote no results"));
    RunResults results;
    try {
      results = read_results_file(out);
    } catch (const ResultsError& e) {
      throw round_failed("exited with status " + std::to_string(status) + ", but wrote no results file kgate reads: " + e.what());
    }
    io_.err << "kgate ab: round " << round << "/" << rounds_ << ": " << to_string(side) << " " << seconds_since(started) << "\n";
    return results;
  }

  void tell(const std::string& text) override { io_.err << "kgate ab: " << text; }

  // Where a round's results go: round-<n>-<side>.json.
  static std::string round_stem(AbSide side, int round) { return "round-" + std::to_string(round) + "-" + to_string(side); }

 private:
  const Build& build(AbSide side) const { return builds_[side == AbSide::base ? 0 : 1]; }
  std::string file(AbSide side, const std::string& name) const { return work_.file(std::string(to_string(side)) + "-" + name); }
  std::vector<std::string> argv(AbSide side, const std::vector<std::string>& flags) const {
    std::vector<std::string> all = {build(side).program};
    all.insert(all.end(), flags.begin(), flags.end());
    return all;
  }

  Build builds_[2];
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
      sources.push_back(work.file(BuildProcesses::round_stem(side, static_cast<int>(round)) + ".json"));
    write_results_file(work.file(std::string(to_string(side)) + ".json"), to_json(pool_rounds(rounds, sources)));
  }
}

// The side's build: exactly one of --base and --base-cmd (--head, --head-cmd).
Build build_of(const Args& args, const std::string& side, const std::string& binary_placeholder) {
  const std::string binary_option = "--" + side, command_option = "--" + side + "-cmd";
  const auto binary = args.value(binary_option), command = args.value(command_option);
  if (binary && command) throw UsageError("give " + binary_option + " or " + command_option + ", not both");
  if (command && command->find_first_not_of(" \t\n") == std::string::npos) throw UsageError(command_option + ": the command is empty");
  if (command) return {.program = *command, .command_option = command_option};
  if (binary) return {.program = *binary};
  throw UsageError("give the " + side + " build: " + binary_option + " " + binary_placeholder + " or " + command_option + " CMD");
}

}  // namespace

OptionSpec ab_option_spec() {
  OptionSpec spec{.with_value = comparator_value_options(), .flags = comparator_flags(), .aliases = {{"--benchmark_filter", "--filter"}}};
  spec.flags.insert("--common-only");
  spec.with_value.insert(
      {"--base", "--base-cmd", "--head", "--head-cmd", "--rounds", "--seed", "--filter", "--work-dir", "--process-timeout"});
  return spec;
}

int run_ab(const Arguments& arguments, Io& io) {
  const auto parsed = parse_or_help(arguments, ab_option_spec(), std::string(kUsage) + comparator_options_usage() + kTail, io.out);
  if (!parsed) return kExitOk;
  const Args& args = *parsed;
  AbPlan plan;
  plan.bench_flags = args.after_separator("flags for the benchmark binaries");
  Build base = build_of(args, "base", "BASE_BENCH"), head = build_of(args, "head", "HEAD_BENCH");
  if (!plan.bench_flags.empty() && base.command() && head.command())
    throw UsageError("the flags after -- are for benchmark binaries (--base, --head); a command carries its own");
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
  // A binary by its file name, a command as written.
  plan.base_name = "base " + (base.command() ? base.program : display_path(base.program));
  plan.head_name = "head " + (head.command() ? head.program : display_path(head.program));

  const WorkDir work(args.value("--work-dir"));
  BuildProcesses builds(std::move(base), std::move(head), plan.rounds, work, limited, io);
  const AbOutcome outcome = refusals_as_usage_errors([&] { return run_ab_rounds(plan, builds); });
  if (work.kept()) write_pooled_rounds(outcome, work);
  write_comparison_files(args, outcome.report);
  print_comparison(args, outcome.report, io);
  return outcome.report.regression() ? kExitGate : kExitOk;
}

}  // namespace kgate::cli
