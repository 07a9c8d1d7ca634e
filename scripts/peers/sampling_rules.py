"""The decisions of the peers' sampling, each a named piece with no torch in it so that the CPU
tests (tests/peer_sampling_rules_test.py) run them: when to stop (kgate's StoppingCriterion), which
batches to keep and how long to rest (kgate's ClockGovernor), how long the stream is held before a
batch (StreamHold), and how many input copies cold mode rotates (kgate_bench's input_copies). The
first, second and last are ports of kgate's C++ (include/kgate/measure/stopping.hpp,
src/kgate/suite/measure_benchmark.cpp), so a peer and a kgate variant stop, throttle and rotate alike."""

import math


class StoppingCriterion:
    """kgate's StoppingCriterion (include/kgate/measure/stopping.hpp), fed one sample at a time."""

    def __init__(self, timing):
        self.min_samples = int(timing["min_samples"])
        self.min_gpu_time_s = float(timing["min_gpu_time_s"])
        self.max_wall_time_s = float(timing["max_wall_time_s"])
        self.target_rel_stddev = float(timing["target_rel_stddev"])
        self.max_samples = int(timing["max_samples"])
        self.convergence_min_samples = int(timing["convergence_min_samples"])
        self.max_improvement = float(timing["convergence_max_improvement_per_doubling"])
        self.samples_s = []
        self.rel_stddev_history = []
        self.gpu_time_s = 0.0
        self._mean = 0.0
        self._squared_deviations = 0.0

    def add_sample(self, seconds):
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"sample time {seconds} s is not a non-negative number")
        self.samples_s.append(seconds)
        self.gpu_time_s += seconds
        delta = seconds - self._mean
        self._mean += delta / len(self.samples_s)
        self._squared_deviations += delta * (seconds - self._mean)
        self.rel_stddev_history.append(self.rel_stddev())

    def rel_stddev(self):
        n = len(self.samples_s)
        if n < 2 or self._mean <= 0:
            return 0.0
        return math.sqrt(self._squared_deviations / (n - 1)) / self._mean

    def target_met(self):
        return len(self.samples_s) >= max(2, self.min_samples) and self.rel_stddev() <= self.target_rel_stddev

    def _noise_converged(self):
        n = len(self.samples_s)
        if n < self.convergence_min_samples:
            return False
        return self.rel_stddev_history[n - 1] > (1 - self.max_improvement) * self.rel_stddev_history[n // 2 - 1]

    def check(self, wall_elapsed_s):
        """None to keep sampling, else the stop reason as kgate names it."""
        if len(self.samples_s) >= self.min_samples and self.gpu_time_s >= self.min_gpu_time_s:
            if self.target_met():
                return "target-met"
            if self._noise_converged():
                return "noise-converged"
        if len(self.samples_s) >= self.max_samples:
            return "sample-cap"
        if wall_elapsed_s >= self.max_wall_time_s:
            return "time-cap"
        return None


class ClockGovernor:
    """kgate's ClockGovernor (include/kgate/measure/stopping.hpp): which batches to keep, how long to idle after each."""

    def __init__(self, timing, default_mhz):
        self.default_mhz = default_mhz
        self.threshold = float(timing["throttle_threshold"])
        self.backoff_s = float(timing["throttle_backoff_s"])
        self.full_clock = float(timing["full_clock"])
        self.rest_ratio = float(timing["rest_ratio"])
        self.throttled_samples = self.power_limited_samples = 0
        self.resting = False

    def after_batch(self, mhz, batch_gpu_s, samples):
        """(keep, idle_s) for one batch that ended at `mhz` (0: unknown, never dropped)."""
        rest_s = self.rest_ratio * batch_gpu_s if self.resting else 0.0
        known = mhz > 0 and self.default_mhz > 0
        if known and mhz < self.threshold * self.default_mhz:
            self.throttled_samples += samples
            return False, self.backoff_s + rest_s
        if not self.resting and known and mhz < self.full_clock * self.default_mhz and self.rest_ratio > 0:
            self.resting = True
            self.power_limited_samples += samples
            return False, self.backoff_s
        return True, rest_s


class StreamHold:
    """How long the spin that holds the stream before a batch runs: twice what enqueuing a sample
    took in the previous batch, times the batch's samples, plus a margin; a hold that ran out before
    the host finished is doubled and the batch redone. It follows the previous batch, not the
    slowest one ever: as a running maximum, one stall (a garbage collection, a first call) made
    every later hold of the run that long (the likely reason the small peers took 9 ms of host
    time a sample in an H100 run; not yet measured again).
    (kgate_bench needs none of this: its hold waits for a flag the host sets when it is done.)"""

    MARGIN_S = 100e-6

    def __init__(self, host_s_per_sample=50e-6):
        self.host_s_per_sample = host_s_per_sample

    def seconds(self, count):
        return 2 * self.host_s_per_sample * count + self.MARGIN_S

    def after_batch(self, enqueue_s_per_sample, ran_out):
        if ran_out:
            self.host_s_per_sample = 2 * max(self.host_s_per_sample, enqueue_s_per_sample)
        else:
            self.host_s_per_sample = enqueue_s_per_sample


def input_copies(bytes_per_copy, l2_bytes, placements, budget_bytes, max_copies):
    """Input copies rotated in cold mode, each a separate allocation, as kgate_bench plans them
    (src/kgate/suite/benchmark_plan.cpp, input_copies): where one copy fits in the L2, enough to cover it twice (at
    most max_copies); and at least `placements` where they fit in `budget_bytes`."""
    if bytes_per_copy <= 0:
        return 1
    l2_cover = 1 if bytes_per_copy >= l2_bytes else min(-(-2 * l2_bytes // bytes_per_copy), max_copies)
    return int(max(1, l2_cover, min(placements, budget_bytes // bytes_per_copy)))
