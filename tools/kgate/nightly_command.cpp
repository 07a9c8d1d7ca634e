// kgate nightly: the nightly job's last step for one GPU model, in any repository: the shards of
// the matrix jobs merged, compared with the stored baseline and reported, and the run added to the
// history on a data branch (history_branch.hpp). Each step is another kgate command, in-process.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "git_checkout.hpp"
#include "kgate/base/escape.hpp"
#include "history_branch.hpp"
#include "process.hpp"
#include "step_summary.hpp"

namespace kgate::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage = R"(usage: kgate nightly SHARD_DIR [options]

The nightly job's last step for one GPU model, in any repository: merges the shards that its
matrix jobs measured (kgate shard-run --only), compares the merged run with the stored baseline
of its GPU and suite (kgate compare --baseline-dir) and writes the report; with --history NAME
it then adds the run to NAME.sqlite on a data branch of this repository and looks for new change
points (kgate history changes --since previous), also after a regression. Writes to --out:
merged.json, compare.json, compare-junit.xml, compare.md and report/, and with --history
changes.json and changes.txt; under GitHub Actions (GITHUB_STEP_SUMMARY set) compare.md and the
change points also go to the job's summary.

options:
  --out DIR            where to write (default: SHARD_DIR)
  --baseline-dir DIR   the stored baselines, DIR/<GPU slug>/<suite>.json, and the thresholds,
                       DIR/thresholds.json when it exists (default: baselines)
  --thresholds FILE    per-family and per-benchmark thresholds (instead of DIR/thresholds.json)
  --history NAME       add the run to NAME.sqlite on the history branch (e.g. the runner's GPU
                       label); the branch holds one database per GPU model
  --branch BRANCH      the history branch (default: kgate-history); started as an orphan, with
                       no files, when the remote has none
  --remote REMOTE      where the branch is fetched from and pushed to (default: origin)
  --source DIR         the git checkout whose remote that is (default: the one the current
                       directory is in)
  --push               commit the database and push the branch; a push that lost a race to
                       another GPU model's job starts again from the branch's new tip (five
                       attempts). Without it the database is left in the worktree for a look
  --work-dir DIR       the history branch's worktree, replaced every night (default:
                       .kgate-nightly)
  -h, --help           this text

exit status: 0 no regression and no new slowdown change point, 1 a regression, a failed variant
or a new slowdown change point, 2 bad input or usage (a shard missing; no baseline for this GPU
and suite: the report is written and how to record the baseline is printed) or a push that kept
failing
)";

// The shards in `dir`: shard-<i>-of-<n>.json, as kgate shard-run writes them.
std::vector<std::string> shard_files(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw UsageError(dir.string() + ": no such directory");
  std::vector<std::string> files;
  const std::regex shard(R"(shard-\d+-of-\d+\.json)");
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (std::regex_match(e.path().filename().string(), shard)) files.push_back(e.path().string());
  if (files.empty()) throw UsageError(dir.string() + ": no shard-<i>-of-<n>.json in it");
  std::sort(files.begin(), files.end());
  return files;
}

// Runs one of the steps and returns its exit status; an error is reported as kgate_main would
// report it, as exit status 2, so that the steps after it still run.
int step(const char* name, int (*command)(const Arguments&, Io&), const Arguments& args, Io& io) {
  try {
    return command(args, io);
  } catch (const std::exception& e) {
    io.err << "kgate nightly: kgate " << name << ": " << terminal_text(e.what(), "\n") << "\n";
    return kExitUsage;
  }
}

}  // namespace

int run_nightly(const Arguments& arguments, Io& io) {
  const auto parsed = parse_or_help(arguments,
                                    {.with_value = {"--out", "--baseline-dir", "--thresholds", "--history", "--branch", "--remote",
                                                    "--source", "--work-dir"},
                                     .flags = {"--push"}},
                                    kUsage, io.out);
  if (!parsed) return kExitOk;
  const Args& args = *parsed;
  if (args.positionals().size() != 1) throw UsageError("give one SHARD_DIR");
  const fs::path shards = args.positionals().front(), out = args.value("--out").value_or(shards.string());
  const auto history = args.value("--history");
  if (history && !std::regex_match(*history, std::regex("[A-Za-z0-9._-]+")))
    throw UsageError("--history " + *history + ": give a plain file name, e.g. the runner's GPU label");
  for (const std::string option : {"--branch", "--remote", "--source", "--work-dir", "--push"})
    if (!history && (args.value(option) || args.flag(option)))
      throw UsageError(option + " is for the history step: give --history NAME too");
  // Before any work: the merge needs its shards, and the history step a git checkout.
  Arguments merge_args = shard_files(shards);
  std::optional<GitCheckout> repository;
  const fs::path work = fs::absolute(args.value("--work-dir").value_or(".kgate-nightly"));
  if (history) repository.emplace(args.value("--source").value_or(fs::current_path().string()), work);
  fs::create_directories(out);
  const std::string merged = (out / "merged.json").string(), markdown = (out / "compare.md").string();
  merge_args.insert(merge_args.end(), {"-o", merged});
  run_merge(merge_args, io);

  const std::string baselines = args.value("--baseline-dir").value_or("baselines");
  Arguments compare_args = {
      "--baseline-dir", baselines, merged, "--json", (out / "compare.json").string(), "--junit", (out / "compare-junit.xml").string(),
      "--markdown",     markdown};
  Arguments report_args = {merged, "--out", (out / "report").string()};
  if (const auto thresholds = args.value("--thresholds")) {
    compare_args.insert(compare_args.end(), {"--thresholds", *thresholds});
    report_args.insert(report_args.end(), {"--thresholds", *thresholds});
  }
  const int gate = step("compare", run_compare, compare_args, io);
  if (gate == kExitUsage) {
    io.err << "kgate nightly: nothing to compare with; to record this run as the baseline (after review):\n"
           << "  kgate baseline update --baseline-dir " << baselines << " " << merged << "\n";
  } else {
    report_args.insert(report_args.end(), {"--baseline-dir", baselines});
    add_to_step_summary(read_text(markdown));
  }
  std::ostringstream report_lines;
  Io report_io{report_lines, io.err, false};
  if (step("report", run_report, report_args, report_io) != kExitOk) io.err << "kgate nightly: the report could not be written\n";
  io.out << "kgate nightly: kgate compare exit status " << gate << "; report in " << (out / "report").string() << "/\n";
  if (!history) return gate;

  const HistoryBranch branch{args.value("--remote").value_or("origin"), args.value("--branch").value_or("kgate-history"), work / "history"};
  const int changes = add_to_history_branch(*repository, branch, *history, merged, args.flag("--push"), out, io);
  add_to_step_summary("### Change points (" + *history + ")\n\n```\n" + read_text((out / "changes.txt").string()) + "```\n");
  return std::max(gate, changes);
}

}  // namespace kgate::cli
