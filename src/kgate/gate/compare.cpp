#include "kgate/gate/compare.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <span>

#include "kgate/base/figures.hpp"
#include "kgate/base/statistics.hpp"
#include "kgate/results/detectable.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate {

using nlohmann::json;

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::same: return "same";
    case Verdict::noisy: return "noisy";
    case Verdict::at_threshold: return "at threshold";
    case Verdict::added: return "new";
    case Verdict::missing: return "missing";
    case Verdict::failed: return "failed";
  }
  return "same";
}

std::string_view verdict_key(Verdict verdict) { return verdict == Verdict::at_threshold ? "at_threshold" : to_string(verdict); }

std::optional<Verdict> verdict_from_key(std::string_view key) {
  for (const Verdict verdict : kVerdicts)
    if (verdict_key(verdict) == key) return verdict;
  return std::nullopt;
}

namespace {

// What a note calls material: below these, a difference is measurement wobble, not an explanation.
constexpr double kMaterialRelativeChange = 0.10;  // counts of bytes, instructions, ...: 10%
constexpr double kMaterialPercentPoints = 5.0;    // percentages (occupancy, hit rates): 5 points
constexpr double kMaterialCalibrationChange = 0.03;
// A launch-floor difference below this widens the minimum change without a notice: the floor's
// own run-to-run scatter on one host.
constexpr double kMinNotedLaunchShift = 0.1e-6;
constexpr double kClockNoteChange = 0.01;  // clocks this close are the same clock
constexpr std::size_t kMaxGenericMetricNotes = 3;
// How near the band's edge a precise change counts as at the threshold: this fraction of the
// threshold either side of the edge, in log space (at T = 5%: changes of 3.7% to 6.3%).
constexpr double kAtThresholdMargin = 0.25;

std::string percent_of(double fraction) { return format_percent(fraction * 100); }

// ---------------------------------------------------------------------------------------------
// Thresholds

[[noreturn]] void threshold_error(const std::string& source, const std::string& path, const std::string& problem) {
  throw ResultsError(source + ": " + path + ": " + problem);
}

double threshold_value(const json& value, const std::string& source, const std::string& path) {
  if (!value.is_number() || !(value.get<double>() > 0) || !(value.get<double>() <= 1))
    threshold_error(source, path, "threshold must be a fraction in (0, 1] (0.05 = 5%), got " + json_excerpt(value));
  return value.get<double>();
}

std::map<std::string, double> threshold_map(const json& doc, const char* key, const std::string& source) {
  std::map<std::string, double> out;
  if (!doc.contains(key)) return out;
  const std::string path = std::string("$.") + key;
  if (!doc[key].is_object()) threshold_error(source, path, "expected an object of name -> threshold, got " + json_excerpt(doc[key]));
  for (const auto& [name, value] : doc[key].items())
    out[name] = threshold_value(value, source, path + "[" + json_excerpt(json(name)) + "]");
  return out;
}

// ---------------------------------------------------------------------------------------------
// Verdicts

struct Evidence {
  double speedup = 0, low = 0, high = 0, p = 1;
  bool testable = false;  // both sides have >= 2 samples
};

Evidence weigh(std::span<const double> baseline, std::span<const double> current, const CompareOptions& options) {
  Evidence e;
  e.speedup = median(baseline) / median(current);
  e.testable = baseline.size() >= 2 && current.size() >= 2;
  if (!e.testable) {
    e.low = e.high = e.speedup;
    return e;
  }
  const RatioInterval ci = median_ratio_interval(baseline, current, 1 - options.alpha);
  e.low = ci.low;
  e.high = ci.high;
  e.p = mann_whitney_u(baseline, current).p_value;
  return e;
}

// Whether a speedup lies within kAtThresholdMargin of the band's edge on one side (slower: the
// edge 1 / (1 + T); faster: 1 + T), or beyond that edge (`or_beyond`).
bool near_edge(double speedup, double threshold, bool slower, bool or_beyond = false) {
  const double distance = std::log(speedup * (slower ? 1 + threshold : 1 / (1 + threshold)));  // log(speedup / edge)
  const double margin = kAtThresholdMargin * std::log1p(threshold);
  if (or_beyond && (slower ? distance < 0 : distance > 0)) return true;
  return std::fabs(distance) <= margin;
}

// Whether the whole interval of a speedup lies within the margin of the band's edge on its side
// (such an interval lies wholly on that side of 1): a change as precise as it is near the threshold.
bool interval_near_edge(double speedup, double low, double high, double threshold) {
  const bool slower = speedup < 1;
  return near_edge(low, threshold, slower) && near_edge(high, threshold, slower);
}

Verdict judge(const Evidence& e, double threshold, double alpha) {
  const double band_low = 1 / (1 + threshold), band_high = 1 + threshold;
  const bool significant = e.testable && e.p < alpha;
  // The change equals the threshold to within its interval: precise, and the interval holds the edge.
  const bool at_edge = significant && interval_near_edge(e.speedup, e.low, e.high, threshold) &&
                       (e.speedup < 1 ? e.high >= band_low : e.low <= band_high);
  if (e.speedup < band_low) return significant && e.high < 1 ? (at_edge ? Verdict::at_threshold : Verdict::slower) : Verdict::noisy;
  if (e.speedup > band_high) return significant && e.low > 1 ? (at_edge ? Verdict::at_threshold : Verdict::faster) : Verdict::noisy;
  if (!e.testable || (e.low >= band_low && e.high <= band_high)) return Verdict::same;
  return at_edge ? Verdict::at_threshold : Verdict::noisy;
}

bool is_change(Verdict v) { return v == Verdict::slower || v == Verdict::faster || v == Verdict::at_threshold; }

// A change in time stands as far as cycles confirm it: what cycles say when they see none (same:
// the clock explains it) or cannot decide (noisy); at the threshold where one sees a change beyond
// it and the other one at it, in the same direction.
Verdict confirmed_by_cycles(Verdict time, Verdict cycles, bool same_direction) {
  if (!is_change(time) || cycles == time) return time;
  if (cycles == Verdict::noisy) return Verdict::noisy;
  return is_change(cycles) && same_direction && (time == Verdict::at_threshold || cycles == Verdict::at_threshold) ? Verdict::at_threshold
                                                                                                                   : Verdict::same;
}

std::vector<double> scaled(std::span<const double> samples, double factor) {
  std::vector<double> out(samples.begin(), samples.end());
  for (double& v : out) v *= factor;
  return out;
}

const TimingRecord* mode_record(const BenchmarkRecord& r, const std::string& mode) {
  const std::optional<TimingRecord>& t = mode == "hot" ? r.hot : r.cold;
  return t && !t->samples_s.empty() ? &*t : nullptr;
}

// ---------------------------------------------------------------------------------------------
// Counter deltas that explain a change

std::string kernel_display_name(const KernelRecord& k) {
  std::string name = k.demangled.empty() ? k.name : k.demangled;
  if (name.starts_with("void ")) name.erase(0, 5);
  if (const auto paren = name.find('('); paren != std::string::npos && paren > 0) name.erase(paren);
  if (name.size() > 80) name = name.substr(0, 77) + "...";
  return name;
}

double total_time(const KernelRecord& k) { return k.duration_s * std::max(k.launches, 1); }

const KernelRecord& dominant_kernel(const std::vector<KernelRecord>& kernels) {
  return *std::max_element(kernels.begin(), kernels.end(),
                           [](const KernelRecord& a, const KernelRecord& b) { return total_time(a) < total_time(b); });
}

std::string dims(const int (&d)[3]) { return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]); }

