// The search behind kgate bisect (bisect.hpp) with a fake kgate ab: each synthetic commit has a
// known speed level, and a comparison says slower or faster when the level moves beyond 5%.
#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "kgate/history/bisect.hpp"
#include "kgate/results/results_io.hpp"
#include "synthetic_repository.hpp"
#include "synthetic_results.hpp"

namespace kgate {
namespace {

struct FakeAb {
  std::vector<double> levels;  // time per commit, relative
  int calls = 0;
  CompareCommits compare() {
    return [this](std::size_t base, std::size_t head) {
      ++calls;
      const double ratio = levels.at(head) / levels.at(base);
      const Verdict v = ratio > 1.05 ? Verdict::slower : ratio < 1 / 1.05 ? Verdict::faster : Verdict::same;
      // A benchmark outside the slowdown, noisy in one comparison: never followed.
      return std::map<std::string, Verdict>{{"watched", v},
                                            {"other", base == 0 && head == levels.size() - 1 ? Verdict::same : Verdict::slower}};
    };
  }
};

std::vector<std::string> commit_names(std::size_t n) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) names.push_back(std::string("c").append(std::to_string(i)));
  return names;
}

TEST(Bisect, NamesThePlantedCommitOfFive) {
  FakeAb ab{{1, 1, 1.1, 1.1, 1.1}};
  const BisectResult r = bisect_commits(commit_names(5), ab.compare());
  EXPECT_EQ(r.outcome, BisectResult::Outcome::found);
  EXPECT_EQ(r.first_bad, 2u);
  EXPECT_EQ(r.last_good, 1u);
  EXPECT_EQ(r.watched, std::vector<std::string>{"watched"});
  EXPECT_TRUE(r.notes.empty());
  EXPECT_EQ(ab.calls, static_cast<int>(r.probes.size()));  // each pair measured once
  EXPECT_EQ(ab.calls, 5);                                  // c0-c4, c0-c2, c2-c4, c0-c1, c1-c2
}

TEST(Bisect, EveryPositionInALongRange) {
  for (std::size_t planted = 1; planted < 17; ++planted) {
    FakeAb ab{std::vector<double>(17, 1.0)};
    for (std::size_t i = planted; i < 17; ++i) ab.levels[i] = 1.2;
    const BisectResult r = bisect_commits(commit_names(17), ab.compare());
    EXPECT_EQ(r.outcome, BisectResult::Outcome::found) << planted;
    EXPECT_EQ(r.first_bad, planted);
    EXPECT_EQ(r.last_good, planted - 1);
    EXPECT_LE(ab.calls, 1 + 2 * 4);  // the whole range, then two per halving
  }
}

TEST(Bisect, SaysWhenTheSlowdownCameAndWent) {
  FakeAb ab{{1, 1, 1.2, 1.0, 1.1, 1.1}};
  const BisectResult r = bisect_commits(commit_names(6), ab.compare());
  EXPECT_EQ(r.outcome, BisectResult::Outcome::not_monotonic);
  EXPECT_EQ(r.first_bad, 2u);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.front().find("came and (partly) went"), std::string::npos) << r.notes.front();
}

TEST(Bisect, StepsNoSlowdownAndASpreadSlowdown) {
  FakeAb steps{{1, 1.1, 1.1, 1.2, 1.2}};
  const BisectResult stepped = bisect_commits(commit_names(5), steps.compare());
  EXPECT_EQ(stepped.outcome, BisectResult::Outcome::in_steps);
  EXPECT_EQ(stepped.first_bad, 1u);

  FakeAb flat{{1, 1.02, 0.99, 1.0}};
  const BisectResult none = bisect_commits(commit_names(4), flat.compare());
  EXPECT_EQ(none.outcome, BisectResult::Outcome::no_slowdown);
  EXPECT_EQ(none.probes.size(), 1u);

  FakeAb drift{{1, 1.04, 1.08}};
  const BisectResult spread = bisect_commits(commit_names(3), drift.compare());
  EXPECT_EQ(spread.outcome, BisectResult::Outcome::not_localized);
  EXPECT_EQ(spread.last_good, 0u);
  EXPECT_EQ(spread.first_bad, 2u);

  EXPECT_THROW(bisect_commits(commit_names(1), flat.compare()), std::invalid_argument);
}

TEST(Bisect, DescribesEachComparisonAndTheNotes) {
  FakeAb ab{{1, 1, 1.2, 1.0, 1.1, 1.1}};
  const std::vector<std::string> names = commit_names(6);
  const std::string text = describe_search(bisect_commits(names, ab.compare()), names);
  EXPECT_EQ(text.rfind("  c0 -> c5: slower (watched)\n", 0), 0u) << text;
  EXPECT_NE(text.find("\n  c2 -> c5: faster (watched)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  c0 -> c1: same\n"), std::string::npos) << "no benchmark named where none changed: " << text;
  EXPECT_NE(text.find("\nnote: slower then faster between c0, c2 and c5: "), std::string::npos) << text;
}

