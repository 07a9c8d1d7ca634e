#pragma once
// A history database kept on a data branch of the user's repository, for kgate nightly: the
// branch is checked out in a worktree of its own, the night's run added to one database file
// and, when asked, the branch committed and pushed. A database must outlive every CI run, and a
// branch is readable by anyone who can clone, which no CI artifact is (kgate's docs/ci.md).
#include <filesystem>
#include <string>

#include "commands.hpp"
#include "git_checkout.hpp"

namespace kgate::cli {

struct HistoryBranch {
  std::string remote;              // fetched from and pushed to
  std::string branch;              // started as an orphan when the remote has none
  std::filesystem::path worktree;  // where the branch is checked out (replaced every time)
};

// Adds `run` to <name>.sqlite on the branch and writes `kgate history changes --since previous`
// (a slowdown that this run revealed) to out/changes.json and out/changes.txt, and to `io`. With
// `push`, commits the file and pushes the branch; a push that lost a race to another GPU model's
// job starts again from the branch's new tip, five times at most. Returns history changes' exit
// status (1: a new slowdown change point). Throws ResultsError when git fails or the pushes do.
int add_to_history_branch(const GitCheckout& repository, const HistoryBranch& history, const std::string& name,
                          const std::filesystem::path& run, bool push, const std::filesystem::path& out, Io& io);

}  // namespace kgate::cli
