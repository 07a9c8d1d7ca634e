#include "commit_comparisons.hpp"

#include <chrono>
#include <sstream>

#include "kgate/base/text.hpp"
#include "kgate/history/bisect.hpp"
#include "kgate/results/file_io.hpp"
#include "process.hpp"

namespace kgate::cli {

namespace fs = std::filesystem;

std::vector<std::string> first_parent_range(const GitCheckout& checkout, const std::string& good_revision,
                                            const std::string& bad_revision) {
  const std::string good = checkout.commit(good_revision), bad = checkout.commit(bad_revision);
  if (checkout.git_status({"merge-base", "--is-ancestor", good, bad}) != 0)
    throw UsageError("--good " + good_revision + " is not an ancestor of --bad " + bad_revision);
  std::vector<std::string> commits = {good};
  const std::string listed = checkout.git({"rev-list", "--first-parent", "--reverse", "--ancestry-path", good + ".." + bad});
  for (const std::string& line : split(listed, '\n')) commits.push_back(line);
  if (commits.size() < 2) throw UsageError("--good and --bad are the same commit");
  return commits;
}

CommitComparisons::CommitComparisons(const GitCheckout& checkout, std::vector<std::string> commits, CommitComparisonSetup setup, Io& io)
    : checkout_(checkout), commits_(std::move(commits)), setup_(std::move(setup)), io_(io) {
  fs::create_directories(setup_.work / "ab");
}

std::string CommitComparisons::binary(std::size_t index) {
  const std::string& commit = commits_[index];
  const fs::path worktree = setup_.work / ("commit-" + commit.substr(0, 12)), log = worktree.string() + ".log";
  if (const auto finished = finished_build(setup_.build, commit, worktree)) return *finished;
  const auto started = std::chrono::steady_clock::now();
  io_.out << "kgate bisect: building " << label(index) << " (log: " << log.string() << ") ... " << std::flush;
  const std::string built = build_revision(checkout_, setup_.build, commit, worktree, log);
  ++builds_;
  io_.out << seconds_since(started) << "\n";
  return built;
}

std::map<std::string, Verdict> CommitComparisons::operator()(std::size_t base, std::size_t head) {
  const std::string pair = commits_[base].substr(0, 12) + "-" + commits_[head].substr(0, 12);
  const fs::path json = setup_.work / "ab" / (pair + ".json");
  if (!fs::exists(json)) {
    const std::string base_binary = binary(base), head_binary = binary(head);
    Arguments ab_args = {"--base",     base_binary,
                         "--head",     head_binary,
                         "--filter",   setup_.filter,
                         "--rounds",   std::to_string(setup_.rounds),
                         "--seed",     std::to_string(setup_.seed),
                         "--work-dir", (setup_.work / "ab" / pair).string(),
                         "--json",     json.string() + ".partial"};
    if (fs::exists(setup_.thresholds)) ab_args.insert(ab_args.end(), {"--thresholds", setup_.thresholds});
    if (setup_.process_timeout) ab_args.insert(ab_args.end(), {"--process-timeout", *setup_.process_timeout});
    if (!setup_.bench_flags.empty()) ab_args.push_back("--");
    ab_args.insert(ab_args.end(), setup_.bench_flags.begin(), setup_.bench_flags.end());
    const auto started = std::chrono::steady_clock::now();
    std::ostringstream table;
    Io ab_io{table, io_.err, false};
    run_ab(ab_args, ab_io);
    write_file_atomically((setup_.work / "ab" / (pair + ".txt")).string(), table.str());
    fs::rename(json.string() + ".partial", json);  // a comparison cut short is never reused
    io_.out << "kgate bisect: kgate ab " << label(base) << " -> " << label(head) << " " << seconds_since(started) << "\n";
  }
  return read_comparison_verdicts(json.string());
}

}  // namespace kgate::cli
