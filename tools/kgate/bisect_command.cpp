// kgate bisect: the first commit of a slowdown between a good and a bad commit, each commit
// built once (scripts/build-at.sh) and neighbours in the search measured by kgate ab on this GPU.
// The search is the library's (include/kgate/history/bisect.hpp); this file builds, measures and tells.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "comparator_options.hpp"
#include "kgate/history/bisect.hpp"
#include "kgate/results/results_io.hpp"
#include "process.hpp"

namespace kgate::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage = R"(usage: kgate bisect --good COMMIT --bad COMMIT --filter RE [options] [-- BENCH_FLAGS...]

Finds the commit that slowed the benchmarks matching RE down, on this GPU (docs/history.md).
The commits from GOOD to BAD (first-parent history) are searched by halving: each commit the
search needs is built once with scripts/build-at.sh (kept per commit in the work directory, so a
second bisect reuses the builds) and the middle commit is measured against both ends of the
range with kgate ab. The benchmarks followed are those kgate ab finds slower from GOOD to BAD.
It names the first commit whose slowdown holds, and says when the range is not monotonic (a
slowdown that came and went, a speedup on the way) or the slowdown came in steps.

options:
  --good COMMIT         a commit without the slowdown
  --bad COMMIT          a later commit with it (GOOD must be its ancestor)
  --filter RE           the benchmarks to measure (Google Benchmark's regular expression)
  --work-dir DIR        builds (DIR/build-<commit>, kept) and kgate ab's results
                        (DIR/ab/<base>-<head>.json, reused) (default: .kgate-bisect)
  --source DIR          the git checkout whose history and scripts/build-at.sh are used
                        (default: the one the current directory is in)
  --rounds N            kgate ab's rounds per comparison (default 5)
  --seed N              kgate ab's seed (default 1)
  --thresholds FILE     per-family and per-benchmark thresholds
                        (default: baselines/thresholds.json of this checkout when it exists)
  -- BENCH_FLAGS...     flags for kgate_bench, passed on by kgate ab
  -h, --help            this text

Builds take the CUDA architectures from KGATE_CUDA_ARCHITECTURES (default: native) and a
compiler launcher from CMAKE_CUDA_COMPILER_LAUNCHER / CMAKE_CXX_COMPILER_LAUNCHER (e.g. ccache).

exit status: 0 the first bad commit named (found, or the first of several steps), 1 no slowdown
from GOOD to BAD, a range that is not monotonic, or a slowdown that shows between no two
neighbours, 2 bad input or usage, or a build that failed
)";

// Runs a command in `dir` for its standard output (one trimmed text); throws with its error
// output when it fails.
std::string output_of(const std::vector<std::string>& argv, const fs::path& scratch) {
  const std::string out = (scratch / "command.out").string(), err = (scratch / "command.err").string();
  if (const int status = run_process(argv, out, err); status != 0)
    throw ResultsError(argv[0] + " " + argv[1] + " failed (exit status " + std::to_string(status) + "): " + last_lines(err, 3));
  std::string text = read_text(out);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

struct Checkout {
  fs::path root;  // of the git checkout kgate bisect runs in
  fs::path scratch;

  std::string git(std::vector<std::string> args) const {
    args.insert(args.begin(), {"git", "-C", root.string()});
    return output_of(args, scratch);
  }
  std::string commit(const std::string& revision) const {
    try {
      return git({"rev-parse", "--verify", "--quiet", revision + "^{commit}"});
    } catch (const ResultsError&) {
      throw UsageError("'" + revision + "' is not a commit of " + root.string());
    }
  }
};

Verdict verdict_named(const std::string& name) {
  for (const Verdict v : {Verdict::faster, Verdict::slower, Verdict::same, Verdict::noisy, Verdict::added, Verdict::missing, Verdict::failed})
    if (to_string(v) == name) return v;
  throw ResultsError("kgate ab wrote an unknown verdict '" + name + "'");
}

std::string seconds(std::chrono::steady_clock::time_point since) {
  return std::to_string(std::lround(std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count())) + " s";
}

}  // namespace

