// kgate bisect: the first commit of a slowdown between a good and a bad commit, each commit
// built once in a worktree of its own by the user's build command (revision_build.hpp) and
// neighbours in the search measured by kgate ab on this GPU. The search is the library's
// (include/kgate/history/bisect.hpp); this file builds, measures and tells.
#include <chrono>
#include <filesystem>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "git_checkout.hpp"
#include "kgate/base/escape.hpp"
#include "kgate/history/bisect.hpp"
#include "kgate/results/results_io.hpp"
#include "process.hpp"
#include "revision_build.hpp"

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

Verdict verdict_named(const std::string& name) {
  if (const auto verdict = verdict_from_key(name)) return *verdict;
  throw ResultsError("kgate ab wrote an unknown verdict '" + name + "'");
}

}  // namespace

int run_bisect(const Arguments& arguments, Io& io) {
  OptionSpec spec{.with_value = {"--good", "--bad", "--filter", "--build-cmd", "--bench", "--work-dir", "--source", "--rounds", "--seed",
                                 "--thresholds", "--process-timeout"},
                  .flags = {},
                  .aliases = {}};
  const Args args(arguments, spec);
  if (args.help()) {
    io.out << kUsage;
    return kExitOk;
  }
  const std::vector<std::string> bench_flags = args.after_separator("flags for the benchmark binary");
  const auto good_revision = args.value("--good"), bad_revision = args.value("--bad"), filter = args.value("--filter");
  if (!good_revision || !bad_revision || !filter) throw UsageError("give --good COMMIT, --bad COMMIT and --filter RE");
  const auto build_command = args.value("--build-cmd"), bench = args.value("--bench");
  if (!build_command || !bench)
    throw UsageError("give --build-cmd CMD and --bench PATH: how each commit builds its benchmark binary, and where the binary is");
  if (fs::path(*bench).is_absolute()) throw UsageError("--bench " + *bench + ": give the path relative to the worktree");
  const int rounds = static_cast<int>(args.number("--rounds", 5, 1, 1000));
  const int seed = static_cast<int>(args.number("--seed", 1, 0, 1e9));
  const auto started = std::chrono::steady_clock::now();

  const fs::path work = fs::absolute(args.value("--work-dir").value_or(".kgate-bisect"));
  fs::create_directories(work / "ab");
  const GitCheckout checkout(args.value("--source").value_or(fs::current_path().string()), work);
  const std::string good = checkout.commit(*good_revision), bad = checkout.commit(*bad_revision);
  if (checkout.git_status({"merge-base", "--is-ancestor", good, bad}) != 0)
    throw UsageError("--good " + *good_revision + " is not an ancestor of --bad " + *bad_revision);
  std::vector<std::string> commits = {good};
  std::istringstream listed(checkout.git({"rev-list", "--first-parent", "--reverse", "--ancestry-path", good + ".." + bad}));
  for (std::string line; std::getline(listed, line);)
    if (!line.empty()) commits.push_back(line);
  if (commits.size() < 2) throw UsageError("--good and --bad are the same commit");
  std::vector<std::string> labels;
  for (const std::string& c : commits) labels.push_back(c.substr(0, 10));
  io.out << "kgate bisect: " << commits.size() << " commits from " << labels.front() << " (good) to " << labels.back()
         << " (bad), benchmarks matching '" << *filter << "'\n";

  const std::string thresholds = args.value("--thresholds").value_or((checkout.root() / "baselines" / "thresholds.json").string());
  const RevisionBuild build{*build_command, *bench};
  int builds = 0;
  const auto binary_of = [&](std::size_t index) {
    const std::string& commit = commits[index];
    const fs::path worktree = work / ("commit-" + commit.substr(0, 12)), log = worktree.string() + ".log";
    if (const auto finished = finished_build(build, commit, worktree)) return *finished;
    const auto build_started = std::chrono::steady_clock::now();
    io.out << "kgate bisect: building " << labels[index] << " (log: " << log.string() << ") ... " << std::flush;
    const std::string binary = build_revision(checkout, build, commit, worktree, log);
    ++builds;
    io.out << seconds_since(build_started) << "\n";
    return binary;
  };
  const CompareCommits compare = [&](std::size_t base, std::size_t head) {
    const std::string pair = commits[base].substr(0, 12) + "-" + commits[head].substr(0, 12);
    const fs::path json = work / "ab" / (pair + ".json");
    if (!fs::exists(json)) {
      const std::string base_binary = binary_of(base), head_binary = binary_of(head);
      Arguments ab_args = {"--base", base_binary, "--head", head_binary, "--filter", *filter,
                           "--rounds", std::to_string(rounds), "--seed", std::to_string(seed),
                           "--work-dir", (work / "ab" / pair).string(), "--json", json.string() + ".partial"};
      if (fs::exists(thresholds)) ab_args.insert(ab_args.end(), {"--thresholds", thresholds});
      if (const auto timeout = args.value("--process-timeout")) ab_args.insert(ab_args.end(), {"--process-timeout", *timeout});
      if (!bench_flags.empty()) ab_args.push_back("--");
      ab_args.insert(ab_args.end(), bench_flags.begin(), bench_flags.end());
      const auto ab_started = std::chrono::steady_clock::now();
      std::ostringstream table;
      Io ab_io{table, io.err, false};
      run_ab(ab_args, ab_io);
      write_file_atomically((work / "ab" / (pair + ".txt")).string(), table.str());
      fs::rename(json.string() + ".partial", json);
      io.out << "kgate bisect: kgate ab " << labels[base] << " -> " << labels[head] << " " << seconds_since(ab_started) << "\n";
    }
    std::map<std::string, Verdict> verdicts;
    const nlohmann::json report = read_json_file(json.string());
    for (const nlohmann::json& row : report.at("benchmarks"))
      verdicts[row.at("name").get<std::string>()] = verdict_named(row.at("verdict").get<std::string>());
    return verdicts;
  };

  const BisectResult result = bisect_commits(labels, compare);
  for (const BisectProbe& p : result.probes) {
    io.out << "  " << labels[p.base] << " -> " << labels[p.head] << ": " << to_string(p.change);
    const std::vector<std::string>& names = p.change == StepChange::faster ? p.faster : p.slower;
    for (std::size_t i = 0; i < names.size() && i < 3; ++i) io.out << (i ? ", " : " (") << terminal_text(names[i]);
    io.out << (names.empty() ? "" : names.size() > 3 ? ", ...)" : ")") << "\n";
  }
  for (const std::string& note : result.notes) io.out << "note: " << terminal_text(note) << "\n";
  const std::string summary =
      std::to_string(result.probes.size()) + " comparisons, " + std::to_string(builds) + " builds, " + seconds_since(started) + " in all";
  if (result.outcome == BisectResult::Outcome::no_slowdown) {
    io.out << "kgate bisect: no benchmark matching '" << *filter << "' is slower from " << labels.front() << " to " << labels.back()
           << "; nothing to bisect (" << summary << ")\n";
    return kExitGate;
  }
  const std::string first_bad = checkout.git({"log", "-1", "--format=%H %s", commits[result.first_bad]});
  if (result.outcome == BisectResult::Outcome::not_localized) {
    io.out << "kgate bisect: the slowdown lies between " << labels[result.last_good] << " and " << labels[result.first_bad]
           << " but shows between no two neighbours (" << summary << ")\n";
    return kExitGate;
  }
  io.out << "kgate bisect: first bad commit " << terminal_text(first_bad) << "\n  last good " << labels[result.last_good] << "; "
         << std::string(to_string(result.outcome)) << "; " << summary << "\n";
  return result.outcome == BisectResult::Outcome::not_monotonic ? kExitGate : kExitOk;
}

}  // namespace kgate::cli