std::string kib(long long bytes) { return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + " KiB" : std::to_string(bytes) + " B"; }

void explain_kernels(const std::vector<KernelRecord>& before, const std::vector<KernelRecord>& after, std::vector<std::string>& notes) {
  if (before.empty() || after.empty()) return;
  const KernelRecord& b = dominant_kernel(before);
  const KernelRecord& a = dominant_kernel(after);
  const std::string b_name = kernel_display_name(b), a_name = kernel_display_name(a);
  if (b_name != a_name) {
    notes.push_back("a different kernel ran: " + a_name + " instead of " + b_name);
  } else {
    if (a.registers_per_thread != b.registers_per_thread && a.registers_per_thread > 0 && b.registers_per_thread > 0)
      notes.push_back("registers " + std::to_string(b.registers_per_thread) + " → " + std::to_string(a.registers_per_thread));
    const long long b_shared = b.static_shared_bytes + b.dynamic_shared_bytes;
    const long long a_shared = a.static_shared_bytes + a.dynamic_shared_bytes;
    if (a_shared != b_shared) notes.push_back("shared memory per block " + kib(b_shared) + " → " + kib(a_shared));
    if (!std::equal(std::begin(a.grid), std::end(a.grid), std::begin(b.grid)))
      notes.push_back("grid " + dims(b.grid) + " → " + dims(a.grid));
    if (!std::equal(std::begin(a.block), std::end(a.block), std::begin(b.block)))
      notes.push_back("block " + dims(b.block) + " → " + dims(a.block));
  }
  const auto launches = [](const std::vector<KernelRecord>& ks) {
    int n = 0;
    for (const KernelRecord& k : ks) n += k.launches;
    return n;
  };
  if (launches(before) != launches(after))
    notes.push_back("kernel launches per call " + std::to_string(launches(before)) + " → " + std::to_string(launches(after)));
}

