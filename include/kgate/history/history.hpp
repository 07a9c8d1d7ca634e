#pragma once
// The nightly history: every run's per-benchmark medians in an SQLite database, the series of one
// benchmark on one GPU over the runs, and the change points in those series (docs/history.md).
//
// A change point is found by E-divisive means with a permutation test (change_points.hpp) on the
// series of run medians, and then confirmed by the runs' own statistics: the step between the
// medians of the runs on either side (up to the neighbouring change points) must leave the band
// the gate would give it (compare.hpp: the benchmark's threshold; for CUPTI-timed runs at least
// their minimum detectable change, for event-timed ones at least the minimum change in time),
// and its median-ratio interval (median_ratio_interval) must exclude 1. A change point that fails
// is merged away, weakest first, and the others are judged again without it.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgate/history/change_points.hpp"
#include "kgate/gate/compare.hpp"
#include "kgate/results/results.hpp"
#include "kgate/base/statistics.hpp"

struct sqlite3;

namespace kgate {

// A database that cannot be opened or written, or is not a kgate history; one line.
class HistoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct HistoryRun {
  std::int64_t id = 0;
  std::string commit, date, gpu, gpu_name, host, suite, timer, source;  // gpu: slug; timer: "cupti", "events" or "mixed"
  bool dirty = false;
  int driver_version = 0;
  std::vector<JobPhase> job_s;  // the wall time of the job that made it, by phase (context.kgate.job_s)
  std::string label() const;    // "2026-11-20 1a2b3c4"
};

// One run's figures for one benchmark in one mode.
struct HistoryPoint {
  const HistoryRun* run = nullptr;
  double median_s = 0, ci_low_s = 0, ci_high_s = 0;  // 95% distribution-free interval of the median
  double rel_stddev = 0, min_detectable_change = 0, sm_clock_mhz = 0;
  std::size_t samples = 0;
  std::vector<double> repetition_medians_s;
  std::string timer;
};

// One benchmark's headline-mode medians on one GPU, oldest run first.
struct HistorySeries {
  std::string gpu, benchmark, family, role, mode;
  std::vector<HistoryPoint> points;
};

struct SeriesQuery {
  std::string benchmark_regex;      // ECMAScript regular expression, searched in the name; empty: all
  std::optional<std::string> gpu;   // GPU slug
  std::optional<std::size_t> last;  // only the newest N points of each series
};

class HistoryDb {
 public:
  // Opens (creating it and its tables when `create`) the database at `path`; one of an earlier
  // schema version is upgraded to this kgate's.
  HistoryDb(const std::string& path, bool create);
  ~HistoryDb();
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  struct Added {
    bool added = false;  // false: the same run (commit, date, host, GPU, suite) was already there
    HistoryRun run;
    std::size_t rows = 0;  // benchmark x mode rows written
  };
  // One transaction per run (its results and its job's phases), of any results format (kgate,
  // nvbench, plain Google Benchmark) once its context names the GPU and the date; concurrent adds
  // from several processes take turns. Throws HistoryError for a run without either, and for a
  // database that SQLite's integrity check finds damaged (checked before this object's first add).
  Added add(const RunResults& run, const std::string& source);

  // Every run, oldest first (the order of their dates: a nightly measures the commit of its day),
  // with its job's phases.
  const std::vector<HistoryRun>& runs() const { return runs_; }
  std::vector<HistorySeries> series(const SeriesQuery& query) const;
  // The runs of one GPU and suite rebuilt from the database for `kgate report` (newest `last`):
  // each benchmark's headline mode holds the repetition medians as its samples (the run median
  // alone when there are none) and the stored median; the context holds the job's phases.
  std::vector<std::pair<HistoryRun, RunResults>> runs_as_results(const std::string& gpu, const std::string& suite, std::size_t last) const;

 private:
  void load_runs();
  std::string path_;
  sqlite3* db_ = nullptr;
  std::vector<HistoryRun> runs_;
  bool checked_intact_ = false;
};

// ---------------------------------------------------------------------------------------------
// Change points

struct ChangeOptions {
  EDivisiveOptions search;
  Thresholds thresholds;     // the gate's: a step must exceed the benchmark's band and minimum change
  double confidence = 0.99;  // of the step's median-ratio interval (the gate's, 1 - its alpha)
};

struct ChangePoint {
  std::string gpu, benchmark, family, mode;
  std::size_t index = 0;  // in the series: the first run after the change
  const HistoryRun* last_good = nullptr;
  const HistoryRun* first_bad = nullptr;           // "bad" for a slowdown; the first run of the new level either way
  double before_median_s = 0, after_median_s = 0;  // medians of the run medians on either side
  RatioInterval ratio;                             // after / before (above 1: slower) with its median-ratio interval
  double p_value = 1;                              // of the permutation test
  double threshold = 0;
  double min_detectable_change = 0;  // the largest of the runs on either side (0 = none recorded)
  // The timer of every run on either side, or "events" when they differ (judged as event-timed, as
  // the gate judges a mix); CUPTI- and CPU-timed steps are judged by the detectable change.
  std::string timer = "events";
  std::size_t runs_before = 0, runs_after = 0;
  bool is_new = true;  // see mark_new_changes
  bool slowdown() const { return ratio.ratio > 1; }
};

std::vector<ChangePoint> find_change_points(const HistorySeries& series, const ChangeOptions& options);

// Which change points are new since a point in the history. `up_to_since(run)` says whether a run
// is at or before it. A change point is new when its first bad run is after it, or when the
// series cut at it does not show it (the same direction within `search.min_segment` runs): a step
// needs runs after it to be found, so the runs after --since can reveal an older one.
void mark_new_changes(const HistorySeries& series, std::vector<ChangePoint>& changes, const ChangeOptions& options,
                      const std::function<bool(const HistoryRun&)>& up_to_since);

// The runs at or before `since` among the history's `runs`, as a predicate for mark_new_changes: a
// date (2026-11-20: the runs before that day), a commit (its last run and every run before it) or
// "previous" (all but each GPU's newest run). The predicate points into `runs`, which must outlive
// it. Throws std::invalid_argument saying what it expected, or that no run is of the commit.
std::function<bool(const HistoryRun&)> runs_up_to(const std::string& since, const std::vector<HistoryRun>& runs);

// The change points of every series, in order; each marked new or not (mark_new_changes) when
// `up_to_since` is given, else all new.
std::vector<ChangePoint> find_changes(const std::vector<HistorySeries>& all, const ChangeOptions& options,
                                      const std::function<bool(const HistoryRun&)>& up_to_since);

nlohmann::json changes_to_json(const std::vector<ChangePoint>& changes);

// ---------------------------------------------------------------------------------------------
// What keys a run in the history

// The GPU, commit, date (ISO 8601 UTC) and suite given for runs whose files may not record them
// (`history add`'s --gpu, --commit, --date and --suite).
struct RunIdentity {
  std::optional<std::string> gpu{}, commit{}, date{}, suite{};
};

// Fills in the run's GPU, commit, date and suite where the file records none. Throws ResultsError
// naming `path` when it lacks one that `given` does not hold, or records another than `given`
// (a GPU compared by slug, a commit by prefix, a date in UTC), naming the option that gives it.
void complete_identity(RunResults& run, const std::string& path, const RunIdentity& given);

}  // namespace kgate
