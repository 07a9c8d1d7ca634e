// kgate bisect: the first commit of a slowdown between a good and a bad commit, each commit
// built once in a worktree of its own by the user's build command and neighbours in the search
// measured by kgate ab on this GPU (commit_comparisons.hpp). The search and its description are
// the library's (include/kgate/history/bisect.hpp); this file parses the flags and tells the outcome.
#include <chrono>
#include <filesystem>

#include "args.hpp"
#include "commands.hpp"
#include "commit_comparisons.hpp"
#include "git_checkout.hpp"
#include "kgate/base/escape.hpp"
#include "kgate/history/bisect.hpp"
#include "process.hpp"

namespace kgate::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage = R"(usage: kgate bisect --good COMMIT --bad COMMIT --filter RE --build-cmd CMD --bench PATH [options]
                    [-- BENCH_FLAGS...]

Finds the commit that slowed the benchmarks matching RE down, on this GPU, in any git
repository. The commits from GOOD to BAD (first-parent history) are searched by halving: each
commit the search needs is checked out in a git worktree of its own, built there by CMD and
kept, so a second bisect reuses the builds; the middle commit is measured against both ends of
the range with kgate ab. The benchmarks followed are those kgate ab finds slower from GOOD to
BAD. It names the first commit whose slowdown holds, and says when the range is not monotonic
(a slowdown that came and went, a speedup on the way) or the slowdown came in steps.

options:
  --good COMMIT         a commit without the slowdown
  --bad COMMIT          a later commit with it (GOOD must be its ancestor)
  --filter RE           the benchmarks to measure (Google Benchmark's regular expression)
  --build-cmd CMD       the command that builds the benchmark binary, run with sh -c in each
                        commit's worktree, a clean checkout: it configures as well as builds, and
                        fetches git submodules if the build needs them, e.g.
                        'cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build'
  --bench PATH          the benchmark binary CMD makes, relative to the worktree
                        (e.g. build/mykernels_bench)
  --work-dir DIR        each commit's worktree and build (DIR/commit-<id>, kept; its build's log
                        DIR/commit-<id>.log) and kgate ab's results (DIR/ab/<base>-<head>.json,
                        reused) (default: .kgate-bisect)
  --source DIR          the git checkout whose history is searched
                        (default: the one the current directory is in)
  --rounds N            kgate ab's rounds per comparison (default 5)
  --seed N              kgate ab's seed (default 1)
  --process-timeout S   the longest one benchmark process may run, in seconds (kgate ab's
                        option; default 1800): then it is killed and kgate bisect exits 2
  --thresholds FILE     per-family and per-benchmark thresholds
                        (default: baselines/thresholds.json of this checkout when it exists)
  -- BENCH_FLAGS...     flags for the benchmark binary, passed on by kgate ab
  -h, --help            this text

exit status: 0 the first bad commit named (found, or the first of several steps), 1 no slowdown
from GOOD to BAD, a range that is not monotonic, or a slowdown that shows between no two
neighbours, 2 bad input or usage, or a build that failed
)";

}  // namespace

int run_bisect(const Arguments& arguments, Io& io) {
  const auto parsed = parse_or_help(arguments,
                                    {.with_value = {"--good", "--bad", "--filter", "--build-cmd", "--bench", "--work-dir", "--source",
                                                    "--rounds", "--seed", "--thresholds", "--process-timeout"}},
                                    kUsage, io.out);
  if (!parsed) return kExitOk;
  const Args& args = *parsed;
  const std::vector<std::string> bench_flags = args.after_separator("flags for the benchmark binary");
  const auto good = args.value("--good"), bad = args.value("--bad"), filter = args.value("--filter");
  if (!good || !bad || !filter) throw UsageError("give --good COMMIT, --bad COMMIT and --filter RE");
  const auto build_command = args.value("--build-cmd"), bench = args.value("--bench");
  if (!build_command || !bench)
    throw UsageError("give --build-cmd CMD and --bench PATH: how each commit builds its benchmark binary, and where the binary is");
  if (fs::path(*bench).is_absolute()) throw UsageError("--bench " + *bench + ": give the path relative to the worktree");
  const int rounds = static_cast<int>(args.number("--rounds", 5, 1, 1000));
  const int seed = static_cast<int>(args.number("--seed", 1, 0, 1e9));
  const auto started = std::chrono::steady_clock::now();

  const fs::path work = fs::absolute(args.value("--work-dir").value_or(".kgate-bisect"));
  const GitCheckout checkout(args.value("--source").value_or(fs::current_path().string()), work);
  const std::vector<std::string> commits = first_parent_range(checkout, *good, *bad);
  std::vector<std::string> labels;
  for (const std::string& c : commits) labels.push_back(c.substr(0, 10));
  io.out << "kgate bisect: " << commits.size() << " commits from " << labels.front() << " (good) to " << labels.back()
         << " (bad), benchmarks matching '" << *filter << "'\n";
  const std::string thresholds = args.value("--thresholds").value_or((checkout.root() / "baselines" / "thresholds.json").string());
  CommitComparisons comparisons(checkout, commits,
                                {.build = {*build_command, *bench},
                                 .work = work,
                                 .filter = *filter,
                                 .rounds = rounds,
                                 .seed = seed,
                                 .thresholds = thresholds,
                                 .process_timeout = args.value("--process-timeout"),
                                 .bench_flags = bench_flags},
                                io);

  const BisectResult result = bisect_commits(labels, std::ref(comparisons));
  io.out << describe_search(result, labels);
  const std::string summary = std::to_string(result.probes.size()) + " comparisons, " + std::to_string(comparisons.builds()) + " builds, " +
                              seconds_since(started) + " in all";
  if (result.outcome == BisectResult::Outcome::no_slowdown) {
    io.out << "kgate bisect: no benchmark matching '" << *filter << "' is slower from " << labels.front() << " to " << labels.back()
           << "; nothing to bisect (" << summary << ")\n";
    return kExitGate;
  }
  if (result.outcome == BisectResult::Outcome::not_localized) {
    io.out << "kgate bisect: the slowdown lies between " << labels[result.last_good] << " and " << labels[result.first_bad]
           << " but shows between no two neighbours (" << summary << ")\n";
    return kExitGate;
  }
  const std::string first_bad = checkout.git({"log", "-1", "--format=%H %s", commits[result.first_bad]});
  io.out << "kgate bisect: first bad commit " << terminal_text(first_bad) << "\n  last good " << labels[result.last_good] << "; "
         << std::string(to_string(result.outcome)) << "; " << summary << "\n";
  return result.outcome == BisectResult::Outcome::not_monotonic ? kExitGate : kExitOk;
}

}  // namespace kgate::cli