struct KnownMetric {
  const char* name;
  const char* label;
};
// Percentages kgate's default metric set collects (range_profiler.cpp), with the words a reader knows.
constexpr KnownMetric kKnownPercentMetrics[] = {
    {"sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy"},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput"},
    {"sm__inst_issued.avg.pct_of_peak_sustained_elapsed", "instruction issue"},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput"},  // runs recorded before the issue metric
    {"lts__t_sector_hit_rate.pct", "L2 hit rate"},
    {"l1tex__t_sector_hit_rate.pct", "L1 hit rate"},
    {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "tensor-core activity"},
};
constexpr const char* kDramParts[] = {"dram__bytes_read.sum", "dram__bytes_write.sum"};
constexpr const char* kDramTotal = "dram__bytes.sum";
constexpr const char* kDuration = "gpu__time_duration.sum";  // the time itself, not an explanation

std::optional<double> dram_bytes(const std::map<std::string, double>& m) {
  if (const auto it = m.find(kDramTotal); it != m.end()) return it->second;
  if (!m.contains(kDramParts[0]) || !m.contains(kDramParts[1])) return std::nullopt;
  return m.at(kDramParts[0]) + m.at(kDramParts[1]);
}

void explain_metrics(const std::map<std::string, double>& before, const std::map<std::string, double>& after,
                     std::vector<std::string>& notes) {
  if (before.empty() || after.empty()) return;
  const auto b_dram = dram_bytes(before), a_dram = dram_bytes(after);
  if (b_dram && a_dram && *b_dram > 0 && std::fabs(*a_dram / *b_dram - 1) >= kMaterialRelativeChange)
    notes.push_back("dram bytes " + format_change(*a_dram / *b_dram - 1) +
                    (*a_dram > *b_dram ? " (more memory traffic)" : " (less memory traffic)"));

  std::set<std::string> handled = {kDramTotal, kDramParts[0], kDramParts[1], kDuration};
  for (const KnownMetric& known : kKnownPercentMetrics) {
    handled.insert(known.name);
    const auto b = before.find(known.name), a = after.find(known.name);
    if (b == before.end() || a == after.end() || !material_metric_change(known.name, b->second, a->second)) continue;
    notes.push_back(std::string(known.label) + " " + format_percent(b->second) + " → " + format_percent(a->second));
  }
  // Any other metric (asked for with --kgate_metrics): by its own name, the largest changes first.
  std::vector<std::pair<double, std::string>> generic;
  for (const auto& [name, b_value] : before) {
    const auto a = after.find(name);
    if (handled.contains(name) || a == after.end()) continue;
    const double a_value = a->second;
    if (!material_metric_change(name, b_value, a_value)) continue;
    if (is_percent_metric(name))
      generic.emplace_back(std::fabs(a_value - b_value) / 100, name + " " + format_percent(b_value) + " → " + format_percent(a_value));
    else generic.emplace_back(std::fabs(a_value / b_value - 1), name + " " + format_change(a_value / b_value - 1));
  }
  std::stable_sort(generic.begin(), generic.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  for (std::size_t i = 0; i < generic.size() && i < kMaxGenericMetricNotes; ++i) notes.push_back(generic[i].second);
}

// ---------------------------------------------------------------------------------------------
// Environment

void check_environment(const RunResults& baseline, const RunResults& current, const ComparisonReport& report, const CompareOptions& options,
                       std::vector<std::string>& warnings) {
  const RunContext& b = baseline.context;
  const RunContext& c = current.context;
  if (b.gpu_name != c.gpu_name) {
    const std::string both =
        "baseline " + report.baseline_source + " ran on " + b.gpu_name + ", new " + report.new_source + " on " + c.gpu_name;
    if (!options.allow_env_mismatch)
      throw EnvironmentMismatch("different GPU models: " + both + "; pass --allow-env-mismatch to compare anyway");
    warnings.push_back("different GPU models (compared anyway): " + both);
  }
  if (b.driver_version != c.driver_version && b.driver_version > 0 && c.driver_version > 0)
    warnings.push_back("CUDA driver " + format_cuda_version(b.driver_version) + " → " + format_cuda_version(c.driver_version));
  if (b.runtime_version != c.runtime_version && b.runtime_version > 0 && c.runtime_version > 0)
    warnings.push_back("CUDA runtime " + format_cuda_version(b.runtime_version) + " → " + format_cuda_version(c.runtime_version));
  const auto clock = [&](const char* what, double before, double after) {
    if (before > 0 && after > 0 && std::fabs(after - before) >= 1)
      warnings.push_back(std::string("default ") + what + " clock " + format_mhz(before) + " → " + format_mhz(after));
  };
  clock("SM", b.sm_clock_mhz_default, c.sm_clock_mhz_default);
  clock("memory", b.memory_clock_mhz, c.memory_clock_mhz);
  const auto ceiling = [&](const char* what, double before, double after, std::string (*format)(double)) {
    if (before > 0 && after > 0 && std::fabs(after / before - 1) > kMaterialCalibrationChange)
      warnings.push_back(std::string("calibration: ") + what + " " + format(before) + " → " + format(after) + " (" +
                         format_change(after / before - 1) + ")");
  };
  const Calibration& bc = b.calibration;
  const Calibration& cc = c.calibration;
  ceiling("copy bandwidth", bc.copy_bytes_per_s, cc.copy_bytes_per_s, format_bandwidth);
  ceiling("read bandwidth", bc.read_bytes_per_s, cc.read_bytes_per_s, format_bandwidth);
  ceiling("GEMM throughput", bc.gemm_flops_per_s, cc.gemm_flops_per_s, format_flops);
  ceiling("launch floor", bc.launch_floor_s, cc.launch_floor_s, format_time);
  ceiling("graph launch floor", bc.graph_floor_s, cc.graph_floor_s, format_time);
}

// ---------------------------------------------------------------------------------------------
// One benchmark

// Time the same thing twice before believing a difference: when the new run pooled several
// repetitions (the processes of --kgate_processes, the rounds of `kgate ab`), a slower or faster
// verdict stands only if every repetition's own median is beyond the band on that side of the
// baseline's median. A process that ran in another mode (cuBLAS's second speed at one GEMV shape,
// docs/timing.md) then cannot carry the pooled median, and the verdict becomes noisy. Where every
// repetition is beyond the band or at its edge (within the margin) and the interval is precisely
// at the edge, the change is as large as the threshold: at_threshold, which needs the same of
// every repetition. (A change is significant already: judge() gives none that is not.)
void require_every_repetition(const TimingRecord& current, BenchmarkComparison& row) {
  const std::vector<double>& medians = current.repetition_medians_s;
  if (medians.size() < 2 || !is_change(row.verdict)) return;
  const bool slower = row.speedup < 1;
  const double band_edge = slower ? 1 / (1 + row.threshold) : 1 + row.threshold;
  std::size_t beyond = 0, at_or_beyond = 0;
  for (const double m : medians) {
    const double speedup = row.baseline_median_s / m;
    beyond += slower ? speedup < band_edge : speedup > band_edge;
    at_or_beyond += near_edge(speedup, row.threshold, slower, true);
  }
  if (row.verdict != Verdict::at_threshold && beyond == medians.size()) return;
  if (at_or_beyond == medians.size() &&
      (row.verdict == Verdict::at_threshold || interval_near_edge(row.speedup, row.ci_low, row.ci_high, row.threshold))) {
    row.verdict = Verdict::at_threshold;
    return;
  }
  std::string listed;
  for (const double m : medians) listed += (listed.empty() ? "" : ", ") + format_time(m);
  row.notes.push_back(std::to_string(beyond) + " of " + std::to_string(medians.size()) + " repetitions " + (slower ? "slower" : "faster") +
                      " by more than " + percent_of(row.threshold) + " (medians " + listed + "): the change is not in every one");
  row.verdict = Verdict::noisy;
}

// What makes a row at_threshold, in figures: the change in time with half its interval's width,
// the threshold, and each repetition's change.
std::string at_threshold_note(const BenchmarkComparison& row, const TimingRecord& current) {
  const double half_width = (1 / row.ci_low - 1 / row.ci_high) / 2;  // of the interval of the change in time
  std::string note = "at the threshold: " + format_time_change_of_speedup(row.speedup) + " ± " + percent_of(half_width) + " against a " +
                     percent_of(row.threshold) + " threshold";
  if (current.repetition_medians_s.size() < 2) return note;
  std::string listed;
  for (const double m : current.repetition_medians_s) listed += (listed.empty() ? "" : ", ") + format_change(m / row.baseline_median_s - 1);
  return note + " (repetitions " + listed + ")";
}

// Widens the row's band to what the two sides can resolve: for CUPTI- or CPU-timed sides their
// minimum detectable change (the larger of the two), for event-timed ones the fixed minimum change
// in time.
void widen_to_detectable(const TimingRecord& b, const TimingRecord& c, const Calibration& b_cal, const Calibration& c_cal,
                         const CompareOptions& options, BenchmarkComparison& row) {
  row.timer = b.timer == c.timer ? b.timer : "events";
  if (judged_by_detectable_change(row.timer)) {
    const DetectableChange before = detectable_change(b, b_cal.timer_resolution_s, 1 - options.alpha);
    const DetectableChange after = detectable_change(c, c_cal.timer_resolution_s, 1 - options.alpha);
    const DetectableChange& wider = before.fraction() >= after.fraction() ? before : after;
    row.min_detectable_change = wider.fraction();
    if (row.min_detectable_change <= row.threshold) return;
    const char* spread = row.timer == "cpu" ? "the spread of its repetitions (the host's load)"
                                            : "the spread between its repetitions' medians";
    const char* limit = wider.fraction() == wider.between  ? spread
                        : wider.fraction() == wider.within ? "the sampling error of its medians"
                                                           : "the timer's resolution";
    row.notes.push_back("band widened to ±" + percent_of(row.min_detectable_change) + ": the minimum detectable change, set by " + limit);
    row.threshold = row.min_detectable_change;
    return;
  }
  if (b.timer != c.timer) row.notes.push_back("timers differ (" + b.timer + " → " + c.timer + "): judged as event-timed");
  if (const double floor = options.thresholds.min_change_s / row.baseline_median_s; floor > row.threshold) {
    row.notes.push_back("band widened to ±" + percent_of(floor) + " by the " + format_time(options.thresholds.min_change_s) +
                        " minimum change");
    row.threshold = floor;
  }
}

void compare_timings(const BenchmarkRecord& base, const BenchmarkRecord& cur, const Calibration& base_cal, const Calibration& cur_cal,
                     const CompareOptions& options, BenchmarkComparison& row) {
  const TimingRecord* b = mode_record(base, cur.headline_mode);
  const TimingRecord* c = mode_record(cur, cur.headline_mode);
  if (!b) {
    row.verdict = Verdict::noisy;
    row.notes.push_back("cannot compare: the baseline has no " + cur.headline_mode + " timing (the new run's headline mode)");
    return;
  }
  row.baseline_samples = b->samples_s.size();
  row.baseline_median_s = median(b->samples_s);
  widen_to_detectable(*b, *c, base_cal, cur_cal, options, row);
  row.baseline_clock_mhz = b->sm_clock_mhz;
  row.new_clock_mhz = c->sm_clock_mhz;

  const Evidence time = weigh(b->samples_s, c->samples_s, options);
  row.speedup = time.speedup;
  row.ci_low = time.low;
  row.ci_high = time.high;
  row.p_value = time.p;
  row.low_confidence = !time.testable;
  const Verdict time_verdict = judge(time, row.threshold, options.alpha);
  row.verdict = time_verdict;
  if (!time.testable)
    row.notes.push_back(std::to_string(std::min(row.baseline_samples, row.new_samples)) +
                        " sample(s) on a side: no significance test, judged on the threshold alone");

  if (row.baseline_clock_mhz > 0 && row.new_clock_mhz > 0) {
    // Cycles = time x clock; the clock is one figure per side, so the cycle samples are the time
    // samples scaled, and the interval scales with them.
    const std::vector<double> b_cycles = scaled(b->samples_s, row.baseline_clock_mhz);
    const std::vector<double> c_cycles = scaled(c->samples_s, row.new_clock_mhz);
    const Evidence cycles = weigh(b_cycles, c_cycles, options);
    row.cycle_speedup = cycles.speedup;
    const Verdict cycle_verdict = judge(cycles, row.threshold, options.alpha);
    const bool clocks_differ = std::fabs(row.new_clock_mhz / row.baseline_clock_mhz - 1) > kClockNoteChange;
    row.verdict = confirmed_by_cycles(time_verdict, cycle_verdict, (time.speedup < 1) == (cycles.speedup < 1));
    if (clocks_differ || row.verdict != time_verdict)
      row.notes.insert(row.notes.begin(), "clock " + format_mhz(row.baseline_clock_mhz) + " → " + format_mhz(row.new_clock_mhz) +
                                              ": time " + format_time_change_of_speedup(time.speedup) + ", cycles " +
                                              format_time_change_of_speedup(cycles.speedup));
  } else if (row.baseline_clock_mhz > 0 || row.new_clock_mhz > 0) {
    row.notes.push_back("SM clock known on one side only: judged on time alone");
  }
  require_every_repetition(*c, row);
  if (row.verdict == Verdict::at_threshold) row.notes.insert(row.notes.begin(), at_threshold_note(row, *c));
  // The spread does not decide (compare.hpp); it is shown where it is above the noise limit.
  if (const double spread = std::max(b->summary.rel_stddev(), c->summary.rel_stddev()); time.testable && spread > options.noise_limit)
    row.notes.push_back("relative stddev " + percent_of(b->summary.rel_stddev()) + " → " + percent_of(c->summary.rel_stddev()) +
                        ", above the " + percent_of(options.noise_limit) + " noise limit" +
                        (row.verdict == Verdict::noisy
                             ? ": too spread to decide"
                             : ": spread far from the medians, whose interval " + format_interval(row.ci_low, row.ci_high) + " decides"));
}

BenchmarkComparison compare_one(const BenchmarkRecord* base, const BenchmarkRecord& cur, const Calibration& base_cal,
                                const Calibration& cur_cal, const CompareOptions& options) {
  BenchmarkComparison row;
  row.name = cur.name;
  row.family = cur.family;
  row.threshold = options.thresholds.for_benchmark(cur.name, cur.family);
  if (const TimingRecord* c = mode_record(cur, cur.headline_mode)) {
    row.new_samples = c->samples_s.size();
    row.new_median_s = median(c->samples_s);
  }
  if (base)
    if (const TimingRecord* b = mode_record(*base, cur.headline_mode)) row.baseline_median_s = median(b->samples_s);

  if (cur.status == BenchmarkStatus::failed || cur.correct == false) {
    row.verdict = Verdict::failed;
    if (cur.status == BenchmarkStatus::failed) row.notes.push_back("error: " + (cur.error.empty() ? "(no message)" : cur.error));
    if (cur.correct == false) row.notes.push_back("wrong result" + (cur.correctness_detail.empty() ? "" : ": " + cur.correctness_detail));
    return row;
  }
  if (cur.status == BenchmarkStatus::skipped) {
    row.verdict = Verdict::missing;
    row.notes.push_back("skipped in the new run: " + cur.error);
    return row;
  }
  if (row.new_samples == 0) {
    row.verdict = Verdict::failed;
    row.notes.push_back("no " + cur.headline_mode + " timing recorded (the headline mode)");
    return row;
  }
  if (!base || base->status != BenchmarkStatus::ok) {
    row.verdict = Verdict::added;
    if (base) row.notes.push_back("the baseline has no timing (" + to_string(base->status) + ": " + base->error + ")");
    return row;
  }
  compare_timings(*base, cur, base_cal, cur_cal, options, row);
  row.gated = cur.role != "vendor";
  if (row.verdict == Verdict::slower && !row.gated)
    row.notes.insert(row.notes.begin(), "vendor variant: another library's slowdown is shown, not gated");
  explain_kernels(base->kernels, cur.kernels, row.notes);
  explain_metrics(base->metrics, cur.metrics, row.notes);
  return row;
}

void require_same_timer(const BenchmarkRecord& base, const BenchmarkRecord& cur, const std::string& base_source,
                        const std::string& cur_source) {
  const TimingRecord* b = mode_record(base, cur.headline_mode);
  const TimingRecord* c = mode_record(cur, cur.headline_mode);
  if (!b || !c || b->timer == c->timer) return;
  throw TimerMismatch(cur.name + ": its " + cur.headline_mode + " timing is " + b->timer + "-timed in " + base_source + " and " + c->timer +
                      "-timed in " + cur_source +
                      "; an event-timed median holds microseconds of launch overhead that a CUPTI span does not. Record both "
                      "with the same --kgate_timer, or pass --allow-timer-mismatch to compare them as event-timed");
}

}  // namespace

