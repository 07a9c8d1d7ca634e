#pragma once
// What kgate bisect measures in the user's repository: the first-parent commits from a good one to
// a bad one, and two of them compared by kgate ab on this GPU, each commit built once in a worktree
// of its own (revision_build.hpp). Building and measuring are the command line's jobs (git, the
// user's build command, benchmark processes); the search over the comparisons is the library's
// (include/kgate/history/bisect.hpp).
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "git_checkout.hpp"
#include "kgate/gate/compare.hpp"
#include "revision_build.hpp"

namespace kgate::cli {

// The commits from the good revision to the bad one along bad's first parents, both included, as
// full ids. Throws UsageError when either names no commit, or good is not an ancestor of bad or
// the same commit.
std::vector<std::string> first_parent_range(const GitCheckout& checkout, const std::string& good_revision, const std::string& bad_revision);

struct CommitComparisonSetup {
  RevisionBuild build;
  std::filesystem::path work;  // commit-<id>/ worktrees with commit-<id>.log; ab/<base>-<head>.json and its rounds
  std::string filter;          // the benchmarks kgate ab measures
  int rounds = 5, seed = 1;
  std::string thresholds{};                      // passed on to kgate ab when the file exists
  std::optional<std::string> process_timeout{};  // kgate ab's --process-timeout
  std::vector<std::string> bench_flags{};
};

// A CompareCommits (bisect.hpp) over `commits`: kgate ab between two commits' builds, its verdicts
// kept in DIR/ab/<base>-<head>.json and read from there when an earlier bisect left them.
class CommitComparisons {
 public:
  CommitComparisons(const GitCheckout& checkout, std::vector<std::string> commits, CommitComparisonSetup setup, Io& io);

  std::map<std::string, Verdict> operator()(std::size_t base, std::size_t head);
  int builds() const { return builds_; }  // made by this bisect: the rest were reused

 private:
  std::string binary(std::size_t index);  // the commit's built benchmark binary
  std::string label(std::size_t index) const { return commits_[index].substr(0, 10); }

  const GitCheckout& checkout_;
  std::vector<std::string> commits_;
  CommitComparisonSetup setup_;
  Io& io_;
  int builds_ = 0;
};

}  // namespace kgate::cli
