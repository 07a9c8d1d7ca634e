#include "revision_build.hpp"

#include "kgate/results/results_io.hpp"
#include "process.hpp"

namespace kgate::cli {

namespace fs = std::filesystem;
namespace {

fs::path stamp_of(const fs::path& worktree) { return fs::absolute(worktree).string() + ".built"; }

std::string stamp_text(const RevisionBuild& build, const std::string& commit) {
  return commit + "\n" + build.build_command + "\n" + build.bench + "\n";
}

}  // namespace

std::optional<std::string> finished_build(const RevisionBuild& build, const std::string& commit, const fs::path& worktree) {
  const fs::path bench = fs::absolute(worktree) / build.bench;
  if (fs::exists(bench) && read_text(stamp_of(worktree).string()) == stamp_text(build, commit)) return bench.string();
  return std::nullopt;
}

std::string build_revision(const GitCheckout& checkout, const RevisionBuild& build, const std::string& commit, const fs::path& worktree,
                           const fs::path& log) {
  const fs::path tree = fs::absolute(worktree), bench = tree / build.bench, stamp = stamp_of(worktree);
  fs::remove(stamp);
  if (fs::exists(tree / ".git")) {
    // Forced: a build that touched tracked files must not keep the worktree from moving on.
    GitCheckout(tree, tree.parent_path()).git({"checkout", "-q", "--force", "--detach", commit});
  } else {
    if (fs::exists(tree) && !fs::is_empty(tree))
      throw ResultsError(tree.string() + ": exists and is not a git worktree; remove it to build " + commit + " there");
    checkout.git({"worktree", "prune"});  // a worktree deleted by hand stays registered until pruned
    checkout.git({"worktree", "add", "-q", "--detach", tree.string(), commit});
  }
  const ProcessSetup in_worktree{.directory = tree.string(), .environment = {}};
  if (const int status = run_process({"sh", "-c", build.build_command}, log.string(), log.string(), in_worktree); status != 0)
    throw ResultsError(commit.substr(0, 10) + ": the build command failed (exit status " + std::to_string(status) + "); the end of " +
                       log.string() + ":\n" + last_lines(log.string(), 15));
  if (!fs::exists(bench))
    throw ResultsError(commit.substr(0, 10) + ": the build command made no " + build.bench + " in " + tree.string() + " (see " +
                       log.string() + ")");
  write_file_atomically(stamp.string(), stamp_text(build, commit));
  return bench.string();
}

}  // namespace kgate::cli
