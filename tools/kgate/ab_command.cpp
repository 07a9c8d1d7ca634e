// kgate ab: the benchmark binaries of two builds on one GPU in alternating rounds, judged by the
// comparator on the pooled samples. This file runs the processes; the statistics are the
// library's (include/kgate/gate/ab.hpp).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "comparator_options.hpp"
#include "kgate/base/display_path.hpp"
#include "kgate/base/escape.hpp"
#include "kgate/gate/ab.hpp"
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

struct Side {
  const char* label;  // "base" or "head"
  std::string binary;
};

// The binary's benchmarks, listed with the flags its rounds get (some, like --kgate_workloads,
// change the list).
std::vector<std::string> list_benchmarks(const Side& side, const std::optional<std::string>& filter,
                                         const std::vector<std::string>& bench_flags, const WorkDir& work, const ProcessSetup& limited) {
  std::vector<std::string> argv = {side.binary, "--benchmark_list_tests=true"};
  if (filter) argv.push_back("--benchmark_filter=" + *filter);
  argv.insert(argv.end(), bench_flags.begin(), bench_flags.end());
  const std::string out = work.file(std::string(side.label) + "-list.txt"), log = work.file(std::string(side.label) + "-list.log");
  if (const int status = run_process(argv, out, log, limited); status != 0)
    throw ResultsError(side.binary + ": listing its benchmarks failed with exit status " + std::to_string(status) + ":\n" +
                       last_lines(log, 10));
  std::vector<std::string> names;
  std::istringstream lines(read_text(out));
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) names.push_back(line);
  return names;
}

// Whether the binary takes --kgate_processes (builds before it always timed in one process): a
// listing that matches nothing costs no GPU time.
bool takes_processes_flag(const Side& side, const WorkDir& work, const ProcessSetup& limited) {
  const std::string log = work.file(std::string(side.label) + "-flags.log");
  return run_process({side.binary, "--benchmark_list_tests=true", "--benchmark_filter=^$", "--kgate_processes=1"}, log, log, limited) == 0;
}

// A Google Benchmark filter that matches exactly these names (POSIX extended syntax, which is
// what Google Benchmark's std::regex uses).
std::string exact_filter(const std::vector<std::string>& names) {
  std::string filter = "^(";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) filter += '|';
    for (const char c : names[i]) {
      if (std::strchr(".[]{}()\\*+?^$|", c)) filter += '\\';
      filter += c;
    }
  }
  return filter + ")$";
}

std::string list_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += "  " + terminal_text(n) + "\n";
  return text;
}

}  // namespace

OptionSpec ab_option_spec() {
  OptionSpec spec{.with_value = comparator_value_options(), .flags = comparator_flags(), .aliases = {{"--benchmark_filter", "--filter"}}};
  spec.flags.insert("--common-only");
  spec.with_value.insert({"--base", "--head", "--rounds", "--seed", "--filter", "--work-dir", "--process-timeout"});
  return spec;
}

