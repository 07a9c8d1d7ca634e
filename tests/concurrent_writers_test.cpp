// Concurrent writers, as a sharded nightly runs them: four kgate processes at once, each updating
// one baseline file with its part of a whole-suite run, or adding its run to a new history
// database; three times in a row nothing may be lost and none may fail. The parts are synthetic:
// the recorded H100 run (tests/data/recorded-h100-main.json.gz), its samples thinned, split four
// ways by benchmark name, each with a commit and date of its own.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <map>

#include "kgate/history/history.hpp"
#include "kgate/results/file_lock.hpp"
#include "kgate/results/results_io.hpp"
#include "process.hpp"
#include "tests/cli_runner.hpp"
#include "tests/synthetic_results.hpp"

namespace {

namespace fs = std::filesystem;
using kgate::BenchmarkRecord;
using kgate::RunResults;
using kgate::synthetic::read_text;
using kgate::synthetic::TempDir;

constexpr std::size_t kWriters = 4;
constexpr int kTrials = 3;

// The recorded run with at most 64 samples per benchmark and mode, evenly spaced: a synthetic run
// of the whole suite that reads in a fraction of the time (what is tested is which entries
// survive, not their figures).
RunResults synthetic_whole_suite() {
  RunResults run = kgate::read_results_file(KGATE_TEST_DATA_DIR "/recorded-h100-main.json.gz");
  for (BenchmarkRecord& b : run.benchmarks)
    for (std::optional<kgate::TimingRecord>* timing : {&b.cold, &b.hot})
      if (*timing && (*timing)->samples_s.size() > 64) {
        std::vector<double>& samples = (*timing)->samples_s;
        std::vector<double> kept;
        for (std::size_t i = 0; i < 64; ++i) kept.push_back(samples[i * samples.size() / 64]);
        samples = std::move(kept);
      }
  return run;
}

// The run in kWriters synthetic parts, written as synthetic-part-<i>.json: part i holds
// every kWriters-th benchmark by name from the i-th, and its own commit and date, so that each is
// a run of its own in a history.
struct SyntheticParts {
  std::vector<std::string> files;
  std::map<std::string, std::string> file_of;  // benchmark name -> the part holding it

  SyntheticParts(const TempDir& dir, const RunResults& whole) {
    std::vector<std::string> names;
    for (const BenchmarkRecord& b : whole.benchmarks) names.push_back(b.name);
    std::sort(names.begin(), names.end());
    for (std::size_t i = 0; i < kWriters; ++i) {
      files.push_back(dir.file("synthetic-part-" + std::to_string(i) + ".json"));
      RunResults part = whole;
      std::erase_if(part.benchmarks, [&](const BenchmarkRecord& b) {
        return static_cast<std::size_t>(std::lower_bound(names.begin(), names.end(), b.name) - names.begin()) % kWriters != i;
      });
      for (const BenchmarkRecord& b : part.benchmarks) file_of[b.name] = files.back();
      part.context.git_commit = "5e0000000000000000000000000000000000000" + std::to_string(i);
      part.context.date = "2026-02-0" + std::to_string(i + 1) + "T12:00:00Z";
      kgate::write_results_file(files.back(), kgate::to_json(part));
    }
  }
};

// Runs kgate with `arguments` in kWriters processes at once, the i-th with `per_writer(i)` added;
// each one's exit status and its output.
std::vector<std::pair<int, std::string>> run_at_once(const TempDir& dir, const std::vector<std::string>& arguments,
                                                     const std::function<std::string(std::size_t)>& per_writer) {
  std::vector<std::future<int>> running;
  for (std::size_t i = 0; i < kWriters; ++i) {
    std::vector<std::string> argv = {KGATE_CLI_PATH};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    argv.push_back(per_writer(i));
    const std::string log = dir.file("writer-" + std::to_string(i) + ".log");
    running.push_back(std::async(std::launch::async, [argv, log] { return kgate::cli::run_process(argv, log, log); }));
  }
  std::vector<std::pair<int, std::string>> outcomes;
  for (std::size_t i = 0; i < kWriters; ++i) {
    const int status = running[i].get();  // before its output is read
    outcomes.emplace_back(status, read_text(dir.file("writer-" + std::to_string(i) + ".log")));
  }
  return outcomes;
}

class ConcurrentWriters : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { whole_ = new RunResults(synthetic_whole_suite()); }
  static void TearDownTestSuite() { delete whole_; }
  static RunResults* whole_;
  const TempDir dir_;
};
RunResults* ConcurrentWriters::whole_ = nullptr;

