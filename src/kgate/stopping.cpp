#include "kgate/stopping.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kgate {

namespace {

void validate(const StoppingOptions& o) {
  if (o.min_samples < 0 || o.max_samples < 1)
    throw std::invalid_argument("StoppingOptions: min_samples must be >= 0 and max_samples >= 1");
  if (!(o.min_gpu_time_s >= 0) || !(o.max_wall_time_s >= 0) || !(o.target_rel_stddev >= 0))
    throw std::invalid_argument("StoppingOptions: times and the target must be non-negative numbers");
}

}  // namespace

StoppingCriterion::StoppingCriterion(StoppingOptions options) : options_(options) { validate(options_); }

void StoppingCriterion::add_sample(double gpu_seconds) {
  if (!std::isfinite(gpu_seconds) || gpu_seconds < 0)
    throw std::invalid_argument("StoppingCriterion: sample time " + std::to_string(gpu_seconds) +
                                " s is not a non-negative number");
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
  if (n < kMinSamplesForConvergence) return false;
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

bool is_throttled(double sample_sm_clock_mhz, double default_sm_clock_mhz, const ThrottleOptions& options) {
  if (!(sample_sm_clock_mhz > 0) || !(default_sm_clock_mhz > 0)) return false;
  return sample_sm_clock_mhz < options.threshold * default_sm_clock_mhz;
}

}  // namespace kgate
