#pragma once
// The regression gate: two runs of a suite compared benchmark by benchmark (matched by name), each
// given a verdict, with the reasons a reader needs to act on it (docs/compare.md). Its renderings
// (terminal table, JSON, JUnit, Markdown) are in comparison_output.hpp.
//
// Per benchmark, on the headline mode's samples: speedup = baseline median / new median (> 1 is
// faster), a distribution-free confidence interval of that ratio at 1 - alpha
// (median_ratio_interval), and a Mann–Whitney U p-value. With T the benchmark's threshold, the band of "no material change" is
// [1 / (1 + T), 1 + T] in speedup, and its edge on a side is 1 / (1 + T) (slower) or 1 + T (faster):
//   slower        speedup below the band, p < alpha, and the interval's upper end below 1;
//   faster        speedup above the band, p < alpha, and the interval's lower end above 1;
//   same          speedup inside the band and the whole interval inside the band;
//   at_threshold  a change as large as the threshold to within its interval: p < alpha, the whole
//                 interval within a quarter of the threshold of the band's edge on its side
//                 (|log(end / edge)| <= log(1 + T) / 4 for both ends: at T = 5%, changes of 3.7%
//                 to 6.3%; such an interval excludes 1), and the edge inside the interval. It does
//                 not fail the gate: the data say the change equals the threshold, which neither
//                 "beyond it" nor "inside it" would report truthfully;
//   noisy         anything else: a change beyond the threshold that is not significant, or an
//                 interval too wide to decide (reaching out of the band, not precisely at its edge);
// judged in time, and also in cycle space (time x the mode's median SM clock) when both sides
// know their clock: a change in time (slower, faster, at_threshold) that cycles do not confirm
// becomes what cycles say (`same` or `noisy`; at_threshold where one says beyond the threshold and
// the other at it), with a clock note (the GPU ran at another clock; the code did not change speed).
// When the new run pooled several repetitions (processes, rounds), slower/faster also needs every
// repetition's own median beyond the band on that side. Where one is not, but each is beyond the
// band or within the margin of its edge, and the interval lies within that margin, the verdict is
// at_threshold; otherwise noisy. An at_threshold verdict needs the same of every repetition.
// A side's spread (relative stddev) does not decide a verdict: the interval of the median ratio
// already holds what the spread does to the medians, whatever the samples' distribution, and a
// stddev above CompareOptions::noise_limit from a few outliers far from the median moves neither;
// such a row gets a note with both stddevs.
// The band is widened to the benchmark's minimum detectable change where that is larger than T:
// for CUPTI-timed samples the change its own data can resolve (detectable.hpp), for event-timed
// ones a fixed minimum change in time (Thresholds::min_change_s) that covers the launch overhead's
// shift between processes. A CUPTI-timed side is not compared with an event-timed one unless
// allowed (TimerMismatch).
// With fewer than 2 samples on a side no test is possible: inside the band -> same, outside ->
// noisy, both flagged low confidence.
// Outside the statistics: failed (the new run recorded an error or a wrong result), new (no
// usable baseline), missing (not in the new run, or skipped there).
// The gate fails on any `slower` or `failed`, except a `slower` vendor variant (role "vendor").
// Peers (role "peer") are not compared at all.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgate/results/results.hpp"

