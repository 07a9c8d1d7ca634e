// kgate pr-gate without a GPU, in a repository laid out like one outside kgate's
// (synthetic_repository.hpp): base and head built by the repository's own build command in
// worktrees, judged by kgate ab, reported, and summarised for GitHub Actions.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cli_runner.hpp"
#include "synthetic_repository.hpp"
#include "synthetic_results.hpp"

namespace kgate {
namespace {

namespace fs = std::filesystem;
using synthetic::KernelRepository;

// kgate pr-gate in `repo` with the output in DIR/out and the worktrees in DIR/work.
cli_test::Outcome pr_gate(const synthetic::TempDir& dir, const KernelRepository& repo, std::vector<std::string> sides) {
  std::vector<std::string> args = {"pr-gate", "--source",      repo.root(), "--work-dir", dir.file("work"),
                                   "--out",   dir.file("out"), "--rounds",  "3"};
  args.insert(args.end(), sides.begin(), sides.end());
  return cli_test::kgate_cli(args);
}

const std::vector<std::string> kBuild = {"--build-cmd", KernelRepository::kBuildCommand, "--bench", KernelRepository::kBench};

std::vector<std::string> revisions(const std::string& base, const std::string& head) {
  std::vector<std::string> args = {"--base", base, "--head", head};
  args.insert(args.end(), kBuild.begin(), kBuild.end());
  return args;
}

TEST(PrGate, BuildsBaseAndHeadInTheirWorktreesAndFailsOnThePlantedSlowdown) {
  const synthetic::TempDir dir;
  const KernelRepository repo(dir, {"fast", "slow"});
  const std::string summary = dir.write("step-summary.md", "earlier steps\n");
  setenv("GITHUB_STEP_SUMMARY", summary.c_str(), 1);
  const auto slowed = pr_gate(dir, repo, revisions("HEAD~1", "HEAD"));
  unsetenv("GITHUB_STEP_SUMMARY");
  ASSERT_EQ(slowed.status, 1) << slowed.out << slowed.err;
  EXPECT_NE(slowed.out.find("building base " + repo.commit("HEAD~1").substr(0, 10) + " in " + dir.file("work/base")), std::string::npos)
      << slowed.out;
  EXPECT_NE(slowed.out.find("slower"), std::string::npos) << slowed.out;
  EXPECT_NE(slowed.err.find("round 3/3"), std::string::npos) << "--rounds is kgate ab's, passed on: " << slowed.err;
  EXPECT_EQ(slowed.err.find("round 4/"), std::string::npos) << slowed.err;
  for (const char* written : {"out/ab.json", "out/ab-junit.xml", "out/ab.md", "out/rounds/head.json", "out/report/report.md"})
    EXPECT_TRUE(fs::exists(dir.file(written))) << written;
  const std::string verdicts = synthetic::read_text(dir.file("out/ab.md"));
  EXPECT_EQ(synthetic::read_text(summary), "earlier steps\n" + verdicts) << "ab.md is appended to the job's summary";
  const std::string builds = synthetic::read_text(dir.file("builds.log"));
  EXPECT_EQ(builds, "built fast in " + dir.file("work/base") + "\nbuilt slow in " + dir.file("work/head") + "\n");

  // A/A of the head: the base's worktree moves to the head and builds again, the head's is reused.
  const auto same = pr_gate(dir, repo, revisions("HEAD", "HEAD"));
  EXPECT_EQ(same.status, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("head " + repo.commit("HEAD").substr(0, 10) + " is built already"), std::string::npos) << same.out;
  EXPECT_NE(synthetic::read_text(dir.file("builds.log")).find("built slow in " + dir.file("work/base")), std::string::npos);
}

TEST(PrGate, TakesBinariesAlreadyBuiltOnEitherSide) {
  const synthetic::TempDir dir;
  const KernelRepository repo(dir, {"fast", "slow"});
  ASSERT_EQ(pr_gate(dir, repo, revisions("HEAD~1", "HEAD")).status, 1);
  const std::string base = dir.file("work/base/out/mykernels_bench"), head = dir.file("work/head/out/mykernels_bench");
  const auto binaries = pr_gate(dir, repo, {"--base-bench", base, "--head-bench", head});
  EXPECT_EQ(binaries.status, 1) << binaries.out << binaries.err;
  // The head built as a CI job builds it, the base from its revision.
  std::vector<std::string> mixed = {"--base", "HEAD~1", "--head-bench", base};
  mixed.insert(mixed.end(), kBuild.begin(), kBuild.end());
  const auto unchanged = pr_gate(dir, repo, mixed);
  EXPECT_EQ(unchanged.status, 0) << unchanged.out << unchanged.err;
}

TEST(PrGate, RefusesSidesItCannotBuildOrFind) {
  const synthetic::TempDir dir;
  const KernelRepository repo(dir, {"fast"});
  const auto both = pr_gate(dir, repo, {"--base", "HEAD", "--base-bench", "x", "--head", "HEAD"});
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("give --base REV or --base-bench FILE, one of them"), std::string::npos) << both.err;
  const auto unbuildable = pr_gate(dir, repo, {"--base", "HEAD", "--head", "HEAD"});
  EXPECT_EQ(unbuildable.status, 2);
  EXPECT_NE(unbuildable.err.find("needs --build-cmd CMD and --bench PATH"), std::string::npos) << unbuildable.err;
  const auto command = pr_gate(dir, repo, {"--base-bench", dir.file("nothing"), "--head-cmd", "true"});
  EXPECT_EQ(command.status, 2);
  EXPECT_NE(command.err.find("unknown option --head-cmd"), std::string::npos) << "kgate ab's commands are not pr-gate's: " << command.err;
  const auto missing = pr_gate(dir, repo, {"--base-bench", dir.file("nothing"), "--head-bench", dir.file("nothing")});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("no such file"), std::string::npos) << missing.err;
  const auto unknown = pr_gate(dir, repo, revisions("no-such-branch", "HEAD"));
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("'no-such-branch' is not a commit of " + repo.root()), std::string::npos) << unknown.err;
  EXPECT_FALSE(fs::exists(dir.file("out"))) << "nothing is written before the sides are known";
}

}  // namespace
}  // namespace kgate