// The baseline file under `baseline_dir` (one GPU, one suite).
std::string only_baseline_in(const std::string& baseline_dir) {
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(baseline_dir))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  EXPECT_EQ(files.size(), 1u) << baseline_dir;
  return files.empty() ? "" : files.front();
}

TEST_F(ConcurrentWriters, FourBaselineUpdatesOfDisjointPartsKeepEveryEntry) {
  const SyntheticParts parts(dir_, *whole_);
  // What one update of the whole run records: every entry the four parts must leave, none stale.
  const std::string whole_file = dir_.file("synthetic-whole.json");
  kgate::write_results_file(whole_file, kgate::to_json(*whole_));
  const auto reference =
      kgate::cli_test::kgate_cli({"baseline", "update", "--force", "--baseline-dir", dir_.file("reference"), whole_file});
  ASSERT_EQ(reference.status, 0) << reference.err;
  const std::string reference_file = only_baseline_in(dir_.file("reference"));
  const RunResults expected = kgate::read_results_file(reference_file);
  ASSERT_GT(expected.benchmarks.size(), 200u);

  for (int trial = 0; trial < kTrials; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const std::string baseline_dir = dir_.file("baselines-" + std::to_string(trial));
    const fs::path file = fs::path(baseline_dir) / fs::relative(reference_file, dir_.file("reference"));
    fs::create_directories(file.parent_path());
    fs::copy_file(reference_file, file);  // an existing baseline, every entry from the whole run
    const auto outcomes =
        run_at_once(dir_, {"baseline", "update", "--force", "--baseline-dir", baseline_dir}, [&](std::size_t i) { return parts.files[i]; });
    for (const auto& [status, output] : outcomes) EXPECT_EQ(status, 0) << output;

    const RunResults stored = kgate::read_results_file(file.string());
    EXPECT_EQ(stored.benchmarks.size(), expected.benchmarks.size());
    std::size_t lost = 0, stale = 0;
    std::map<std::string, const BenchmarkRecord*> by_name;
    for (const BenchmarkRecord& b : stored.benchmarks) by_name[b.name] = &b;
    for (const BenchmarkRecord& b : expected.benchmarks) {
      const auto it = by_name.find(b.name);
      if (it == by_name.end()) ++lost;
      else if (it->second->provenance.at("source") != parts.file_of.at(b.name)) ++stale;
    }
    EXPECT_EQ(lost, 0u);
    EXPECT_EQ(stale, 0u) << "entries still from the whole run, their part's update lost";
    EXPECT_FALSE(fs::exists(file.string() + ".lock"));
  }
}

TEST_F(ConcurrentWriters, FourHistoryAddsIntoANewDatabaseAllSucceed) {
  const SyntheticParts parts(dir_, *whole_);
  for (int trial = 0; trial < kTrials; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const std::string db = dir_.file("history-" + std::to_string(trial) + ".sqlite");
    const auto outcomes = run_at_once(dir_, {"history", "add", "--db", db}, [&](std::size_t i) { return parts.files[i]; });
    for (const auto& [status, output] : outcomes) {
      EXPECT_EQ(status, 0) << output;
      EXPECT_NE(output.find("kgate history: added "), std::string::npos) << output;
    }
    EXPECT_EQ(kgate::HistoryDb(db, false).runs().size(), kWriters);
  }
}

TEST_F(ConcurrentWriters, AnUpdateThatCannotGetTheLockExitsTwoNamingTheHolder) {
  const SyntheticParts parts(dir_, *whole_);
  ASSERT_EQ(kgate::cli_test::kgate_cli({"baseline", "update", "--force", "--baseline-dir", dir_.file("b"), parts.files[0]}).status, 0);
  const std::string file = only_baseline_in(dir_.file("b")), before = read_text(file);
  const kgate::FileLock held(file, std::chrono::milliseconds(0), "synthetic holder", [](const std::string&) {});
  const auto refused = kgate::cli_test::kgate_cli(
      {"baseline", "update", "--force", "--lock-timeout", "0.2", "--baseline-dir", dir_.file("b"), parts.files[1]});
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("kgate baseline update: waiting for " + file + ".lock"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("is being updated by pid " + std::to_string(::getpid()) + " on "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("(synthetic holder); gave up after waiting 0.2 s: let that process finish, or wait longer with "
                             "--lock-timeout"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(read_text(file), before);
}

}  // namespace