bool is_percent_metric(std::string_view metric) { return metric.ends_with(".pct") || metric.find("pct_of_peak") != std::string_view::npos; }

std::string_view metric_label(std::string_view metric) {
  for (const KnownMetric& known : kKnownPercentMetrics)
    if (metric == known.name) return known.label;
  return {};
}

bool material_metric_change(std::string_view metric, double before, double after) {
  if (metric == kDuration) return false;
  if (is_percent_metric(metric)) return std::fabs(after - before) >= kMaterialPercentPoints;
  return before > 0 && std::fabs(after / before - 1) >= kMaterialRelativeChange;
}

double Thresholds::for_benchmark(const std::string& name, const std::string& family) const {
  if (const auto it = benchmarks.find(name); it != benchmarks.end()) return it->second;
  if (const auto it = families.find(family); it != families.end()) return it->second;
  return default_fraction;
}

Thresholds parse_thresholds(const json& doc, const std::string& source) {
  if (!doc.is_object()) threshold_error(source, "$", "expected an object, got " + std::string(doc.type_name()));
  for (const auto& [key, value] : doc.items())
    if (key != "schema_version" && key != "default" && key != "min_change_us" && key != "families" && key != "benchmarks")
      threshold_error(source, "$." + key, "unknown field (expected schema_version, default, min_change_us, families, benchmarks)");
  if (doc.contains("schema_version") && doc["schema_version"] != 1)
    threshold_error(source, "$.schema_version",
                    "unsupported thresholds schema version " + json_excerpt(doc["schema_version"]) + " (this kgate reads 1)");
  Thresholds t;
  if (doc.contains("default")) t.default_fraction = threshold_value(doc["default"], source, "$.default");
  if (doc.contains("min_change_us")) {
    const json& v = doc["min_change_us"];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
      threshold_error(source, "$.min_change_us", "expected a number of microseconds >= 0, got " + json_excerpt(v));
    t.min_change_s = v.get<double>() * 1e-6;
  }
  t.families = threshold_map(doc, "families", source);
  t.benchmarks = threshold_map(doc, "benchmarks", source);
  return t;
}

