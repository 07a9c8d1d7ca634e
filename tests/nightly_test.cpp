// kgate nightly without a GPU: synthetic shards of one night merged, compared with a synthetic
// baseline and reported; the history step against a local bare repository standing in for the
// remote, so that the branch it starts, the database it pushes and a second night's commit show.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cli_runner.hpp"
#include "kgate/results/results_io.hpp"
#include "synthetic_repository.hpp"
#include "synthetic_results.hpp"

namespace kgate {
namespace {

namespace fs = std::filesystem;
namespace syn = synthetic;

const std::string kA = "rmsnorm/vectorized/m:4096/n:4096/bf16";
const std::string kB = "fused_add_rmsnorm/vectorized/m:1/n:8192/bf16";

// The two shards of one night (dated `date`), kB `slowdown` times slower than the baseline.
void write_shards(const syn::TempDir& dir, const std::string& shards, const std::string& date, double slowdown = 1.0) {
  fs::create_directories(dir.file(shards));
  const std::vector<BenchmarkRecord> benchmarks = {syn::benchmark(kA, {.seed = 1}),
                                                   syn::benchmark(kB, {.median_s = 10e-6 * slowdown, .seed = 2})};
  for (std::size_t s = 0; s < benchmarks.size(); ++s) {
    RunResults shard = syn::run({benchmarks[s]});
    shard.context.date = date;
    shard.context.extra = {{"shard", std::to_string(s) + "/2"}};
    write_results_file(dir.file(shards + "/shard-" + std::to_string(s) + "-of-2.json"), to_json(shard));
  }
}

void write_baseline(const syn::TempDir& dir) {
  fs::create_directories(dir.file("baselines/nvidia-h200"));
  write_results_file(dir.file("baselines/nvidia-h200/kgate.json"),
                     to_json(syn::run({syn::benchmark(kA, {.seed = 3}), syn::benchmark(kB, {.seed = 4})})));
}

cli_test::Outcome nightly(const syn::TempDir& dir, const std::string& shards, std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"nightly", dir.file(shards),         "--baseline-dir", dir.file("baselines"),
                                   "--out",   dir.file("out-" + shards)};
  args.insert(args.end(), more.begin(), more.end());
  return cli_test::kgate_cli(args);
}

TEST(Nightly, MergesComparesAndReports) {
  const syn::TempDir dir;
  write_baseline(dir);
  write_shards(dir, "same", "2026-11-22T03:00:00Z");
  const std::string summary = dir.write("summary.md", "");
  setenv("GITHUB_STEP_SUMMARY", summary.c_str(), 1);
  const auto same = nightly(dir, "same");
  unsetenv("GITHUB_STEP_SUMMARY");
  EXPECT_EQ(same.status, 0) << same.out << same.err;
  for (const char* written : {"merged.json", "compare.json", "compare-junit.xml", "compare.md", "report/report.md"})
    EXPECT_TRUE(fs::exists(dir.file(std::string("out-same/") + written))) << written;
  EXPECT_EQ(read_results_file(dir.file("out-same/merged.json")).benchmarks.size(), 2u);
  EXPECT_EQ(syn::read_text(summary), syn::read_text(dir.file("out-same/compare.md")));

  write_shards(dir, "slow", "2026-11-23T03:00:00Z", 1.3);
  const auto slow = nightly(dir, "slow");
  EXPECT_EQ(slow.status, 1) << slow.out << slow.err;
  EXPECT_NE(slow.out.find(kB), std::string::npos) << slow.out;
}

TEST(Nightly, WithoutABaselineReportsAndSaysHowToRecordOne) {
  const syn::TempDir dir;
  write_shards(dir, "first", "2026-11-22T03:00:00Z");
  const auto first = nightly(dir, "first");
  EXPECT_EQ(first.status, 2) << first.out << first.err;
  EXPECT_NE(first.err.find("kgate baseline update --baseline-dir " + dir.file("baselines") + " " + dir.file("out-first/merged.json")),
            std::string::npos)
      << first.err;
  EXPECT_TRUE(fs::exists(dir.file("out-first/report/report.md")));

  fs::remove(dir.file("first/shard-1-of-2.json"));
  const auto missing = nightly(dir, "first");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("kgate nightly"), std::string::npos) << missing.err;
  EXPECT_EQ(nightly(dir, "first", {"--push"}).status, 2) << "--push belongs to the history step";
  EXPECT_EQ(nightly(dir, "nothing-here").status, 2);
}

TEST(Nightly, AddsEachNightToTheHistoryBranchAndPushesIt) {
  const syn::TempDir dir;
  write_baseline(dir);
  // The remote, and the job's clone of it with one commit of its own (the job's checkout).
  const std::string remote = dir.file("remote.git"), clone = dir.file("clone");
  const std::string git = "git -c user.name=kgate -c user.email=kgate@example.com ";
  syn::KernelRepository::shell(git + "init -q --bare '" + remote + "' && " + git + "clone -q '" + remote + "' '" + clone +
                               "' 2>/dev/null && " + git + "-C '" + clone + "' commit -q --allow-empty -m main && " + git + "-C '" + clone +
                               "' push -q origin HEAD");
  const std::vector<std::string> history = {"--history", "h200", "--source", clone, "--work-dir", dir.file("work"), "--push"};

  write_shards(dir, "night1", "2026-11-22T03:00:00Z");
  const auto first = nightly(dir, "night1", history);
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("no branch kgate-history on origin yet: starting it"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("pushed h200.sqlite to kgate-history"), std::string::npos) << first.out;
  EXPECT_TRUE(fs::exists(dir.file("out-night1/changes.txt")));

  write_shards(dir, "night2", "2026-11-23T03:00:00Z");
  const auto second = nightly(dir, "night2", history);
  ASSERT_EQ(second.status, 0) << second.out << second.err;
  EXPECT_EQ(second.out.find("starting it"), std::string::npos) << "the branch is on the remote now: " << second.out;
  const auto again = nightly(dir, "night2", history);
  EXPECT_EQ(again.status, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("already; nothing to push"), std::string::npos) << again.out;

  // Two nights on the branch, one commit each, and the database holds both runs.
  syn::KernelRepository::shell("git -C '" + remote + "' rev-list --count kgate-history > '" + dir.file("count") + "' && git -C '" + remote +
                               "' show kgate-history:h200.sqlite > '" + dir.file("h200.sqlite") + "'");
  EXPECT_EQ(syn::read_text(dir.file("count")), "2\n");
  const auto shown = cli_test::kgate_cli({"history", "show", kA, "--db", dir.file("h200.sqlite")});
  EXPECT_EQ(shown.status, 0) << shown.err;
  EXPECT_NE(shown.out.find("2026-11-23"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("2026-11-22"), std::string::npos) << shown.out;
}

}  // namespace
}  // namespace kgate