int run_bisect(const Arguments& arguments, Io& io) {
  OptionSpec spec{.with_value = {"--good", "--bad", "--filter", "--work-dir", "--source", "--rounds", "--seed", "--thresholds"}, .flags = {}, .aliases = {}};
  const Args args(arguments, spec);
  if (args.help()) {
    io.out << kUsage;
    return kExitOk;
  }
  const auto separator = std::find(arguments.begin(), arguments.end(), "--");
  const std::vector<std::string> bench_flags(separator == arguments.end() ? separator : separator + 1, arguments.end());
  if (args.positionals().size() != bench_flags.size())
    throw UsageError("unexpected argument '" + args.positionals().front() + "' (flags for kgate_bench go after --)");
  const auto good_revision = args.value("--good"), bad_revision = args.value("--bad"), filter = args.value("--filter");
  if (!good_revision || !bad_revision || !filter) throw UsageError("give --good COMMIT, --bad COMMIT and --filter RE");
  const int rounds = static_cast<int>(args.number("--rounds", 5, 1, 1000));
  const int seed = static_cast<int>(args.number("--seed", 1, 0, 1e9));
  const auto started = std::chrono::steady_clock::now();

  const fs::path work = fs::absolute(args.value("--work-dir").value_or(".kgate-bisect"));
  fs::create_directories(work / "ab");
  Checkout checkout{args.value("--source").value_or(fs::current_path().string()), work};
  checkout.root = checkout.git({"rev-parse", "--show-toplevel"});
  const std::string good = checkout.commit(*good_revision), bad = checkout.commit(*bad_revision);
  if (run_process({"git", "-C", checkout.root.string(), "merge-base", "--is-ancestor", good, bad}, (work / "command.out").string(),
                  (work / "command.err").string()) != 0)
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

  const fs::path build_script = checkout.root / "scripts" / "build-at.sh";
  const std::string thresholds = args.value("--thresholds").value_or((checkout.root / "baselines" / "thresholds.json").string());
  int builds = 0;
  const auto binary_of = [&](std::size_t index) {
    const std::string& commit = commits[index];
    const fs::path dir = work / ("build-" + commit.substr(0, 12));
    const fs::path binary = dir / "bench" / "kgate_bench", stamp = dir / "kgate-bisect-built";
    if (fs::exists(binary) && read_text(stamp.string()) == commit) return binary.string();
    const auto build_started = std::chrono::steady_clock::now();
    const std::string log = (work / ("build-" + commit.substr(0, 12) + ".log")).string();
    io.out << "kgate bisect: building " << labels[index] << " (log: " << log << ") ... " << std::flush;
    if (const int status = run_process({build_script.string(), commit, dir.string(), "kgate_bench"}, log, log); status != 0)
      throw ResultsError(labels[index] + ": the build failed (exit status " + std::to_string(status) + "); the end of " + log +
                         ":\n" + last_lines(log, 15));
    write_file_atomically(stamp.string(), commit);
    ++builds;
    io.out << seconds(build_started) << "\n";
    return binary.string();
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
      if (!bench_flags.empty()) ab_args.push_back("--");
      ab_args.insert(ab_args.end(), bench_flags.begin(), bench_flags.end());
      const auto ab_started = std::chrono::steady_clock::now();
      std::ostringstream table;
      Io ab_io{table, io.err, false};
      run_ab(ab_args, ab_io);
      write_file_atomically((work / "ab" / (pair + ".txt")).string(), table.str());
      fs::rename(json.string() + ".partial", json);
      io.out << "kgate bisect: kgate ab " << labels[base] << " -> " << labels[head] << " " << seconds(ab_started) << "\n";
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
    for (std::size_t i = 0; i < names.size() && i < 3; ++i) io.out << (i ? ", " : " (") << names[i];
    io.out << (names.empty() ? "" : names.size() > 3 ? ", ...)" : ")") << "\n";
  }
  for (const std::string& note : result.notes) io.out << "note: " << note << "\n";
  const std::string summary =
      std::to_string(result.probes.size()) + " comparisons, " + std::to_string(builds) + " builds, " + seconds(started) + " in all";
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
  io.out << "kgate bisect: first bad commit " << first_bad << "\n  last good " << labels[result.last_good] << "; "
         << std::string(to_string(result.outcome)) << "; " << summary << "\n";
  return result.outcome == BisectResult::Outcome::not_monotonic ? kExitGate : kExitOk;
}

}  // namespace kgate::cli
