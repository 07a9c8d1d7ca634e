// kgate history: E-divisive means, the SQLite database and the change points, on series built
// from the two recorded H200 runs (tests/data/recorded-h200-run-a.json.gz, run-b) with synthetic
// run-to-run noise and planted steps (every generated series is named synthetic below).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <future>
#include <regex>

#include "cli_runner.hpp"
#include "kgate/history/change_points.hpp"
#include "kgate/history/history.hpp"
#include "kgate/results/results_io.hpp"
#include "normal_deviates.hpp"
#include "synthetic_results.hpp"
#include "thrown.hpp"

namespace kgate {
namespace {

using synthetic::TempDir;

// ---------------------------------------------------------------------------------------------
// E-divisive means on plain series

std::vector<double> synthetic_series(std::size_t n, double noise, std::uint64_t seed, const std::function<double(std::size_t)>& level) {
  std::vector<double> values;
  for (std::size_t i = 0; i < n; ++i) values.push_back(level(i) * (1 + noise * synthetic::normal_deviate(seed, i)));
  return values;
}

TEST(EDivisive, FindsAPlantedStepAtItsIndex) {
  const std::vector<double> values = synthetic_series(12, 0.005, 7, [](std::size_t i) { return i >= 6 ? 1.08 : 1.0; });
  EXPECT_EQ(best_split(values, 3).at, 6u);
  const std::vector<SplitTest> found = e_divisive(values, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].at, 6u);
  EXPECT_LE(found[0].p_value, 0.05);
}

TEST(EDivisive, IsDeterministicAndFindsNothingInNoise) {
  const std::vector<double> values = synthetic_series(40, 0.01, 11, [](std::size_t) { return 1.0; });
  EXPECT_TRUE(e_divisive(values, {}).empty());
  const std::vector<double> step = synthetic_series(30, 0.01, 3, [](std::size_t i) { return i >= 10 ? 1.05 : 1.0; });
  const std::vector<SplitTest> first = e_divisive(step, {}), second = e_divisive(step, {});
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].at, second[i].at);
    EXPECT_EQ(first[i].p_value, second[i].p_value);
  }
}

TEST(EDivisive, FindsTwoStepsAndRespectsTheMinimumSegment) {
  const std::vector<double> values = synthetic_series(30, 0.005, 5, [](std::size_t i) { return i >= 20 ? 1.0 : i >= 10 ? 1.1 : 1.0; });
  const std::vector<SplitTest> found = e_divisive(values, {});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].at, 10u);
  EXPECT_EQ(found[1].at, 20u);
  // Too short for two segments of three.
  EXPECT_TRUE(e_divisive(std::vector<double>{1, 1, 2, 2, 2}, {}).empty());
  EXPECT_EQ(best_split(std::vector<double>{1, 1, 1, 1, 1, 1}, 3).q, 0);
}

// ---------------------------------------------------------------------------------------------
// Series of whole runs built from the recorded H200 runs

const RunResults& recorded(char which) {
  static const RunResults a = read_results_file(KGATE_TEST_DATA_DIR "/recorded-h200-run-a.json.gz");
  static const RunResults b = read_results_file(KGATE_TEST_DATA_DIR "/recorded-h200-run-b.json.gz");
  return which == 'a' ? a : b;
}

std::string synthetic_commit(std::size_t run) {
  char text[41];
  std::snprintf(text, sizeof text, "%016llx%016llx%08x", static_cast<unsigned long long>(splitmix64(run)),
                static_cast<unsigned long long>(splitmix64(run + 1000)), static_cast<unsigned>(run));
  return text;
}

// Every sample times `factor`: the summary's statistics scale with them (no need to sort again).
void scale(std::optional<TimingRecord>& timing, double factor) {
  if (!timing) return;
  for (double& s : timing->samples_s) s *= factor;
  for (double& s : timing->repetition_medians_s) s *= factor;
  SampleSummary& summary = timing->summary;
  for (double* statistic : {&summary.median, &summary.mean, &summary.stddev, &summary.min, &summary.max, &summary.p10, &summary.p90})
    *statistic *= factor;
}

// Synthetic run `index` of a series: the recorded run A (even runs) or B (odd runs), each
// benchmark's times scaled by (1 + noise x a normal deviate) and by `planted(name, index)`.
RunResults synthetic_run(std::size_t index, double noise, const std::function<double(const std::string&, std::size_t)>& planted,
                         std::size_t copies = 1) {
  const RunResults& source = recorded(index % 2 ? 'b' : 'a');
  RunResults run;
  run.context = source.context;
  run.context.git_commit = synthetic_commit(index);
  char date[64];
  std::snprintf(date, sizeof date, "2026-%02zu-%02zuT03:00:00Z", 1 + index / 28, 1 + index % 28);
  run.context.date = date;
  for (std::size_t copy = 0; copy < copies; ++copy)
    for (std::size_t b = 0; b < source.benchmarks.size(); ++b) {
      if (run.benchmarks.size() == 329 && copies > 1) break;
      BenchmarkRecord r = source.benchmarks[b];
      if (copy > 0) r.name = "synthetic-copy-" + std::to_string(copy) + "/" + r.name;
      const double factor = (1 + noise * synthetic::normal_deviate(splitmix64(index), run.benchmarks.size())) * planted(r.name, index);
      scale(r.cold, factor);
      scale(r.hot, factor);
      run.benchmarks.push_back(std::move(r));
    }
  return run;
}

constexpr const char* kPlanted = "rmsnorm/vectorized/m:32768/n:8192/bf16";

std::vector<ChangePoint> all_changes(const HistoryDb& db, const ChangeOptions& options = {}) {
  std::vector<ChangePoint> changes;
  for (const HistorySeries& s : db.series({})) {
    const std::vector<ChangePoint> found = find_change_points(s, options);
    changes.insert(changes.end(), found.begin(), found.end());
  }
  return changes;
}