TEST(Bisect, ReadsTheVerdictsOfAComparisonFile) {
  synthetic::TempDir dir;
  const std::string good =
      dir.write("ab.json", R"({"benchmarks": [{"name": "a", "verdict": "slower"}, {"name": "b", "verdict": "same"}]})");
  EXPECT_EQ(read_comparison_verdicts(good), (std::map<std::string, Verdict>{{"a", Verdict::slower}, {"b", Verdict::same}}));
  const std::string bad =
      dir.write("bad.json", R"({"benchmarks": [{"name": "a", "verdict": "slower"}, {"name": "b", "verdict": "worse"}]})");
  try {
    read_comparison_verdicts(bad);
    FAIL() << "an unknown verdict was read";
  } catch (const ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: $.benchmarks[1].verdict: unknown verdict 'worse'"), std::string::npos) << e.what();
  }
}

// kgate bisect end to end without a GPU, in a repository laid out like one outside kgate's
// (synthetic_repository.hpp): five commits, the third plants the slowdown; each commit the
// search needs is built by the repository's own build command in a worktree of its own.
TEST(BisectCli, BuildsTheCommitsItNeedsInAnyRepositoryAndNamesThePlantedOne) {
  synthetic::TempDir dir;
  const synthetic::KernelRepository repo(dir, {"fast", "fast", "slow", "slow", "slow"});
  const auto bisect = [&](const std::string& good, const std::string& bad) {
    return cli_test::kgate_cli({"bisect", "--source", repo.root(), "--good", good, "--bad", bad, "--filter", "scale_add", "--rounds", "3",
                                "--build-cmd", synthetic::KernelRepository::kBuildCommand, "--bench", synthetic::KernelRepository::kBench,
                                "--work-dir", dir.file("work"), "--thresholds", dir.file("none.json")});
  };
  const auto found = bisect("HEAD~4", "HEAD");
  ASSERT_EQ(found.status, 0) << found.out << found.err;
  EXPECT_NE(found.out.find("first bad commit " + repo.commit("HEAD~2") + " slow"), std::string::npos) << found.out;
  EXPECT_NE(found.out.find("5 comparisons, 4 builds"), std::string::npos) << found.out;
  // Each build ran in its commit's own worktree, which the build command saw as its directory.
  const std::string builds = synthetic::read_text(dir.file("builds.log"));
  EXPECT_NE(builds.find("built slow in " + dir.file("work/commit-" + repo.commit("HEAD~2").substr(0, 12)) + "\n"), std::string::npos)
      << builds;
  // Run again: every build and comparison is reused.
  const auto again = bisect("HEAD~4", "HEAD");
  EXPECT_EQ(again.status, 0);
  EXPECT_NE(again.out.find("5 comparisons, 0 builds"), std::string::npos) << again.out;
  // No slowdown between two fast commits; a bad commit that is not after the good one.
  EXPECT_EQ(bisect("HEAD~4", "HEAD~3").status, 1);
  EXPECT_EQ(bisect("HEAD", "HEAD~4").status, 2);
}

TEST(BisectCli, SaysHowEachCommitBuildsAndWhenABuildFails) {
  synthetic::TempDir dir;
  const synthetic::KernelRepository repo(dir, {"fast", "slow"});
  const std::vector<std::string> range = {"bisect", "--source", repo.root(), "--good",     "HEAD~1",        "--bad",
                                          "HEAD",   "--filter", "scale_add", "--work-dir", dir.file("work")};
  auto arguments = range;
  const auto no_build = cli_test::kgate_cli(arguments);
  EXPECT_EQ(no_build.status, 2);
  EXPECT_NE(no_build.err.find("give --build-cmd CMD and --bench PATH"), std::string::npos) << no_build.err;

  arguments.insert(arguments.end(), {"--build-cmd", "echo compiling; exit 3", "--bench", "out/mykernels_bench"});
  const auto failed = cli_test::kgate_cli(arguments);
  EXPECT_EQ(failed.status, 2);
  EXPECT_NE(failed.err.find("the build command failed (exit status 3)"), std::string::npos) << failed.err;
  EXPECT_NE(failed.err.find("compiling"), std::string::npos) << "the end of the build's log: " << failed.err;

  arguments = range;
  arguments.insert(arguments.end(), {"--build-cmd", "true", "--bench", "out/mykernels_bench"});
  const auto no_binary = cli_test::kgate_cli(arguments);
  EXPECT_EQ(no_binary.status, 2);
  EXPECT_NE(no_binary.err.find("the build command made no out/mykernels_bench"), std::string::npos) << no_binary.err;
}

}  // namespace
}  // namespace kgate
