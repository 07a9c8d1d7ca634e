#include "kgate/repetitions.hpp"

#include "kgate/roofline.hpp"
#include "kgate/statistics.hpp"

namespace kgate {
namespace {

void pool_mode(std::optional<TimingRecord>& into, const std::optional<TimingRecord>& from) {
  if (!from) return;
  if (!into) {
    into = from;
    return;
  }
  const double n_into = static_cast<double>(into->samples_s.size()), n_from = static_cast<double>(from->samples_s.size());
  if (n_into + n_from > 0) into->sm_clock_mhz = (into->sm_clock_mhz * n_into + from->sm_clock_mhz * n_from) / (n_into + n_from);
  into->samples_s.insert(into->samples_s.end(), from->samples_s.begin(), from->samples_s.end());
  into->summary = summarize(into->samples_s);
  into->repetition_medians_s.insert(into->repetition_medians_s.end(), from->repetition_medians_s.begin(),
                                    from->repetition_medians_s.end());
  into->target_met = into->target_met && from->target_met;
  if (into->stop_reason != from->stop_reason) into->stop_reason += "+" + from->stop_reason;
  into->throttled_samples += from->throttled_samples;
  into->power_limited_samples += from->power_limited_samples;
  into->rested = into->rested || from->rested;
  into->input_copies += from->input_copies;  // each repetition allocated its own
  into->gpu_time_s += from->gpu_time_s;
  into->wall_time_s += from->wall_time_s;
}

}  // namespace

bool is_repetition(const BenchmarkRecord& a, const BenchmarkRecord& b) {
  return a.status == BenchmarkStatus::ok && b.status == BenchmarkStatus::ok && a.name == b.name && a.family == b.family &&
         a.variant == b.variant && a.shape == b.shape && a.headline_mode == b.headline_mode;
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
  place_record_on_roofline(into, calibration);  // the pooled median moves the derived figures
}

}  // namespace kgate