namespace kgate {

enum class Verdict { faster, slower, same, noisy, at_threshold, added, missing, failed };
inline constexpr Verdict kVerdicts[] = {Verdict::slower, Verdict::failed, Verdict::at_threshold, Verdict::faster,
                                        Verdict::noisy,  Verdict::added,  Verdict::missing,      Verdict::same};
std::string_view to_string(Verdict verdict);    // as shown: "faster", ..., "at threshold", "new" for added
std::string_view verdict_key(Verdict verdict);  // in JSON: to_string with '_' for ' ' ("at_threshold")
// The verdict whose verdict_key is `key`; nullopt when none is.
std::optional<Verdict> verdict_from_key(std::string_view key);

// The slowdown (and speedup) that counts as material, as a fraction: 0.05 = 5%.
// Precedence: a benchmark's own entry, then its family's, then the default. The command line's
// --threshold replaces the default only, so checked-in per-family and per-benchmark tuning stays.
struct Thresholds {
  double default_fraction = 0.05;
  std::map<std::string, double> families, benchmarks;
  // The smallest change in an event-timed median that can count, whatever its relative size: two
  // runs of the same code in separate processes shift short kernels by a fraction of a
  // microsecond that no within-run sample shows (on an H200, up to 0.87 us between back-to-back
  // suite runs, 16 of 60 benchmarks under 20 us moving over 5%): the launch overhead between the
  // events. A benchmark's band is widened to this much time. CUPTI-timed medians, which hold no
  // launch overhead, use their minimum detectable change instead (detectable.hpp).
  double min_change_s = 1e-6;
  double for_benchmark(const std::string& name, const std::string& family) const;
};
// baselines/thresholds.json: {"schema_version": 1, "default": 0.05, "min_change_us": 1.0,
// "families": {"rmsnorm": 0.03}, "benchmarks": {"<name>": 0.1}}; fractions in (0, 1], the minimum
// change in microseconds >= 0. Errors are ResultsError naming file and path.
Thresholds parse_thresholds(const nlohmann::json& doc, const std::string& source);
Thresholds read_thresholds_file(const std::string& path);

struct CompareOptions {
  Thresholds thresholds;
  double alpha = 0.01;        // significance level of the U test; the interval is at 1 - alpha
  double noise_limit = 0.10;  // relative stddev above which a row notes its sides' spread
  bool allow_env_mismatch = false;
  bool allow_timer_mismatch = false;
};

// Different GPU models: the comparison is refused unless allow_env_mismatch is set.
class EnvironmentMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A benchmark whose headline mode was CUPTI-timed on one side and event-timed on the other: the
// event-timed median holds a launch overhead of microseconds that the other does not, so the
// comparison is refused unless allow_timer_mismatch is set (then the event-timed rules apply).
class TimerMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BenchmarkComparison {
  std::string name, family;
  Verdict verdict = Verdict::same;
  bool low_confidence = false;  // fewer than 2 samples on a side: no significance test
  double threshold = 0;
  std::size_t baseline_samples = 0, new_samples = 0;
  double baseline_median_s = 0, new_median_s = 0;  // 0 when that side has none
  double speedup = 0;                              // baseline / new; 0 when not compared
  double ci_low = 0, ci_high = 0;                  // confidence interval of the speedup
  double p_value = 1;
  double baseline_clock_mhz = 0, new_clock_mhz = 0;  // 0 = unknown
  double cycle_speedup = 0;                          // 0 when a clock is unknown
  std::string timer;  // "cupti" | "events" | "cpu": how both sides' headline samples were timed; empty when not compared
  // The smallest change this comparison can detect, as a fraction: for CUPTI- or CPU-timed sides
  // the larger of the two sides' detectable_change(); 0 for event-timed sides (their minimum change
  // in time widens `threshold` instead) and rows not compared. threshold >= this.
  double min_detectable_change = 0;
  std::vector<std::string> notes;  // why: clock differences, counter deltas, errors
  // False for a vendor variant (cuBLAS): its verdict is shown, but a slowdown of another
  // library's code is no regression of kgate's and does not fail the gate. A failure does.
  bool gated = true;
  bool fails_gate() const { return verdict == Verdict::failed || (verdict == Verdict::slower && gated); }
};

struct ComparisonReport {
  std::string title = "kgate compare";  // the command that made it (`kgate ab` too), heading the renderings
  std::string baseline_source, new_source;
  std::vector<std::string> warnings;  // environment differences, shown above the table
  std::vector<std::string> notices;   // how the comparison was made (time-only, ...)
  double confidence = 0.99;           // of the intervals
  std::vector<BenchmarkComparison> benchmarks;

  std::size_t count(Verdict verdict) const;
  std::size_t gate_failures() const;  // rows that fails_gate()
  bool regression() const;            // any gate failure: the gate fails
  double geomean_speedup() const;     // over compared benchmarks; 0 when there are none
  // "3 slower, 1 faster, 40 same, 0 noisy, 1 at threshold, 1 failed; geomean speedup 0.987×": at
  // threshold, new, missing and failed only when nonzero.
  std::string summary_line() const;
};

// The counters that explain a change, as the gate's notes read them: a percentage of a peak or a hit
// rate changes by points, any other count by its ratio; a change is material at 5 points of a
// percentage or 10% of a count, and the profiled time itself (gpu__time_duration.sum) never
// explains one. metric_label gives the words a reader knows for kgate's default metrics
// ("DRAM throughput"), empty for any other.
bool is_percent_metric(std::string_view metric);
bool material_metric_change(std::string_view metric, double before, double after);
std::string_view metric_label(std::string_view metric);

// Throws EnvironmentMismatch (different GPU models, not allowed) and TimerMismatch (a benchmark
// timed by CUPTI on one side and by events on the other, not allowed).
ComparisonReport compare_runs(const RunResults& baseline, const RunResults& current, const std::string& baseline_source,
                              const std::string& new_source, const CompareOptions& options);

// The rows in the order a reader acts on them: slower (gated ones first), failed, at threshold,
// faster, noisy, new, missing, then same, and within each group the largest change (|log speedup|)
// first; `same` rows only when with_same.
std::vector<const BenchmarkComparison*> rows_by_impact(const ComparisonReport& report, bool with_same);

}  // namespace kgate