int run_ab(const Arguments& arguments, Io& io) {
  const Args args(arguments, ab_option_spec());
  if (args.help()) {
    io.out << kUsage << comparator_options_usage() << kTail;
    return kExitOk;
  }
  const std::vector<std::string> bench_flags = args.after_separator("flags for the benchmark binaries");
  const auto base_binary = args.value("--base"), head_binary = args.value("--head");
  if (!base_binary || !head_binary) throw UsageError("give both --base BASE_BENCH and --head HEAD_BENCH");
  const int rounds = static_cast<int>(args.number("--rounds", 5, 1, 1000));
  if (rounds != args.number("--rounds", 5, 1, 1000)) throw UsageError("--rounds: expected a whole number");
  const double seed_value = args.number("--seed", 1, 0, 9007199254740992.0);
  if (seed_value != std::floor(seed_value)) throw UsageError("--seed: expected a whole number");
  const auto seed = static_cast<std::uint64_t>(seed_value);
  const double process_timeout_s = args.number("--process-timeout", kDefaultProcessTimeoutS, 1, 604800);
  const ProcessSetup limited{.directory = "", .environment = {}, .time_limit = std::chrono::duration<double>(process_timeout_s)};
  CompareOptions options = comparator_options(args, "baselines/thresholds.json");
  // Both builds run on one GPU in alternating rounds, so the gate can be finer than the nightly
  // comparison with a stored baseline: kAbDefaultThreshold unless --threshold says otherwise (the
  // file's per-family and per-benchmark entries still apply).
  if (!args.value("--threshold")) options.thresholds.default_fraction = kAbDefaultThreshold;
  const Side base{"base", *base_binary}, head{"head", *head_binary};
  const WorkDir work(args.value("--work-dir"));

  // Both builds must measure the same benchmarks: a benchmark in one list only would show up as
  // new or missing, which does not fail the gate and hides what was not compared.
  const auto filter = args.value("--filter");
  std::vector<std::string> base_list = list_benchmarks(base, filter, bench_flags, work, limited);  // base first, then head
  const ListDifference lists = diff_benchmark_lists(std::move(base_list), list_benchmarks(head, filter, bench_flags, work, limited));
  std::optional<std::string> run_filter = filter;
  if (!lists.same()) {
    const std::string differences = (lists.base_only.empty() ? "" : "only in base:\n" + list_names(lists.base_only)) +
                                    (lists.head_only.empty() ? "" : "only in head:\n" + list_names(lists.head_only));
    if (!args.flag("--common-only"))
      throw UsageError("the builds' benchmark lists differ (--common-only compares the " + std::to_string(lists.common.size()) +
                       " they share):\n" + differences);
    io.err << "kgate ab: comparing the " << lists.common.size() << " benchmarks both builds have; not compared:\n" << differences;
    run_filter = exact_filter(lists.common);
  }
  if (lists.common.empty()) throw UsageError("no benchmark to compare" + (filter ? " (the filter '" + *filter + "' matches none)" : std::string()));

  const bool base_takes_processes = takes_processes_flag(base, work, limited);
  const bool head_takes_processes = takes_processes_flag(head, work, limited);
  const std::vector<bool> head_first = head_first_schedule(rounds, seed);
  const int max_samples = std::max(100, (1000 + rounds - 1) / rounds);
  std::vector<RunResults> base_rounds, head_rounds;
  std::string order;
  for (int round = 1; round <= rounds; ++round) {
    const bool head_goes_first = head_first[static_cast<std::size_t>(round - 1)];
    order += std::string(order.empty() ? "" : " ") + (head_goes_first ? "HB" : "BH");
    for (const Side* side : head_goes_first ? std::vector{&head, &base} : std::vector{&base, &head}) {
      const std::string stem = "round-" + std::to_string(round) + "-" + side->label;
      const std::string out = work.file(stem + ".json"), log = work.file(stem + ".log");
      std::vector<std::string> argv = {side->binary,
                                       "--kgate_out=" + out,
                                       "--kgate_modes=headline",
                                       "--kgate_counters=off",
                                       "--kgate_min_time=0.05",
                                       "--kgate_max_time=1",
                                       "--kgate_max_samples=" + std::to_string(max_samples)};
      if (side == &base ? base_takes_processes : head_takes_processes) argv.push_back("--kgate_processes=1");
      if (round > 1) argv.push_back("--kgate_check=off");  // checked once; a wrong result fails the benchmark
      if (run_filter) argv.push_back("--benchmark_filter=" + *run_filter);
      argv.insert(argv.end(), bench_flags.begin(), bench_flags.end());
      const auto started = std::chrono::steady_clock::now();
      const auto round_failed = [&](const std::string& what) {
        return ResultsError(side->binary + ": round " + std::to_string(round) + " " + what + "; the end of its log" +
                            (work.kept() ? " (" + log + ")" : "") + ":\n" + last_lines(log, 12));
      };
      int status = 0;
      try {
        status = run_process(argv, log, log, limited);
      } catch (const ProcessTimeout& e) {
        throw round_failed(std::string("ran past --process-timeout (") + e.what() + ")");
      }
      // kgate_bench exits 1 when a benchmark failed: that is a result (verdict failed), not an error.
      if ((status != 0 && status != 1) || !fs::exists(out))
        throw round_failed("exited with status " + std::to_string(status) + (fs::exists(out) ? "" : " and wrote no results"));
      (side == &base ? base_rounds : head_rounds).push_back(read_results_file(out));
      io.err << "kgate ab: round " << round << "/" << rounds << ": " << side->label << " "
             << static_cast<int>(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() + 0.5) << " s\n";
    }
  }

  ComparisonReport report =
      compare_rounds(base_rounds, head_rounds, "base " + display_path(base.binary), "head " + display_path(head.binary), options);
  report.title = "kgate ab";
  const RunContext& context = base_rounds.front().context;
  report.notices.insert(report.notices.begin(),
                        "A/B on one " + context.gpu_name + (context.gpu_uuid.empty() ? "" : " (" + context.gpu_uuid + ")") + ": " +
                            std::to_string(rounds) + " rounds, order " + order + " (B base, H head; seed " + std::to_string(seed) +
                            "); each side's samples pooled over the rounds");
  for (const auto& [names, where] : {std::pair{&lists.head_only, "only in head (new)"}, std::pair{&lists.base_only, "only in base (removed)"}})
    if (!names->empty()) {
      std::string listed;
      for (std::size_t i = 0; i < names->size() && i < 5; ++i) listed += (i ? ", " : "") + (*names)[i];
      report.notices.push_back(std::to_string(names->size()) + " benchmark(s) not compared, " + where + ": " + listed +
                               (names->size() > 5 ? ", ..." : ""));
    }
  if (args.value("--work-dir")) {
    std::vector<std::string> base_sources, head_sources;
    for (int round = 1; round <= rounds; ++round) {
      base_sources.push_back(work.file("round-" + std::to_string(round) + "-base.json"));
      head_sources.push_back(work.file("round-" + std::to_string(round) + "-head.json"));
    }
    write_results_file(work.file("base.json"), to_json(pool_rounds(base_rounds, base_sources)));
    write_results_file(work.file("head.json"), to_json(pool_rounds(head_rounds, head_sources)));
  }
  write_comparison_files(args, report);
  print_comparison(args, report, io);
  return report.regression() ? kExitGate : kExitOk;
}

}  // namespace kgate::cli