void add_series(HistoryDb& db, std::size_t runs, double noise, const std::function<double(const std::string&, std::size_t)>& planted) {
  for (std::size_t i = 0; i < runs; ++i) ASSERT_TRUE(db.add(synthetic_run(i, noise, planted), "synthetic-" + std::to_string(i)).added);
}

TEST(HistoryChanges, PlantedStepAtRunSevenOfTwelveIsFoundAtItsCommit) {
  TempDir dir;
  HistoryDb db(dir.file("history.sqlite"), true);
  add_series(db, 12, 0.005, [](const std::string& name, std::size_t run) { return name == kPlanted && run >= 6 ? 1.08 : 1.0; });
  const std::vector<ChangePoint> changes = all_changes(db);
  ASSERT_EQ(changes.size(), 1u) << changes.front().benchmark;
  const ChangePoint& c = changes.front();
  EXPECT_EQ(c.benchmark, kPlanted);
  EXPECT_TRUE(c.slowdown());
  EXPECT_EQ(c.first_bad->commit, synthetic_commit(6));  // run 7 of 12
  EXPECT_EQ(c.last_good->commit, synthetic_commit(5));
  EXPECT_NEAR(c.ratio.ratio, 1.08, 0.015);
  EXPECT_GT(c.ratio.low, 1.04);
  EXPECT_EQ(c.runs_before, 6u);
  EXPECT_EQ(c.runs_after, 6u);
}

TEST(HistoryChanges, TheSameSeriesWithoutTheStepHasNoChangePoint) {
  TempDir dir;
  HistoryDb db(dir.file("history.sqlite"), true);
  add_series(db, 12, 0.005, [](const std::string&, std::size_t) { return 1.0; });
  const std::vector<ChangePoint> changes = all_changes(db);
  EXPECT_TRUE(changes.empty()) << changes.size() << " change points, the first in " << changes.front().benchmark;
}

TEST(HistoryChanges, ADriftOfOnePercentPerRunIsReported) {
  TempDir dir;
  HistoryDb db(dir.file("history.sqlite"), true);
  add_series(db, 12, 0.005, [](const std::string& name, std::size_t run) { return name == kPlanted ? std::pow(1.01, run) : 1.0; });
  const std::vector<ChangePoint> changes = all_changes(db);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes.front().benchmark, kPlanted);
  EXPECT_TRUE(changes.front().slowdown());
  EXPECT_GT(changes.front().ratio.ratio, 1.05);
}

TEST(HistoryChanges, AStepBelowTheThresholdIsNotConfirmed) {
  TempDir dir;
  HistoryDb db(dir.file("history.sqlite"), true);
  add_series(db, 12, 0.002, [](const std::string& name, std::size_t run) { return name == kPlanted && run >= 6 ? 1.03 : 1.0; });
  EXPECT_TRUE(all_changes(db).empty());  // found by E-divisive, but 3% is inside the 5% band
  ChangeOptions tight;
  tight.thresholds.default_fraction = 0.02;
  const std::vector<ChangePoint> changes = all_changes(db, tight);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes.front().first_bad->commit, synthetic_commit(6));
}

// CUPTI-timed runs are judged as the gate judges them: the band is at least their minimum
// detectable change, and the 1 us minimum change in time does not apply.
TEST(HistoryChanges, CuptiTimedRunsAreJudgedByTheirDetectableChange) {
  std::vector<HistoryRun> runs(12);
  HistorySeries series{"nvidia-h200", "rmsnorm/vectorized/m:1/n:1/bf16", "rmsnorm", "candidate", "cold", {}};
  const std::vector<double> medians = synthetic_series(12, 0.002, 9, [](std::size_t i) { return i >= 6 ? 4.4e-6 : 4e-6; });
  for (std::size_t i = 0; i < 12; ++i) {
    runs[i].commit = synthetic_commit(i);
    HistoryPoint point;
    point.run = &runs[i];
    point.median_s = medians[i];
    point.min_detectable_change = 0.02;
    point.timer = "cupti";
    series.points.push_back(point);
  }
  // A 10% step of 0.4 us: under the minimum change in time, over the detectable change.
  const std::vector<ChangePoint> cupti = find_change_points(series, {});
  ASSERT_EQ(cupti.size(), 1u);
  EXPECT_EQ(cupti.front().timer, "cupti");
  EXPECT_EQ(cupti.front().first_bad->commit, synthetic_commit(6));
  for (HistoryPoint& p : series.points) p.timer = "cpu";  // plain Google Benchmark's wall clock: judged the same way
  ASSERT_EQ(find_change_points(series, {}).size(), 1u);
  EXPECT_EQ(find_change_points(series, {}).front().timer, "cpu");
  for (HistoryPoint& p : series.points) p.min_detectable_change = 0.15;
  EXPECT_TRUE(find_change_points(series, {}).empty());  // the runs cannot tell 10%
  for (HistoryPoint& p : series.points) p.timer = "events";
  EXPECT_TRUE(find_change_points(series, {}).empty());  // event-timed: 0.4 us is under the 1 us minimum change
  series.points[0].timer = "cupti";
  for (HistoryPoint& p : series.points) p.min_detectable_change = 0.02;
  EXPECT_TRUE(find_change_points(series, {}).empty());  // a mix is judged as event-timed, as the gate judges it
}