Thresholds read_thresholds_file(const std::string& path) { return parse_thresholds(read_json_file(path), path); }

std::size_t ComparisonReport::count(Verdict verdict) const {
  return static_cast<std::size_t>(
      std::count_if(benchmarks.begin(), benchmarks.end(), [&](const BenchmarkComparison& row) { return row.verdict == verdict; }));
}

std::size_t ComparisonReport::gate_failures() const {
  return static_cast<std::size_t>(
      std::count_if(benchmarks.begin(), benchmarks.end(), [](const BenchmarkComparison& row) { return row.fails_gate(); }));
}

bool ComparisonReport::regression() const { return gate_failures() > 0; }

double ComparisonReport::geomean_speedup() const {
  double log_sum = 0;
  std::size_t n = 0;
  for (const BenchmarkComparison& row : benchmarks) {
    if (row.speedup <= 0) continue;
    log_sum += std::log(row.speedup);
    ++n;
  }
  return n ? std::exp(log_sum / static_cast<double>(n)) : 0;
}

std::string ComparisonReport::summary_line() const {
  const auto ungated = static_cast<std::size_t>(std::count_if(benchmarks.begin(), benchmarks.end(), [](const BenchmarkComparison& row) {
    return row.verdict == Verdict::slower && !row.gated;
  }));
  std::string line = std::to_string(count(Verdict::slower)) + " slower" +
                     (ungated ? " (" + std::to_string(ungated) + " vendor, not gated)" : "") + ", " +
                     std::to_string(count(Verdict::faster)) + " faster, " + std::to_string(count(Verdict::same)) + " same, " +
                     std::to_string(count(Verdict::noisy)) + " noisy";
  for (const Verdict extra : {Verdict::at_threshold, Verdict::added, Verdict::missing, Verdict::failed})
    if (const std::size_t n = count(extra)) line += ", " + std::to_string(n) + " " + std::string(to_string(extra));
  const double geomean = geomean_speedup();
  line += geomean > 0 ? "; geomean speedup " + format_ratio(geomean) : "; no benchmark compared";
  return line;
}

