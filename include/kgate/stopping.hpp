#pragma once
// When to stop timing a kernel: as soon as the samples are quiet enough to trust, or as soon as
// more samples would not make them quieter, within a time and sample budget (in the spirit of
// nvbench's "stdrel" criterion). And which samples to drop because the GPU was throttling.
#include <cstddef>
#include <string_view>
#include <vector>

namespace kgate {

struct StoppingOptions {
  int min_samples = 10;
  double min_gpu_time_s = 0.5;       // summed sample time before any stop short of a cap
  double max_wall_time_s = 15.0;
  double target_rel_stddev = 0.005;  // sample stddev / mean
  int max_samples = 100000;
};

enum class StopReason {
  none,             // keep sampling
  target_met,       // relative stddev at or below the target
  noise_converged,  // above the target, but more samples no longer lower it
  time_cap,
  sample_cap,
};

// Fed one sample at a time by the timing loop, so every call is O(1) in the number of samples.
//
// Stop order, checked each time: no stop before min_samples samples AND min_gpu_time_s of summed
// GPU time, unless a cap is hit; then target_met when the relative stddev is at or below the
// target; then noise_converged when doubling the sample count lowered the relative stddev by less
// than kMaxImprovementPerDoubling (below); then sample_cap at max_samples samples and time_cap at
// max_wall_time_s of wall time.
class StoppingCriterion {
 public:
  // Below this many samples, the estimate from half of them is too rough to compare against.
  static constexpr std::size_t kMinSamplesForConvergence = 64;
  // Noise that falls by less than 10% per doubling of the samples would take over 2^6.6 ~ 100x
  // more samples to halve: the time cap comes first, so stop now. Noise that only dilutes early
  // outliers falls by 1 - 1/sqrt(2) ~ 29% per doubling and keeps going.
  static constexpr double kMaxImprovementPerDoubling = 0.10;

  explicit StoppingCriterion(StoppingOptions options = {});

  // Throws std::invalid_argument on a negative or non-finite time.
  void add_sample(double gpu_seconds);
  StopReason check(double wall_elapsed_s) const;

  // At least min_samples (and 2) samples, with a relative stddev at or below the target: fewer
  // samples do not estimate the noise well enough to claim it. Holds after noise_converged too.
  bool target_met() const;
  double rel_stddev() const;  // 0 with fewer than 2 samples or a mean of 0
  std::size_t samples() const { return samples_s_.size(); }
  double gpu_time_s() const { return gpu_time_s_; }
  const std::vector<double>& samples_s() const { return samples_s_; }
  const StoppingOptions& options() const { return options_; }

 private:
  bool minimums_reached() const;
  bool noise_converged() const;

  StoppingOptions options_;
  std::vector<double> samples_s_;
  std::vector<double> rel_stddev_history_;  // [i]: relative stddev after i + 1 samples
  double gpu_time_s_ = 0;
  double mean_ = 0, squared_deviations_ = 0;  // Welford's running mean and sum of squared deviations
};

std::string_view to_string(StopReason reason);

// A sample whose measured SM clock is below threshold x the default clock was taken while the GPU
// throttled (power or thermal), so it says nothing about the kernel: drop it, and wait backoff_s
// before the next launch to let the clock recover. A clock of 0 means unknown: never throttled.
struct ThrottleOptions {
  double threshold = 0.75;
  double backoff_s = 0.05;
};

bool is_throttled(double sample_sm_clock_mhz, double default_sm_clock_mhz, const ThrottleOptions& options);

}  // namespace kgate