TEST(HistoryChanges, NewSinceSaysWhichRunsRevealedTheChange) {
  TempDir dir;
  HistoryDb db(dir.file("history.sqlite"), true);
  add_series(db, 12, 0.005, [](const std::string& name, std::size_t run) { return name == kPlanted && run >= 6 ? 1.08 : 1.0; });
  const HistorySeries series = db.series({.benchmark_regex = "^rmsnorm/vectorized/m:32768/n:8192/bf16$", .gpu = {}, .last = {}}).at(0);
  const ChangeOptions options;
  const auto up_to = [&](std::size_t run) {
    const std::string date = db.runs().at(run).date;
    return [date](const HistoryRun& r) { return r.date <= date; };
  };
  std::vector<ChangePoint> changes = find_change_points(series, options);
  mark_new_changes(series, changes, options, up_to(10));  // runs 1-11 already showed it
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_FALSE(changes.front().is_new);
  mark_new_changes(series, changes, options, up_to(7));  // two runs after the step: too few to show it
  EXPECT_TRUE(changes.front().is_new);
  mark_new_changes(series, changes, options, up_to(3));  // before the step
  EXPECT_TRUE(changes.front().is_new);
}

TEST(HistoryChanges, FindChangesMarksThoseNewSinceACommitDateOrThePreviousRun) {
  TempDir dir;
  HistoryDb db(dir.file("history.sqlite"), true);
  add_series(db, 12, 0.005, [](const std::string& name, std::size_t run) { return name == kPlanted && run >= 6 ? 1.08 : 1.0; });
  const std::vector<HistorySeries> all = db.series({.benchmark_regex = "^rmsnorm/vectorized/m:32768/n:8192/bf16$", .gpu = {}, .last = {}});
  const std::vector<HistoryRun>& runs = db.runs();
  const auto changes = [&](const std::string& since) { return find_changes(all, {}, runs_up_to(since, runs)); };
  ASSERT_EQ(find_changes(all, {}, nullptr).size(), 1u);
  EXPECT_TRUE(find_changes(all, {}, nullptr).front().is_new) << "without --since every change point is new";
  EXPECT_FALSE(changes(runs.at(10).commit).front().is_new) << "runs up to the 11th already showed it";
  EXPECT_TRUE(changes(runs.at(3).commit).front().is_new) << "the step came after the 4th run";
  EXPECT_FALSE(changes("previous").front().is_new);
  EXPECT_TRUE(changes(runs.at(4).date.substr(0, 10)).front().is_new) << "before that day: the runs up to the 4th";
  EXPECT_TRUE(runs_up_to("previous", runs)(runs.at(10)));
  EXPECT_FALSE(runs_up_to("previous", runs)(runs.back()));
  EXPECT_THROW(runs_up_to("yesterday", runs), std::invalid_argument);
  EXPECT_THROW(runs_up_to("abcdef1234", runs), std::invalid_argument) << "no run of that commit";
}

TEST(HistoryIdentity, WhatAFileLacksComesFromTheOptionsAndMustNotContradictIt) {
  RunResults plain = synthetic::run({synthetic::benchmark("rmsnorm/vectorized/m:1/n:8/bf16", {})});
  plain.context.gpu_name.clear();
  plain.context.git_commit.clear();
  const auto refusal = [](RunResults run, const RunIdentity& given) {
    return testing_support::message_thrown<ResultsError>([&] { complete_identity(run, "run.json", given); });
  };
  EXPECT_EQ(refusal(plain, {}), "run.json: does not say which GPU it ran on (plain Google Benchmark JSON does not): give --gpu NAME");
  EXPECT_NE(refusal(plain, {.gpu = "NVIDIA H200"}).find("records no commit"), std::string::npos);
  RunResults completed = plain;
  complete_identity(completed, "run.json", {.gpu = "NVIDIA H200", .commit = "abc1234", .date = std::nullopt, .suite = "mine"});
  EXPECT_EQ(completed.context.gpu_name, "NVIDIA H200");
  EXPECT_EQ(completed.context.git_commit, "abc1234");
  EXPECT_EQ(completed.context.suite, "mine");
  EXPECT_EQ(refusal(completed, {.gpu = "NVIDIA H100 80GB HBM3"}),
            "run.json: ran on NVIDIA H200, not the --gpu given (NVIDIA H100 80GB HBM3)");
  EXPECT_EQ(refusal(completed, {.gpu = "nvidia h200", .commit = "abc12"}), "") << "the GPU by slug, the commit by prefix";
}

// 100 nightly runs of a 329-benchmark suite (the recorded 188, and 141 of them again under
// synthetic names), five benchmarks with a planted 10% step at run 61: added and analysed in
// under 10 s.
// This thread's CPU time: the budget is the history's own work, which a loaded 2-core CI machine
// (ctest runs two tests at a time there) stretches in wall time but not in CPU time.
double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