ComparisonReport compare_runs(const RunResults& baseline, const RunResults& current, const std::string& baseline_source,
                              const std::string& new_source, const CompareOptions& options) {
  ComparisonReport report;
  report.baseline_source = baseline_source;
  report.new_source = new_source;
  report.confidence = 1 - options.alpha;
  if (baseline.has_kgate_block && current.has_kgate_block) check_environment(baseline, current, report, options, report.warnings);
  // An event-timed median carries the launch overhead of the host it ran on (the calibrated launch
  // floor: 3.1 us on one H200 host, 4.2 us on another, for the same GPU and driver), so a change
  // of host shifts every median by the difference; the minimum change grows by it.
  CompareOptions judged = options;
  const double floor_before = baseline.context.calibration.launch_floor_s, floor_after = current.context.calibration.launch_floor_s;
  const bool any_event_timed = std::any_of(current.benchmarks.begin(), current.benchmarks.end(), [](const BenchmarkRecord& r) {
    const TimingRecord* t = r.headline();
    return t && t->timer == "events" && r.role != "peer";
  });
  if (baseline.has_kgate_block && current.has_kgate_block && floor_before > 0 && floor_after > 0 && any_event_timed) {
    const double shift = std::fabs(floor_after - floor_before);
    judged.thresholds.min_change_s += shift;
    if (shift >= kMinNotedLaunchShift)
      report.notices.push_back("minimum change " + format_time(judged.thresholds.min_change_s) + ": the thresholds' " +
                               format_time(options.thresholds.min_change_s) + " plus the runs' launch-floor difference (" +
                               format_time(floor_before) + " → " + format_time(floor_after) + "), which every event-timed median carries");
  }
  for (const auto& [results, source] : {std::pair{&baseline, &baseline_source}, std::pair{&current, &new_source}})
    if (!results->source_note.empty()) report.notices.push_back(*source + ": " + results->source_note);
    else if (!results->has_kgate_block)
      report.notices.push_back("time-only comparison: " + *source +
                               " has no kgate block (plain Google Benchmark JSON: repetitions are the samples; no clocks, "
                               "counters or environment check)");

  std::map<std::string, const BenchmarkRecord*> base_by_name;
  for (const BenchmarkRecord& r : baseline.benchmarks) base_by_name[r.name] = &r;
  std::set<std::string> seen;
  // Peers (PyTorch beside kgate, docs/peers.md) are measured for the report, not gated: a change
  // in another library's speed is no regression of kgate's.
  std::size_t peers = 0, skipped_in_both = 0;
  for (const BenchmarkRecord& cur : current.benchmarks) {
    if (cur.role == "peer") {
      ++peers;
      seen.insert(cur.name);
      continue;
    }
    const auto it = base_by_name.find(cur.name);
    const BenchmarkRecord* base = it == base_by_name.end() ? nullptr : it->second;
    // Skipped by design (a shape this GPU cannot run, a peer library absent) in both runs: nothing
    // was lost, so it is not `missing`; it is counted in a notice instead.
    if (cur.status == BenchmarkStatus::skipped && (!base || base->status == BenchmarkStatus::skipped)) {
      ++skipped_in_both;
      seen.insert(cur.name);
      continue;
    }
    if (base && !options.allow_timer_mismatch) require_same_timer(*base, cur, baseline_source, new_source);
    report.benchmarks.push_back(compare_one(base, cur, baseline.context.calibration, current.context.calibration, judged));
    seen.insert(cur.name);
  }
  for (const BenchmarkRecord& base : baseline.benchmarks) {
    if (seen.contains(base.name) || base.role == "peer" || base.status == BenchmarkStatus::skipped) continue;
    BenchmarkComparison row;
    row.name = base.name;
    row.family = base.family;
    row.verdict = Verdict::missing;
    row.threshold = options.thresholds.for_benchmark(base.name, base.family);
    row.baseline_median_s = base.headline_median_s();
    row.notes.push_back("not in the new run");
    report.benchmarks.push_back(std::move(row));
  }
  if (skipped_in_both)
    report.notices.push_back(std::to_string(skipped_in_both) +
                             " benchmark(s) skipped in the new run and not timed in the baseline either (skipped by design, "
                             "e.g. a shape this GPU cannot run) are not compared");
  if (peers)
    report.notices.push_back(std::to_string(peers) + " peer benchmark(s) of " + new_source +
                             " (other libraries measured beside kgate) are not compared: peers are not gated");
  return report;
}

std::vector<const BenchmarkComparison*> rows_by_impact(const ComparisonReport& report, bool with_same) {
  // The group of a verdict is its place in kVerdicts, which lists them in this order.
  const auto group = [](Verdict v) { return std::find(std::begin(kVerdicts), std::end(kVerdicts), v) - std::begin(kVerdicts); };
  const auto impact = [](const BenchmarkComparison* row) { return row->speedup > 0 ? std::fabs(std::log(row->speedup)) : 0.0; };
  std::vector<const BenchmarkComparison*> rows;
  for (const BenchmarkComparison& row : report.benchmarks)
    if (with_same || row.verdict != Verdict::same) rows.push_back(&row);
  // Stable: rows of equal impact (failed, new, missing) keep the run's order.
  std::stable_sort(rows.begin(), rows.end(), [&](const BenchmarkComparison* a, const BenchmarkComparison* b) {
    if (group(a->verdict) != group(b->verdict)) return group(a->verdict) < group(b->verdict);
    // A vendor variant's slowdown does not fail the gate: after the ones that do.
    if (a->fails_gate() != b->fails_gate()) return a->fails_gate();
    return impact(a) > impact(b);
  });
  return rows;
}

}  // namespace kgate
