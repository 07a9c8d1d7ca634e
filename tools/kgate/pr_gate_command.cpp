// kgate pr-gate: the pull-request performance gate in one command, in any repository. Each side
// is a benchmark binary already built or a revision built in a worktree by the user's command
// (revision_build.hpp); kgate ab judges them and kgate report writes the report, both in-process.
#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "git_checkout.hpp"
#include "kgate/base/escape.hpp"
#include "process.hpp"
#include "revision_build.hpp"
#include "step_summary.hpp"

namespace kgate::cli {
namespace {

namespace fs = std::filesystem;

// A delimiter of its own: the text holds ")".
constexpr const char* kUsage = R"usage(usage: kgate pr-gate --base REV --head REV --build-cmd CMD --bench PATH [options] [-- BENCH_FLAGS...]
       kgate pr-gate --base-bench FILE --head-bench FILE [options] [-- BENCH_FLAGS...]

The performance gate of a pull request, in any git repository. Each side is either a benchmark
binary already built (--base-bench, --head-bench) or a revision (--base, --head) checked out in
a git worktree of its own (WORK/base, WORK/head, kept so that the next gate builds
incrementally) and built there by CMD. Then kgate ab measures base and head on this GPU in
alternating rounds and judges the head, and kgate report sets the pooled head against the pooled
base. Writes to --out: ab.json, ab-junit.xml, ab.md (the verdicts in Markdown), report/ and
rounds/ (every round's results and log); under GitHub Actions (GITHUB_STEP_SUMMARY set) ab.md
also goes to the job's summary.

options:
  --base REV          the base revision, e.g. "$(git merge-base origin/main HEAD)"
  --head REV          the head revision, e.g. HEAD
  --base-bench FILE   the base's benchmark binary, already built (instead of --base)
  --head-bench FILE   the head's benchmark binary, already built (instead of --head)
  --build-cmd CMD     for --base and --head: the command that builds the benchmark binary, run
                      with sh -c in the revision's worktree, a clean checkout at first: it
                      configures as well as builds, and fetches git submodules if the build
                      needs them, e.g.
                      'cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build'
  --bench PATH        for --base and --head: the binary CMD makes, relative to the worktree
                      (e.g. build/mykernels_bench)
  --source DIR        the git checkout the revisions are from (default: the one the current
                      directory is in)
  --work-dir WORK     the revisions' worktrees and builds, WORK/base and WORK/head, and their
                      build logs WORK/base.log and WORK/head.log (default: .kgate-pr-gate)
  --out DIR           where the verdicts and the report go (default: pr-gate)
  --thresholds FILE   per-family and per-benchmark thresholds, for kgate ab and the report
                      (default: baselines/thresholds.json when it exists)
  --rounds N, --seed N, --filter RE, --common-only, --process-timeout S, --threshold FRACTION,
  --alpha P, ...      passed on to kgate ab (kgate ab --help lists them); --common-only compares
                      the benchmarks both sides have when a pull request adds or removes some;
                      --process-timeout S ends a benchmark process after S seconds (default 1800)
  -- BENCH_FLAGS...   flags for both benchmark binaries, passed on by kgate ab
  -h, --help          this text

exit status: kgate ab's: 0 no regression, 1 a regression (slower) or a failed variant, 2 bad
input or usage, or a build that failed
)usage";

// The options pr-gate takes itself; kgate ab's with the same names (--base, --head, --work-dir)
// mean something else there, and its report files are pr-gate's to name.
const std::set<std::string> kOwnValues = {"--base",  "--head",   "--base-bench", "--head-bench", "--build-cmd",
                                          "--bench", "--source", "--work-dir",   "--out"};
const std::set<std::string> kAbReportFiles = {"--json", "--junit", "--markdown"};
// kgate ab's builds given as commands: pr-gate's sides are benchmark binaries, built or given.
const std::set<std::string> kAbCommands = {"--base-cmd", "--head-cmd"};

// kgate ab's options that pr-gate passes on: all but those it sets itself.
OptionSpec passed_on_to_ab() {
  OptionSpec spec = ab_option_spec();
  std::erase_if(spec.with_value, [](const std::string& name) {
    return kOwnValues.contains(name) || kAbReportFiles.contains(name) || kAbCommands.contains(name);
  });
  return spec;
}

// A side's benchmark binary: the one given, or its revision built in WORK/<label>.
std::string side_bench(const Args& args, const std::string& label, const std::optional<GitCheckout>& checkout, const fs::path& work,
                       Io& io) {
  if (const auto bench = args.value("--" + label + "-bench")) {
    if (!fs::exists(*bench)) throw UsageError("--" + label + "-bench " + *bench + ": no such file");
    return fs::absolute(*bench).string();
  }
  const std::string commit = checkout->commit(*args.value("--" + label));
  const RevisionBuild build{*args.value("--build-cmd"), *args.value("--bench")};
  const fs::path worktree = work / label, log = work / (label + ".log");
  if (const auto finished = finished_build(build, commit, worktree)) {
    io.out << "kgate pr-gate: " << label << " " << commit.substr(0, 10) << " is built already in " << worktree.string() << "\n";
    return *finished;
  }
  const auto started = std::chrono::steady_clock::now();
  io.out << "kgate pr-gate: building " << label << " " << commit.substr(0, 10) << " in " << worktree.string() << " (log: " << log.string()
         << ") ... " << std::flush;
  const std::string binary = build_revision(*checkout, build, commit, worktree, log);
  io.out << seconds_since(started) << "\n";
  return binary;
}

}  // namespace

int run_pr_gate(const Arguments& arguments, Io& io) {
  const OptionSpec forwarded = passed_on_to_ab();
  OptionSpec spec = forwarded;
  spec.with_value.insert(kOwnValues.begin(), kOwnValues.end());
  const auto parsed = parse_or_help(arguments, spec, kUsage, io.out);
  if (!parsed) return kExitOk;
  const Args& args = *parsed;
  const Arguments bench_flags = args.after_separator("flags for the benchmark binaries");
  bool builds = false;
  for (const std::string label : {"base", "head"}) {
    const bool revision = args.value("--" + label).has_value(), binary = args.value("--" + label + "-bench").has_value();
    if (revision == binary) throw UsageError("give --" + label + " REV or --" + label + "-bench FILE, one of them");
    builds = builds || revision;
  }
  if (builds && (!args.value("--build-cmd") || !args.value("--bench")))
    throw UsageError("a revision (--base, --head) needs --build-cmd CMD and --bench PATH: how it builds, and where its binary is");
  if (!builds && (args.value("--build-cmd") || args.value("--bench")))
    throw UsageError("--build-cmd and --bench build revisions: give --base REV or --head REV, or neither option");
  if (builds && fs::path(*args.value("--bench")).is_absolute())
    throw UsageError("--bench " + *args.value("--bench") + ": give the path relative to the worktree");

  const fs::path work = fs::absolute(args.value("--work-dir").value_or(".kgate-pr-gate"));
  const fs::path out = args.value("--out").value_or("pr-gate");
  std::optional<GitCheckout> checkout;
  if (builds) checkout.emplace(args.value("--source").value_or(fs::current_path().string()), work);
  const std::string base = side_bench(args, "base", checkout, work, io), head = side_bench(args, "head", checkout, work, io);

  fs::create_directories(out);
  const std::string rounds = (out / "rounds").string(), markdown = (out / "ab.md").string();
  Arguments ab_args = {"--base",     base,
                       "--head",     head,
                       "--work-dir", rounds,
                       "--json",     (out / "ab.json").string(),
                       "--junit",    (out / "ab-junit.xml").string(),
                       "--markdown", markdown};
  for (const std::string& name : forwarded.with_value)
    if (const auto value = args.value(name)) ab_args.insert(ab_args.end(), {name, *value});
  for (const std::string& name : forwarded.flags)
    if (args.flag(name)) ab_args.push_back(name);
  if (!bench_flags.empty()) ab_args.push_back("--");
  ab_args.insert(ab_args.end(), bench_flags.begin(), bench_flags.end());
  const int status = run_ab(ab_args, io);  // bad input throws: no verdicts, so no report either

  Arguments report_args = {rounds + "/head.json", "--baseline", rounds + "/base.json", "--out", (out / "report").string()};
  if (const auto thresholds = args.value("--thresholds")) report_args.insert(report_args.end(), {"--thresholds", *thresholds});
  std::ostringstream report_lines;
  Io report_io{report_lines, report_lines, false};
  try {
    run_report(report_args, report_io);
  } catch (const std::exception& e) {
    io.err << "kgate pr-gate: the report could not be written (the verdicts above stand): " << terminal_text(e.what(), "\n") << "\n";
  }
  add_to_step_summary(read_text(markdown));
  io.out << "kgate pr-gate: kgate ab exit status " << status << "; verdicts in " << markdown << ", report in " << (out / "report").string()
         << "/\n";
  return status;
}

}  // namespace kgate::cli