TEST(HistoryChanges, HundredRunsOf329BenchmarksAreAddedAndAnalysedInUnderTenSeconds) {
  TempDir dir;
  const std::vector<std::string> planted = {"rmsnorm/vectorized/m:32768/n:8192/bf16", "rmsnorm/naive/m:4096/n:4096/bf16",
                                            "synthetic-copy-1/rmsnorm/vectorized/m:32768/n:8192/bf16",
                                            "synthetic-copy-1/rmsnorm/naive/m:4096/n:4096/bf16",
                                            "synthetic-copy-1/rmsnorm/vectorized/m:4096/n:4096/bf16"};
  const auto step = [&](const std::string& name, std::size_t run) {
    return run >= 60 && std::find(planted.begin(), planted.end(), name) != planted.end() ? 1.10 : 1.0;
  };
  // Only adding and analysing are timed: making the synthetic runs is not the history's work.
  // Each run is made just before it is added (100 runs of 1.6 million samples would need 1.3 GB).
  HistoryDb db(dir.file("history.sqlite"), true);
  double add_s = 0;
  for (std::size_t i = 0; i < 100; ++i) {
    const RunResults run = synthetic_run(i, 0.005, step, 2);
    ASSERT_EQ(run.benchmarks.size(), 329u);
    const double start = thread_cpu_s();
    db.add(run, "synthetic-" + std::to_string(i));
    add_s += thread_cpu_s() - start;
  }
  const double added = thread_cpu_s();
  const std::vector<ChangePoint> changes = all_changes(db);
  const double analyse_s = thread_cpu_s() - added;
  std::printf("100 runs x 329 benchmarks: added in %.2f s, analysed in %.2f s of CPU time; database %.1f MB\n", add_s, analyse_s,
              static_cast<double>(std::filesystem::file_size(dir.file("history.sqlite"))) / 1e6);
  EXPECT_LT(add_s + analyse_s, 10.0);

  std::vector<std::string> found;
  for (const ChangePoint& c : changes) {
    found.push_back(c.benchmark);
    EXPECT_EQ(c.first_bad->commit, synthetic_commit(60)) << c.benchmark;
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> expected = planted;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(found, expected);
}

// The history takes every mode's median interval (statistics.hpp) by two selections: the same
// order statistics as sorting, with ties and at every size.
TEST(MedianInterval, SelectionGivesTheSortedOrderStatistics) {
  for (std::size_t n = 1; n < 300; n += 7)
    for (const double confidence : {0.5, 0.95, 0.999}) {
      std::vector<double> values;
      for (std::size_t i = 0; i < n; ++i) values.push_back(std::round(10 * synthetic::normal_deviate(n, i)));  // many ties
      std::vector<double> sorted = values;
      std::sort(sorted.begin(), sorted.end());
      const double count = static_cast<double>(n), reach = normal_quantile((1 + confidence) / 2) * std::sqrt(count) / 2;
      const MedianInterval interval = median_interval(values, confidence);
      EXPECT_EQ(interval.low, sorted[static_cast<std::size_t>(std::clamp(std::floor(count / 2 - reach) - 1, 0.0, count - 1))]) << n;
      EXPECT_EQ(interval.high, sorted[static_cast<std::size_t>(std::clamp(std::ceil(count / 2 + reach), 0.0, count - 1))]) << n;
    }
}

// ---------------------------------------------------------------------------------------------
// The database

TEST(HistoryDb, AddsOnceOrdersByDateAndKeepsTheTimer) {
  TempDir dir;
  const std::string path = dir.file("history.sqlite");
  synthetic::Timing t;
  RunResults later = synthetic::run({synthetic::benchmark("rmsnorm/vectorized/m:1/n:1/bf16", t)});
  later.context.date = "2026-11-22T03:00:00Z";
  later.context.git_commit = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
  later.benchmarks[0].cold->timer = "cupti";
  later.benchmarks[0].cold->min_detectable_change = 0.012;
  t.median_s = 12e-6;
  RunResults earlier = synthetic::run({synthetic::benchmark("rmsnorm/vectorized/m:1/n:1/bf16", t)});
  earlier.context.git_commit = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  {
    HistoryDb db(path, true);
    EXPECT_TRUE(db.add(later, "later.json").added);
    EXPECT_FALSE(db.add(later, "later.json").added);
    EXPECT_TRUE(db.add(earlier, "earlier.json").added);
  }
  const HistoryDb db(path, false);
  ASSERT_EQ(db.runs().size(), 2u);
  EXPECT_EQ(db.runs()[0].commit, earlier.context.git_commit);  // by date, not by the order added
  EXPECT_EQ(db.runs()[1].timer, "cupti");
  EXPECT_EQ(db.runs()[0].timer, "events");
  const std::vector<HistorySeries> series = db.series({});
  ASSERT_EQ(series.size(), 1u);
  ASSERT_EQ(series[0].points.size(), 2u);
  EXPECT_EQ(series[0].gpu, "nvidia-h200");
  EXPECT_EQ(series[0].mode, "cold");
  EXPECT_DOUBLE_EQ(series[0].points[1].min_detectable_change, 0.012);
  EXPECT_DOUBLE_EQ(series[0].points[1].median_s, later.benchmarks[0].cold->summary.median);
  EXPECT_LE(series[0].points[1].ci_low_s, series[0].points[1].median_s);
  EXPECT_GE(series[0].points[1].ci_high_s, series[0].points[1].median_s);
  EXPECT_EQ(series[0].points[1].repetition_medians_s, later.benchmarks[0].cold->repetition_medians_s);
  EXPECT_EQ(db.series({.benchmark_regex = "gemv", .gpu = {}, .last = {}}).size(), 0u);
  EXPECT_EQ(db.series({.benchmark_regex = "", .gpu = "nvidia-h100", .last = {}}).size(), 0u);
  EXPECT_EQ(db.series({.benchmark_regex = "", .gpu = {}, .last = 1}).at(0).points.size(), 1u);

  const auto rebuilt = db.runs_as_results("nvidia-h200", "kgate", 10);
  ASSERT_EQ(rebuilt.size(), 2u);
  const BenchmarkRecord& r = rebuilt[1].second.benchmarks.at(0);
  EXPECT_EQ(r.family, "rmsnorm");
  EXPECT_EQ(r.variant, "vectorized");
  EXPECT_EQ(r.shape, "m:1/n:1/bf16");
  EXPECT_DOUBLE_EQ(r.headline_median_s(), later.benchmarks[0].cold->summary.median);
}

TEST(HistoryDb, RefusesWhatIsNotAKgateHistory) {
  TempDir dir;
  EXPECT_THROW(HistoryDb(dir.file("missing.sqlite"), false), HistoryError);
  const std::string text = dir.write("text.sqlite", "not a database at all, just some text that is long enough to read");
  EXPECT_THROW(HistoryDb(text, true), HistoryError);
}

// Runs `sql` on the database at `path` as another program would, behind kgate's back.
void alter(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(HistoryDb, RefusesAHistoryWhoseTablesLackAColumn) {
  for (const auto& [table, column] : {std::pair{"results", "sm_clock_mhz"}, std::pair{"job_phases", "seconds"}}) {
    TempDir dir;
    const std::string path = dir.file("history.sqlite");
    { HistoryDb created(path, true); }
    alter(path, std::string("ALTER TABLE ") + table + " DROP COLUMN " + column);
    try {
      const HistoryDb db(path, false);
      ADD_FAILURE() << "opened a history whose " << table << " table lacks a column";
    } catch (const HistoryError& e) {
      EXPECT_EQ(std::string(e.what()), path + ": not a kgate history database of schema version 2: no such column: " + column);
    }
  }
}

// A synthetic run of one benchmark on day `day` of January, and its job's phases.
RunResults synthetic_job_run(int day, std::vector<JobPhase> job) {
  RunResults run = synthetic::run({synthetic::benchmark("rmsnorm/vectorized/m:1/n:1/bf16", {.seed = static_cast<std::uint64_t>(day)})});
  run.context.date = "2026-01-" + std::string(day < 10 ? "0" : "") + std::to_string(day) + "T03:00:00Z";
  run.context.git_commit = synthetic_commit(static_cast<std::size_t>(day));
  run.context.job_s = std::move(job);
  return run;
}

TEST(HistoryDb, KeepsTheJobPhasesOfEachRunInTheJobsOrder) {
  TempDir dir;
  const std::string path = dir.file("history.sqlite");
  // Not in alphabetical order, and one run without: each comes back as the job recorded it.
  const std::vector<JobPhase> job = {{"suite", 104.5}, {"build", 61.25}, {"peers", 7}, {"compare_and_report", 2.5}};
  {
    HistoryDb db(path, true);
    ASSERT_TRUE(db.add(synthetic_job_run(2, job), "synthetic-2.json").added);
    EXPECT_EQ(db.runs().back().job_s, job);
    ASSERT_TRUE(db.add(synthetic_job_run(1, {}), "synthetic-1.json").added);
    EXPECT_FALSE(db.add(synthetic_job_run(2, {{"build", 1}}), "synthetic-2.json").added);
  }
  const HistoryDb db(path, false);
  ASSERT_EQ(db.runs().size(), 2u);
  EXPECT_TRUE(db.runs()[0].job_s.empty());
  EXPECT_EQ(db.runs()[1].job_s, job) << "the run added again keeps its job's phases";
  const auto rebuilt = db.runs_as_results("nvidia-h200", "kgate", 10);
  ASSERT_EQ(rebuilt.size(), 2u);
  EXPECT_TRUE(rebuilt[0].second.context.job_s.empty());
  EXPECT_EQ(rebuilt[1].second.context.job_s, job);
}

// The tables of schema version 1, as kgate wrote them before the job's phases were kept. Written
// out here, not taken from history_db.cpp's migrations: a fixture that followed the code could not
// catch an upgrade that no longer reads what older kgate versions wrote.
constexpr const char* kSchemaVersion1 = R"(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  commit_sha TEXT NOT NULL, dirty INTEGER NOT NULL, date TEXT NOT NULL,
  gpu TEXT NOT NULL, gpu_name TEXT NOT NULL, gpu_uuid TEXT NOT NULL, host TEXT NOT NULL,
  driver_version INTEGER NOT NULL, suite TEXT NOT NULL, timer TEXT NOT NULL,
  source TEXT NOT NULL, added TEXT NOT NULL,
  UNIQUE (commit_sha, date, host, gpu_uuid, suite));
CREATE TABLE results (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  benchmark TEXT NOT NULL, family TEXT NOT NULL, role TEXT NOT NULL, mode TEXT NOT NULL,
  headline INTEGER NOT NULL, status TEXT NOT NULL,
  median_s REAL, ci_low_s REAL, ci_high_s REAL, samples INTEGER NOT NULL, rel_stddev REAL,
  repetition_medians TEXT NOT NULL, min_detectable_change REAL NOT NULL, timer TEXT NOT NULL,
  sm_clock_mhz REAL,
  PRIMARY KEY (run_id, benchmark, mode)) WITHOUT ROWID;
INSERT INTO runs VALUES (1, '0123456789abcdef0123456789abcdef01234567', 0, '2025-12-31T03:00:00Z', 'nvidia-h200', 'NVIDIA H200',
  'GPU-0000', 'synthetic-host', 13000, 'kgate', 'events', 'synthetic-version-1.json', '2025-12-31T04:00:00Z');
INSERT INTO results VALUES (1, 'rmsnorm/vectorized/m:1/n:1/bf16', 'rmsnorm', 'candidate', 'cold', 1, 'ok', 1e-05, 9.9e-06, 1.01e-05,
  60, 0.01, '[1e-05]', 0, 'events', 1980);
PRAGMA user_version = 1;
)";

