// The search behind kgate bisect (bisect.hpp) with a fake kgate ab: each synthetic commit has a
// known speed level, and a comparison says slower or faster when the level moves beyond 5%.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli_runner.hpp"
#include "kgate/history/bisect.hpp"
#include "kgate/results/results_io.hpp"
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
      return std::map<std::string, Verdict>{{"watched", v}, {"other", base == 0 && head == levels.size() - 1 ? Verdict::same : Verdict::slower}};
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
  EXPECT_EQ(ab.calls, 5);  // c0-c4, c0-c2, c2-c4, c0-c1, c1-c2
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

// kgate bisect end to end without a GPU: a git repository of five commits whose build script
// (scripts/build-at.sh, as kgate bisect calls it) makes a stand-in kgate_bench that copies canned
// results, synthetic-fast.json or synthetic-slow.json (12% slower), as the commit's file `speed`
// says. The third commit plants the slowdown.
int shell(const std::string& command) { return std::system(command.c_str()); }

TEST(BisectCli, BuildsTheCommitsItNeedsAndNamesThePlantedOne) {
  synthetic::TempDir dir;
  const std::string repo = dir.file("repo"), canned = dir.file("canned");
  std::filesystem::create_directories(repo + "/scripts");
  std::filesystem::create_directories(canned);
  const std::string name = "rmsnorm/vectorized/m:1/n:1/bf16";
  write_results_file(canned + "/synthetic-fast.json", to_json(synthetic::run({synthetic::benchmark(name, {.median_s = 10e-6})})));
  write_results_file(canned + "/synthetic-slow.json", to_json(synthetic::run({synthetic::benchmark(name, {.median_s = 11.2e-6})})));
  dir.write("repo/scripts/build-at.sh",
            "#!/bin/sh\n"
            "# Stand-in for scripts/build-at.sh REVISION BUILD_DIR TARGET: a kgate_bench copying canned results.\n"
            "set -eu\n"
            "speed=$(git -C \"$(dirname \"$0\")/..\" show \"$1:speed\")\n"
            "mkdir -p \"$2/bench\"\n"
            "cat > \"$2/bench/kgate_bench\" <<EOF\n"
            "#!/bin/sh\n"
            "for a in \"\\$@\"; do case \\$a in\n"
            "  --benchmark_list_tests*) echo '" + name + "'; exit 0 ;;\n"
            "  --kgate_out=*) cp '" + canned + "/synthetic-'$speed'.json' \"\\${a#--kgate_out=}\" ;;\n"
            "esac; done\n"
            "EOF\n"
            "chmod +x \"$2/bench/kgate_bench\"\n"
            "echo built \"$1\" >> '" + dir.file("builds.log") + "'\n");
  const std::string git = "git -C '" + repo + "' -c user.name=kgate -c user.email=kgate@example.com ";
  ASSERT_EQ(shell("chmod +x '" + repo + "/scripts/build-at.sh' && " + git + "init -q"), 0);
  for (const char* speed : {"fast", "fast", "slow", "slow", "slow"})
    ASSERT_EQ(shell("echo " + std::string(speed) + " > '" + repo + "/speed' && " + git + "add -A && " + git + "commit -q --allow-empty -m " + speed), 0);

  const auto bisect = [&](const std::string& good, const std::string& bad) {
    return cli_test::kgate_cli({"bisect", "--source", repo, "--good", good, "--bad", bad, "--filter", "rmsnorm", "--rounds", "3",
                                "--work-dir", dir.file("work"), "--thresholds", dir.file("none.json")});
  };
  const auto found = bisect("HEAD~4", "HEAD");
  ASSERT_EQ(found.status, 0) << found.out << found.err;
  std::string third;
  ASSERT_EQ(shell(git + "rev-parse HEAD~2 > '" + dir.file("third") + "'"), 0);
  third = synthetic::read_text(dir.file("third"));
  third.pop_back();
  EXPECT_NE(found.out.find("first bad commit " + third + " slow"), std::string::npos) << found.out;
  EXPECT_NE(found.out.find("5 comparisons, 4 builds"), std::string::npos) << found.out;
  // Run again: every build and comparison is reused.
  const auto again = bisect("HEAD~4", "HEAD");
  EXPECT_EQ(again.status, 0);
  EXPECT_NE(again.out.find("5 comparisons, 0 builds"), std::string::npos) << again.out;
  // No slowdown between two fast commits; a bad commit that is not after the good one.
  EXPECT_EQ(bisect("HEAD~4", "HEAD~3").status, 1);
  EXPECT_EQ(bisect("HEAD", "HEAD~4").status, 2);
  EXPECT_EQ(cli_test::kgate_cli({"bisect", "--source", repo, "--good", "HEAD~4"}).status, 2);
}

}  // namespace
}  // namespace kgate
