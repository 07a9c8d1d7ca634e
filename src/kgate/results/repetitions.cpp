#include "kgate/results/repetitions.hpp"

#include "kgate/results/roofline.hpp"
#include "kgate/base/statistics.hpp"

namespace kgate {
namespace {

void pool_mode(std::optional<TimingRecord>& into, const std::optional<TimingRecord>& from) {
  if (!from) return;
  if (!into) {
    into = from;
    return;
  }
  const double n_into = static_cast<double>(into->samples_s.size()), n_from = static_cast<double>(from->samples_s.size());
  // Figures kept per repetition as one number (no samples of their own) pool weighted by samples.
  const auto weighted = [&](double a, double b) { return n_into + n_from > 0 ? (a * n_into + b * n_from) / (n_into + n_from) : a; };
  into->sm_clock_mhz = weighted(into->sm_clock_mhz, from->sm_clock_mhz);
  into->event_median_s = weighted(into->event_median_s, from->event_median_s);
  into->busy_median_s = weighted(into->busy_median_s, from->busy_median_s);
  into->samples_s.insert(into->samples_s.end(), from->samples_s.begin(), from->samples_s.end());
  into->summary = summarize(into->samples_s);
  into->repetition_medians_s.insert(into->repetition_medians_s.end(), from->repetition_medians_s.begin(), from->repetition_medians_s.end());
  into->target_met = into->target_met && from->target_met;
  if (into->stop_reason != from->stop_reason) into->stop_reason += "+" + from->stop_reason;
  into->throttled_samples += from->throttled_samples;
  into->power_limited_samples += from->power_limited_samples;
  into->rested = into->rested || from->rested;
  into->input_copies += from->input_copies;  // each repetition allocated its own
  into->gpu_time_s += from->gpu_time_s;
  into->wall_time_s += from->wall_time_s;
}

// Samples of different clocks (a CUPTI span, an event pair) are not one distribution.
bool same_timers(const BenchmarkRecord& a, const BenchmarkRecord& b) {
  const auto timer = [](const std::optional<TimingRecord>& t) { return t ? t->timer : std::string(); };
  return (!a.cold || !b.cold || timer(a.cold) == timer(b.cold)) && (!a.hot || !b.hot || timer(a.hot) == timer(b.hot));
}

}  // namespace

bool is_repetition(const BenchmarkRecord& a, const BenchmarkRecord& b) {
  return a.status == BenchmarkStatus::ok && b.status == BenchmarkStatus::ok && a.name == b.name && a.family == b.family &&
         a.variant == b.variant && a.shape == b.shape && a.headline_mode == b.headline_mode && same_timers(a, b);
}

void pool_repetition(BenchmarkRecord& into, const BenchmarkRecord& from, const Calibration& calibration) {
  pool_mode(into.cold, from.cold);
  pool_mode(into.hot, from.hot);
  into.wall_time_s += from.wall_time_s;
  if (from.correct == false) {  // a wrong result in any repetition is the record's result
    into.correct = false;
    into.correctness_detail = from.correctness_detail;
  } else if (!into.correct.has_value() && from.correct.has_value()) {
    into.correct = from.correct;
    into.correctness_detail = from.correctness_detail;
  }
  // What one process records for the run (the first's trace, the last's counters) and another
  // lacks: a benchmark whose last round another shard timed has them from its own shard's file.
  if (into.kernels.empty()) into.kernels = from.kernels;
  if (into.metrics.empty() && into.metrics_unavailable.empty()) {
    into.metrics = from.metrics;
    into.metrics_unavailable = from.metrics_unavailable;
  }
  derive_from_calibration(into, calibration);  // the pooled median moves the derived figures, more repetitions what it can detect
}

}  // namespace kgate