std::int64_t user_version(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_stmt* query = nullptr;
  std::int64_t version = -1;
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK && sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &query, nullptr) == SQLITE_OK &&
      sqlite3_step(query) == SQLITE_ROW)
    version = sqlite3_column_int64(query, 0);
  sqlite3_finalize(query);
  sqlite3_close(db);
  return version;
}

TEST(HistoryDb, UpgradesAVersionOneHistoryAndKeepsItsRuns) {
  TempDir dir;
  const std::string path = dir.file("history.sqlite");
  alter(path, kSchemaVersion1);
  ASSERT_EQ(user_version(path), 1);
  {
    const HistoryDb db(path, false);  // show, changes and report open it so, as well as add
    EXPECT_EQ(user_version(path), 2);
    ASSERT_EQ(db.runs().size(), 1u);
    EXPECT_EQ(db.runs()[0].source, "synthetic-version-1.json");
    EXPECT_TRUE(db.runs()[0].job_s.empty());
    const std::vector<HistorySeries> series = db.series({});
    ASSERT_EQ(series.size(), 1u);
    EXPECT_DOUBLE_EQ(series[0].points.at(0).median_s, 1e-05);
  }
  HistoryDb db(path, true);
  const std::vector<JobPhase> job = {{"build", 61.2}, {"suite", 105}};
  ASSERT_TRUE(db.add(synthetic_job_run(1, job), "synthetic-1.json").added);
  ASSERT_EQ(db.runs().size(), 2u);
  EXPECT_EQ(db.runs()[1].job_s, job);
  EXPECT_EQ(db.runs_as_results("nvidia-h200", "kgate", 10).at(0).second.benchmarks.size(), 1u) << "the version-1 run's results";
}

