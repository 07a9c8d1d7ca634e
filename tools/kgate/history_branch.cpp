#include "history_branch.hpp"

#include <unistd.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "kgate/results/provenance.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate::cli {
namespace {

namespace fs = std::filesystem;

// The branch checked out afresh in the worktree, at the remote's tip, or new and empty.
void check_out_branch(const GitCheckout& repository, const HistoryBranch& history, Io& io) {
  repository.git_status({"worktree", "remove", "--force", history.worktree.string()});  // absent the first time
  fs::remove_all(history.worktree);
  repository.git({"worktree", "prune"});
  const std::string tracking = "refs/remotes/" + history.remote + "/" + history.branch;
  if (repository.git_status({"fetch", "-q", history.remote, "+refs/heads/" + history.branch + ":" + tracking}) == 0) {
    repository.git({"worktree", "add", "-q", "--detach", history.worktree.string(), tracking});
    return;
  }
  io.out << "kgate nightly: no branch " << history.branch << " on " << history.remote << " yet: starting it\n";
  repository.git({"worktree", "add", "-q", "--detach", history.worktree.string()});
  const GitCheckout fresh(history.worktree, history.worktree.parent_path());
  fresh.git({"checkout", "-q", "--orphan", "kgate-nightly-" + std::to_string(getpid())});
  fresh.git({"rm", "-rq", "--cached", "--ignore-unmatch", "."});
  fresh.git({"clean", "-fdqx"});
}

}  // namespace

int add_to_history_branch(const GitCheckout& repository, const HistoryBranch& history, const std::string& name, const fs::path& run,
                          bool push, const fs::path& out, Io& io) {
  const std::string database = name + ".sqlite";
  const fs::path db = history.worktree / database;
  constexpr int kAttempts = 5;
  for (int attempt = 1;; ++attempt) {
    check_out_branch(repository, history, io);
    std::ostringstream added;
    Io quiet{added, io.err, false};
    run_history({"add", run.string(), "--db", db.string()}, quiet);
    std::ostringstream changes;
    Io changes_io{changes, io.err, false};
    const int status =
        run_history({"changes", "--db", db.string(), "--since", "previous", "--json", (out / "changes.json").string()}, changes_io);
    write_file_atomically((out / "changes.txt").string(), changes.str());
    io.out << added.str() << changes.str();
    if (!push) {
      io.out << "kgate nightly: the database is in " << db.string() << " (not pushed: no --push)\n";
      return status;
    }
    const GitCheckout branch(history.worktree, history.worktree.parent_path());
    branch.git({"add", database});
    if (branch.git_status({"diff", "--cached", "--quiet"}) == 0) {  // a job run again on the same shards
      io.out << "kgate nightly: the run is in " << database << " on " << history.branch << " already; nothing to push\n";
      return status;
    }
    branch.git({"-c", "user.name=kgate nightly", "-c", "user.email=kgate-nightly@users.noreply.github.com", "commit", "-q", "-m",
                "history: " + name + ", " + run.filename().string() + " (" + utc_now_iso8601().substr(0, 10) + ")"});
    // Each GPU model writes its own file, so a push that lost a race only needs a fresh start.
    if (branch.git_status({"push", "-q", history.remote, "HEAD:refs/heads/" + history.branch}) == 0) {
      io.out << "kgate nightly: pushed " << database << " to " << history.branch << "\n";
      return status;
    }
    if (attempt == kAttempts)
      throw ResultsError("pushing " + history.branch + " to " + history.remote + " failed " + std::to_string(kAttempts) + " times");
    io.out << "kgate nightly: the push lost a race; starting again from the branch's new tip\n";
    std::this_thread::sleep_for(std::chrono::seconds(5 * attempt));
  }
}

}  // namespace kgate::cli
