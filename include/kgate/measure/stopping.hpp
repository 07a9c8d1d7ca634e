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
  double min_gpu_time_s = 0.5;  // summed sample time before any stop short of a cap
  double max_wall_time_s = 15.0;
  double target_rel_stddev = 0.005;  // sample stddev / mean
  int max_samples = 100000;
  // Below this many samples the relative stddev of half of them is too rough an estimate to tell
  // whether more samples still lower it (noise_converged).
  int convergence_min_samples = 64;
};

// One process's share when `processes` processes sample the same benchmark and pool what they
// got (kgate_bench --kgate_processes): the times divided among them, the sample counts too
// (convergence_min_samples included), rounded up, so that together they meet the whole budget.
// The target is the same in each.
// Throws std::invalid_argument when processes < 1.
StoppingOptions share_of_budget(const StoppingOptions& whole, int processes);

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
// target; then noise_converged when, from convergence_min_samples on, doubling the sample count
// lowered the relative stddev by less than kMaxImprovementPerDoubling (below); then sample_cap at
// max_samples samples and time_cap at max_wall_time_s of wall time.
class StoppingCriterion {
 public:
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
//
// Above that threshold a board at its power limit still lowers the clock by whatever the work
// before it left of its power budget: on an H200, tensor-core attention ran at 1.54 to 1.96 GHz
// depending on what ran before, and two identical runs differed by up to 13.5%, while CUPTI's
// replays, which idle between passes, ran it at full clock. So once a batch ends below
// full_clock x the default clock, that batch is dropped too and sampling rests after every
// batch for rest_ratio x its GPU time: at half duty (the default ratio of 1) an H200 stayed under
// its limit and the kernel was timed at full clock, run after run, as a locked clock would give. Later batches are
// kept whatever their clock above the threshold: resting is all a harness can do without locking
// clocks, and each record carries its kept batches' median clock. Kernels that never lower the
// clock never rest.
struct ThrottleOptions {
  double threshold = 0.75;
  double backoff_s = 0.05;
  double full_clock = 0.97;
  double rest_ratio = 1.0;  // 0: never rest (keep every batch at or above the threshold)
};

bool is_throttled(double sample_sm_clock_mhz, double default_sm_clock_mhz, const ThrottleOptions& options);

// What the timing loop does with one batch of samples, from the SM clock measured right after it.
struct BatchVerdict {
  bool keep = true;
  double idle_s = 0;  // before the next batch
};

// ThrottleOptions' rules, applied batch after batch of one timing mode.
class ClockGovernor {
 public:
  // Throws std::invalid_argument on options outside [0, 1] (fractions) or negative times.
  ClockGovernor(double default_sm_clock_mhz, ThrottleOptions options);

  BatchVerdict after_batch(double sm_clock_mhz, double batch_gpu_s, int samples);

  int throttled_samples() const { return throttled_samples_; }
  int power_limited_samples() const { return power_limited_samples_; }  // dropped when resting began
  bool resting() const { return resting_; }

 private:
  double default_mhz_;
  ThrottleOptions options_;
  int throttled_samples_ = 0, power_limited_samples_ = 0;
  bool resting_ = false;
};

}  // namespace kgate