// Several adds into one version-1 history at once (one per shard or GPU): each waits for the
// others' upgrade and writes its run and its job's phases.
TEST(HistoryDb, AddsAtOnceIntoAVersionOneHistoryAllSucceed) {
  TempDir dir;
  const std::string path = dir.file("history.sqlite");
  alter(path, kSchemaVersion1);
  std::vector<std::future<bool>> adding;
  for (int day = 1; day <= 4; ++day)
    adding.push_back(std::async(std::launch::async, [&path, day] {
      return HistoryDb(path, true).add(synthetic_job_run(day, {{"build", 10.0 * day}}), "synthetic.json").added;
    }));
  for (auto& added : adding) EXPECT_TRUE(added.get());
  const HistoryDb db(path, false);
  ASSERT_EQ(db.runs().size(), 5u);
  for (int day = 1; day <= 4; ++day) EXPECT_EQ(db.runs()[day].job_s, (std::vector<JobPhase>{{"build", 10.0 * day}})) << day;
}

TEST(HistoryDb, RefusesAHistoryOfANewerSchemaVersion) {
  TempDir dir;
  const std::string path = dir.file("history.sqlite");
  { HistoryDb created(path, true); }
  alter(path, "PRAGMA user_version = 3");
  EXPECT_EQ(testing_support::message_thrown<HistoryError>([&] { HistoryDb(path, true); }),
            path + ": history schema version 3 is newer than this kgate's (2)");
  EXPECT_EQ(user_version(path), 3);
}

// A damaged page in the results table: kgate history show reads it and fails, while an add, which
// only appends, would succeed and bury the next runs in a file nobody can read.
TEST(HistoryCli, AddRefusesADamagedDatabaseThatShowCallsMalformed) {
  TempDir dir;
  const std::string db = dir.file("h.sqlite");
  // Synthetic runs of 300 benchmarks: the results table spans many pages.
  const auto write_run = [&](int day) {
    std::vector<BenchmarkRecord> benchmarks;
    for (int i = 0; i < 300; ++i) benchmarks.push_back(synthetic::benchmark("synthetic/v/n:" + std::to_string(i), {}));
    RunResults run = synthetic::run(std::move(benchmarks));
    run.context.date = "2026-01-0" + std::to_string(day) + "T03:00:00Z";
    const std::string path = dir.file("synthetic-run-" + std::to_string(day) + ".json");
    write_results_file(path, to_json(run));
    return path;
  };
  ASSERT_EQ(cli_test::kgate_cli({"history", "add", "--db", db, write_run(1), write_run(2)}).status, 0);
  // The cell pointers of the results table's root page overwritten: every read of the table, as
  // show's, goes through it (SQLite's pages are 4096 bytes and numbered from 1).
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* query = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(handle, "SELECT rootpage FROM sqlite_master WHERE name = 'results'", -1, &query, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(query), SQLITE_ROW);
  const sqlite3_int64 root = sqlite3_column_int64(query, 0);
  sqlite3_finalize(query);
  sqlite3_close(handle);
  {
    std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>((root - 1) * 4096 + 8));
    file.write(std::string(16, '\xff').data(), 16);
  }
  const std::string damaged = synthetic::read_text(db);
  const auto show = cli_test::kgate_cli({"history", "show", ".", "--db", db});
  EXPECT_EQ(show.status, 2);
  EXPECT_NE(show.err.find("database disk image is malformed"), std::string::npos) << show.err;

  const auto add = cli_test::kgate_cli({"history", "add", "--db", db, write_run(3)});
  EXPECT_EQ(add.status, 2);
  // SQLite's own words vary by version ("On tree page 4 cell 0: ..." in 3.40, "Tree 4 page 4 cell
  // 0: ..." in 3.45): kgate's sentence around them, and a page named, are what is checked.
  EXPECT_NE(add.err.find("kgate history: " + db + ": the database is damaged (SQLite's integrity check: "), std::string::npos) << add.err;
  EXPECT_TRUE(std::regex_search(add.err, std::regex("SQLite's integrity check: [^)]*page [0-9]+"))) << add.err;
  EXPECT_NE(add.err.find("so kgate history add does not write into it"), std::string::npos) << add.err;
  EXPECT_EQ(synthetic::read_text(db), damaged);
}

// ---------------------------------------------------------------------------------------------
// The command line

