#include "kgate/measure/stopping.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kgate {

namespace {

void validate(const StoppingOptions& o) {
  if (o.min_samples < 0 || o.max_samples < 1) throw std::invalid_argument("StoppingOptions: min_samples must be >= 0 and max_samples >= 1");
  if (!(o.min_gpu_time_s >= 0) || !(o.max_wall_time_s >= 0) || !(o.target_rel_stddev >= 0))
    throw std::invalid_argument("StoppingOptions: times and the target must be non-negative numbers");
}

}  // namespace

StoppingOptions share_of_budget(const StoppingOptions& whole, int processes) {
  if (processes < 1) throw std::invalid_argument("share_of_budget: processes must be >= 1, got " + std::to_string(processes));
  const auto share = [processes](int count) { return (count + processes - 1) / processes; };
  StoppingOptions part = whole;
  part.min_samples = share(whole.min_samples);
  part.max_samples = share(whole.max_samples);
  part.convergence_min_samples = share(whole.convergence_min_samples);
  part.min_gpu_time_s = whole.min_gpu_time_s / processes;
  part.max_wall_time_s = whole.max_wall_time_s / processes;
  return part;
}

StoppingCriterion::StoppingCriterion(StoppingOptions options) : options_(options) { validate(options_); }

void StoppingCriterion::add_sample(double gpu_seconds) {
  if (!std::isfinite(gpu_seconds) || gpu_seconds < 0)
    throw std::invalid_argument("StoppingCriterion: sample time " + std::to_string(gpu_seconds) + " s is not a non-negative number");
  samples_s_.push_back(gpu_seconds);
  gpu_time_s_ += gpu_seconds;
  const double delta = gpu_seconds - mean_;
  mean_ += delta / static_cast<double>(samples_s_.size());
  squared_deviations_ += delta * (gpu_seconds - mean_);
  rel_stddev_history_.push_back(rel_stddev());
}

double StoppingCriterion::rel_stddev() const {
  if (samples_s_.size() < 2 || mean_ <= 0) return 0;
  return std::sqrt(squared_deviations_ / static_cast<double>(samples_s_.size() - 1)) / mean_;
}

bool StoppingCriterion::target_met() const {
  const std::size_t enough = std::max<std::size_t>(2, static_cast<std::size_t>(options_.min_samples));
  return samples() >= enough && rel_stddev() <= options_.target_rel_stddev;
}

bool StoppingCriterion::minimums_reached() const {
  return samples() >= static_cast<std::size_t>(options_.min_samples) && gpu_time_s_ >= options_.min_gpu_time_s;
}

bool StoppingCriterion::noise_converged() const {
  const std::size_t n = samples();
  if (n < static_cast<std::size_t>(std::max(options_.convergence_min_samples, 2))) return false;
  const double now = rel_stddev_history_[n - 1];
  const double at_half = rel_stddev_history_[n / 2 - 1];
  return now > (1 - kMaxImprovementPerDoubling) * at_half;
}

StopReason StoppingCriterion::check(double wall_elapsed_s) const {
  if (minimums_reached()) {
    if (target_met()) return StopReason::target_met;
    if (noise_converged()) return StopReason::noise_converged;
  }
  if (samples() >= static_cast<std::size_t>(options_.max_samples)) return StopReason::sample_cap;
  if (wall_elapsed_s >= options_.max_wall_time_s) return StopReason::time_cap;
  return StopReason::none;
}

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::none: return "none";
    case StopReason::target_met: return "target-met";
    case StopReason::noise_converged: return "noise-converged";
    case StopReason::time_cap: return "time-cap";
    case StopReason::sample_cap: return "sample-cap";
  }
  return "?";
}

namespace {

// A clock of 0 (or NaN) is unknown, and an unknown clock is never below anything.
bool below_fraction_of(double sm_clock_mhz, double default_sm_clock_mhz, double fraction) {
  if (!(sm_clock_mhz > 0) || !(default_sm_clock_mhz > 0)) return false;
  return sm_clock_mhz < fraction * default_sm_clock_mhz;
}

}  // namespace

bool is_throttled(double sample_sm_clock_mhz, double default_sm_clock_mhz, const ThrottleOptions& options) {
  return below_fraction_of(sample_sm_clock_mhz, default_sm_clock_mhz, options.threshold);
}

ClockGovernor::ClockGovernor(double default_sm_clock_mhz, ThrottleOptions options) : default_mhz_(default_sm_clock_mhz), options_(options) {
  const auto fraction = [](double x) { return x >= 0 && x <= 1; };
  if (!fraction(options.threshold) || !fraction(options.full_clock) || !(options.backoff_s >= 0) || !(options.rest_ratio >= 0) ||
      !std::isfinite(options.backoff_s) || !std::isfinite(options.rest_ratio))
    throw std::invalid_argument(
        "ThrottleOptions: threshold and full_clock must be fractions in [0, 1], backoff_s and rest_ratio finite and >= 0");
}

BatchVerdict ClockGovernor::after_batch(double sm_clock_mhz, double batch_gpu_s, int samples) {
  const double rest_s = resting_ ? options_.rest_ratio * batch_gpu_s : 0.0;
  if (is_throttled(sm_clock_mhz, default_mhz_, options_)) {
    throttled_samples_ += samples;
    return {false, options_.backoff_s + rest_s};
  }
  if (!resting_ && options_.rest_ratio > 0 && below_fraction_of(sm_clock_mhz, default_mhz_, options_.full_clock)) {
    resting_ = true;
    power_limited_samples_ += samples;
    return {false, options_.backoff_s};
  }
  return {true, rest_s};
}

}  // namespace kgate
