#pragma once
// A git revision of the user's repository built by the user's own command, for kgate bisect and
// kgate pr-gate: the commit is checked out in a git worktree of its own, the build command runs
// there, and the benchmark binary is found at a path relative to that worktree. Nothing here
// knows how a repository builds, so it works in any repository.
#include <filesystem>
#include <optional>
#include <string>

#include "git_checkout.hpp"

namespace kgate::cli {

struct RevisionBuild {
  std::string build_command;  // run with `sh -c` in the worktree
  std::string bench;          // the benchmark binary, relative to the worktree
};

// The binary's absolute path when `worktree` holds a finished build of `commit` with this command
// and binary: build_revision stamps one (<worktree>.built), so a build is reused, not repeated.
std::optional<std::string> finished_build(const RevisionBuild& build, const std::string& commit, const std::filesystem::path& worktree);

// Checks `commit` of `checkout` out in `worktree` (a detached git worktree: added when missing,
// moved to the commit when it is one already), runs the build command there with its output to
// `log`, stamps the finished build and returns the binary's absolute path. Throws ResultsError
// when git or the build fails (with the end of the log), when the build made no binary at
// build.bench, or when `worktree` exists and is not a git worktree.
std::string build_revision(const GitCheckout& checkout, const RevisionBuild& build, const std::string& commit,
                           const std::filesystem::path& worktree, const std::filesystem::path& log);

}  // namespace kgate::cli