TEST(HistoryCli, AddShowAndChangesWithTheirExitStatus) {
  TempDir dir;
  const std::string db = dir.file("h.sqlite");
  std::vector<std::string> add = {"history", "add", "--db", db};
  for (std::size_t i = 0; i < 12; ++i) {
    const RunResults run =
        synthetic_run(i, 0.005, [](const std::string& name, std::size_t r) { return name == kPlanted && r >= 6 ? 1.08 : 1.0; });
    RunResults small = run;
    std::erase_if(small.benchmarks, [](const BenchmarkRecord& b) { return b.family != "rmsnorm"; });
    add.push_back(dir.file("synthetic-run-" + std::to_string(i) + ".json"));
    write_results_file(add.back(), to_json(small));
  }
  const auto added = cli_test::kgate_cli(add);
  ASSERT_EQ(added.status, 0) << added.err;
  EXPECT_NE(added.out.find("added 2026-01-01"), std::string::npos) << added.out;
  const auto again = cli_test::kgate_cli({"history", "add", "--db", db, add.back()});
  EXPECT_EQ(again.status, 0);
  EXPECT_NE(again.out.find("already there"), std::string::npos);

  const auto show = cli_test::kgate_cli({"history", "show", "--db", db, "vectorized/m:32768/n:8192", "--last", "5"});
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_NE(show.out.find(std::string(kPlanted) + " on nvidia-h200 (cold, 5 runs)"), std::string::npos) << show.out;

  const std::string json = dir.file("changes.json");
  const auto changes = cli_test::kgate_cli({"history", "changes", "--db", db, "--json", json});
  EXPECT_EQ(changes.status, 1) << changes.out << changes.err;
  EXPECT_NE(changes.out.find("slower new " + std::string(kPlanted)), std::string::npos) << changes.out;
  const nlohmann::json doc = read_json_file(json);
  ASSERT_EQ(doc["changes"].size(), 1u);
  EXPECT_EQ(doc["changes"][0]["first_bad"]["commit"], synthetic_commit(6));
  // Runs up to the 11th already showed it: nothing new since then.
  const auto since = cli_test::kgate_cli({"history", "changes", "--db", db, "--since", synthetic_commit(10).substr(0, 10)});
  EXPECT_EQ(since.status, 0) << since.out << since.err;
  EXPECT_EQ(cli_test::kgate_cli({"history", "changes", "--db", db, "--since", "previous"}).status, 0);
  EXPECT_EQ(cli_test::kgate_cli({"history", "changes", "--db", db, "--since", "2026-01-05"}).status, 1);

  const std::string plain = dir.write("plain.json", synthetic::read_text(KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json"));
  const auto refused = cli_test::kgate_cli({"history", "add", "--db", db, plain});
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_NE(refused.err.find("plain.json: does not say which GPU it ran on (plain Google Benchmark JSON does not): give --gpu NAME"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(cli_test::kgate_cli({"history", "show", "--db", dir.file("none.sqlite"), "x"}).status, 2);
  EXPECT_EQ(cli_test::kgate_cli({"history", "frobnicate", "--db", db}).status, 2);
  EXPECT_EQ(cli_test::kgate_cli({"history", "changes", "--db", db, "--since", "nonsense!"}).status, 2);
}

// Plain Google Benchmark JSON names no GPU and no commit: history add takes them from --gpu and
// --commit, its date and host from Google Benchmark's context.
TEST(HistoryCli, AddTakesPlainGoogleBenchmarkWithWhatItLacks) {
  TempDir dir;
  const std::string db = dir.file("h.sqlite");
  const std::string plain = KGATE_TEST_DATA_DIR "/synthetic-gbench-repetitions.json";
  auto r = cli_test::kgate_cli({"history", "add", "--db", db, plain, "--gpu", "Intel Xeon 8480"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("records no commit (nvbench and plain Google Benchmark JSON do not, nor a kgate run built outside git): give "
                       "--commit SHA"),
            std::string::npos)
      << r.err;
  r = cli_test::kgate_cli({"history", "add", "--db", db, plain, "--gpu", "Intel Xeon 8480", "--commit", "abcdef1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "kgate history: added 2026-11-21 abcdef1 on intel-xeon-8480 (synthetic-host, timer mixed), 3 benchmark x mode rows\n");
  r = cli_test::kgate_cli({"history", "add", "--db", db, plain, "--gpu", "Intel Xeon 8480", "--commit", "abcdef1"});
  EXPECT_NE(r.out.find("already there"), std::string::npos) << r.out;
  const HistoryDb history(db, false);
  ASSERT_EQ(history.runs().size(), 1u);
  EXPECT_EQ(history.runs()[0].date, "2026-11-21T12:00:00Z");  // Google Benchmark's +00:00, as kgate writes dates
  EXPECT_EQ(history.runs()[0].suite, "gbench");
  const std::vector<HistorySeries> copy = history.series({.benchmark_regex = "BM_Copy", .gpu = {}, .last = {}});
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(copy[0].points[0].timer, "cpu");
  EXPECT_GT(copy[0].points[0].min_detectable_change, 0);  // from its own repetitions' spread
}

TEST(HistoryCli, AddRefusesOptionsThatContradictTheFile) {
  TempDir dir;
  const std::string db = dir.file("h.sqlite");
  const std::string run = dir.file("synthetic-run.json");
  write_results_file(run, to_json(synthetic::run({synthetic::benchmark("rmsnorm/vectorized/m:1/n:1/bf16", {})})));
  const auto refused = [&](std::vector<std::string> options, const std::string& expected) {
    std::vector<std::string> args = {"history", "add", "--db", db, run};
    args.insert(args.end(), options.begin(), options.end());
    const auto r = cli_test::kgate_cli(args);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  };
  refused({"--gpu", "NVIDIA H100"}, "synthetic-run.json: ran on NVIDIA H200, not the --gpu given (NVIDIA H100)");
  refused({"--commit", "deadbeef"}, "records commit 0123456789abcdef0123456789abcdef01234567, not the --commit given (deadbeef)");
  refused({"--date", "2026-11-22"}, "records the date 2026-11-21T12:00:00Z, not the --date given (2026-11-22T00:00:00Z)");
  refused({"--date", "yesterday"}, "--date: expected an ISO 8601 date such as 2026-11-21T12:00:00Z, got 'yesterday'");
  refused({"--commit", "v1.0"}, "--commit: expected a commit hash (git rev-parse HEAD), got 'v1.0'");
  refused({"--suite", "a/b"}, "suite name 'a/b' is not a plain file name");
  // What agrees with the file is accepted: the GPU's slug, a prefix of the commit, the same instant.
  const auto r = cli_test::kgate_cli({"history", "add", "--db", db, run, "--gpu", "nvidia-h200", "--commit", "0123456", "--date",
                                      "2026-11-21T13:00:00+01:00", "--suite", "nightly"});
  ASSERT_EQ(r.status, 0) << r.err;
  const HistoryDb history(db, false);
  ASSERT_EQ(history.runs().size(), 1u);
  EXPECT_EQ(history.runs()[0].suite, "nightly");
  EXPECT_EQ(history.runs()[0].commit, "0123456789abcdef0123456789abcdef01234567");
}

TEST(HistoryCli, JobsShowsEachRunsJobWallTimeByPhase) {
  TempDir dir;
  const std::string db = dir.file("h.sqlite");
  // Synthetic runs: the second records no job's phases, the third a phase of its own and its
  // phases in another order; the fourth ran on another GPU.
  std::vector<RunResults> runs = {synthetic_job_run(1, {{"build", 61.2}, {"suite", 105}}), synthetic_job_run(2, {}),
                                  synthetic_job_run(3, {{"suite", 98.5}, {"peers", 7}, {"build", 1.5}}),
                                  synthetic_job_run(4, {{"build", 50}})};
  runs[3].context.gpu_name = "NVIDIA H100 80GB HBM3";
  std::vector<std::string> add = {"history", "add", "--db", db};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    add.push_back(dir.file("synthetic-run-" + std::to_string(i) + ".json"));
    write_results_file(add.back(), to_json(runs[i]));
  }
  ASSERT_EQ(cli_test::kgate_cli(add).status, 0);
  // Each run's line: its date and commit, then `rest`.
  const auto run_line = [](int day, const std::string& rest) {
    return "2026-01-0" + std::to_string(day) + " " + synthetic_commit(static_cast<std::size_t>(day)).substr(0, 7) + rest + "\n";
  };

  auto r = cli_test::kgate_cli({"history", "jobs", "--db", db});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "run                 gpu                    host             total   build   suite   peers\n" +
                       run_line(1, "  nvidia-h200            synthetic-host   166 s  61.2 s   105 s       -") +
                       run_line(3, "  nvidia-h200            synthetic-host   107 s  1.50 s  98.5 s  7.00 s") +
                       run_line(4, "  nvidia-h100-80gb-hbm3  synthetic-host  50.0 s  50.0 s       -       -"));
  r = cli_test::kgate_cli({"history", "jobs", "--db", db, "--gpu", "nvidia-h200", "--last", "1"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "run                 gpu          host            total   suite   peers   build\n" +
                       run_line(3, "  nvidia-h200  synthetic-host  107 s  98.5 s  7.00 s  1.50 s"));

  // No run records its job's phases: said so, and nothing to fail on.
  const std::string none = dir.file("none.sqlite");
  ASSERT_EQ(cli_test::kgate_cli({"history", "add", "--db", none, add[5]}).status, 0);
  r = cli_test::kgate_cli({"history", "jobs", "--db", none});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "kgate history jobs: no run in " + none + " (1 runs) records the wall time of its job (kgate job-time)\n");
  r = cli_test::kgate_cli({"history", "jobs", "--db", db, "--gpu", "amd-mi300x"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "kgate history jobs: no run on amd-mi300x in " + db + " (4 runs) records the wall time of its job (kgate job-time)\n");
  EXPECT_EQ(cli_test::kgate_cli({"history", "jobs", "--db", db, "extra"}).status, 2);
  EXPECT_EQ(cli_test::kgate_cli({"history", "jobs", "--db", dir.file("missing.sqlite")}).status, 2);
}

TEST(HistoryCli, ReportDrawsTheTrendFromTheDatabase) {
  TempDir dir;
  const std::string db = dir.file("h.sqlite");
  for (std::size_t i = 0; i < 4; ++i) {
    RunResults run = synthetic_run(i, 0.005, [](const std::string&, std::size_t r) { return r >= 2 ? 1.1 : 1.0; });
    std::erase_if(run.benchmarks, [](const BenchmarkRecord& b) { return b.family != "rmsnorm"; });
    write_results_file(dir.file("synthetic-run-" + std::to_string(i) + ".json"), to_json(run));
  }
  ASSERT_EQ(cli_test::kgate_cli({"history", "add", "--db", db, dir.file("synthetic-run-0.json"), dir.file("synthetic-run-1.json"),
                                 dir.file("synthetic-run-2.json")})
                .status,
            0);
  const auto report = cli_test::kgate_cli({"report", dir.file("synthetic-run-3.json"), "--history", db, "--out", dir.file("report")});
  ASSERT_EQ(report.status, 0) << report.err;
  const std::string svg = synthetic::read_text(dir.file("report/trend-rmsnorm.svg"));
  EXPECT_NE(svg.find("2026-01-01 " + synthetic_commit(0).substr(0, 7)), std::string::npos);
  EXPECT_NE(svg.find("2026-01-03 " + synthetic_commit(2).substr(0, 7)), std::string::npos);
  EXPECT_EQ(cli_test::kgate_cli({"report", dir.file("synthetic-run-3.json"), "--history", dir.file("none.sqlite"), "--out", dir.file("r2")})
                .status,
            2);
}

}  // namespace
}  // namespace kgate
