#!/usr/bin/env python3
"""CPU tests of the peers' sampling decisions (scripts/peers/sampling_rules.py): the stopping rule
and the clock governor are ports of kgate's C++ and are held to the same cases as
tests/stopping_test.cpp; input_copies to tests/measure_plan_test.cpp; StreamHold on its own.
Needs neither torch nor a GPU."""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "peers"))

from sampling_rules import ClockGovernor, StoppingCriterion, StreamHold, input_copies  # noqa: E402

MIB = 1 << 20


def timing(**overrides):
    """kgate_bench's defaults as its listing states them, with the test's own values."""
    t = {"min_samples": 10, "min_gpu_time_s": 0.5, "max_wall_time_s": 15.0, "target_rel_stddev": 0.005,
         "max_samples": 100000, "convergence_min_samples": 64, "convergence_max_improvement_per_doubling": 0.1,
         "throttle_threshold": 0.75, "throttle_backoff_s": 0.05, "full_clock": 0.97, "rest_ratio": 1.0}
    t.update(overrides)
    return t


def run_until_stop(criterion, sample_s):
    """The timing loop: one sample, then a check, wall time at twice the GPU time (as the C++ test)."""
    reason, i = None, 0
    while reason is None:
        criterion.add_sample(sample_s(i))
        reason = criterion.check(2 * criterion.gpu_time_s)
        i += 1
    return reason


def noisy_millisecond(seed):
    rng = random.Random(seed)
    return lambda i: 1e-3 * (1 + 0.05 * rng.gauss(0, 1))


class StoppingCriterionTest(unittest.TestCase):
    def test_constant_samples_stop_at_min_samples_once_min_time_is_reached(self):
        fast_enough = StoppingCriterion(timing(min_samples=10, min_gpu_time_s=0.5))
        self.assertEqual(run_until_stop(fast_enough, lambda i: 0.1), "target-met")
        self.assertEqual(len(fast_enough.samples_s), 10)
        needs_time = StoppingCriterion(timing(min_samples=10, min_gpu_time_s=0.5))
        self.assertEqual(run_until_stop(needs_time, lambda i: 2.0 ** -6), "target-met")
        self.assertEqual(len(needs_time.samples_s), 32)  # 32 x 2^-6 s = 0.5 s exactly
        self.assertEqual(needs_time.rel_stddev(), 0.0)

    def test_min_gpu_time_holds_with_tiny_samples(self):
        criterion = StoppingCriterion(timing(min_samples=10, min_gpu_time_s=2.0 ** -10))
        for _ in range(1023):
            criterion.add_sample(2.0 ** -20)
            self.assertIsNone(criterion.check(0))
        criterion.add_sample(2.0 ** -20)
        self.assertEqual(criterion.check(0), "target-met")

    def test_steady_noise_stops_by_convergence_not_the_cap(self):
        criterion = StoppingCriterion(timing())
        self.assertEqual(run_until_stop(criterion, noisy_millisecond(7)), "noise-converged")
        self.assertFalse(criterion.target_met())
        self.assertAlmostEqual(criterion.rel_stddev(), 0.05, delta=0.01)
        self.assertLess(len(criterion.samples_s), 1000)

    def test_caps_stop_even_before_the_minimums(self):
        criterion = StoppingCriterion(timing(min_gpu_time_s=100.0, max_wall_time_s=15.0))
        criterion.add_sample(1e-3)
        self.assertIsNone(criterion.check(14.9))
        self.assertEqual(criterion.check(15.0), "time-cap")
        capped = StoppingCriterion(timing(min_samples=10, max_samples=5))
        self.assertEqual(run_until_stop(capped, noisy_millisecond(3)), "sample-cap")
        self.assertEqual(len(capped.samples_s), 5)
        self.assertFalse(capped.target_met())  # 5 samples are fewer than min_samples

    def test_target_is_not_claimed_on_fewer_than_min_samples(self):
        criterion = StoppingCriterion(timing(min_samples=10))
        for _ in range(9):
            criterion.add_sample(1e-3)
        self.assertFalse(criterion.target_met())
        criterion.add_sample(1e-3)
        self.assertTrue(criterion.target_met())

    def test_bad_samples_are_errors(self):
        criterion = StoppingCriterion(timing())
        for bad in (-1e-3, float("nan"), float("inf")):
            with self.assertRaises(ValueError):
                criterion.add_sample(bad)


class ClockGovernorTest(unittest.TestCase):
    def test_at_full_clock_every_batch_is_kept_without_rest(self):
        governor = ClockGovernor(timing(), 1980)
        for mhz in (1980.0, 1965.0, 1921.0, 2100.0, 0.0):  # 0: unknown clock
            self.assertEqual(governor.after_batch(mhz, 2e-3, 8), (True, 0.0), mhz)
        self.assertFalse(governor.resting)
        self.assertEqual((governor.throttled_samples, governor.power_limited_samples), (0, 0))

    def test_below_full_clock_the_batch_is_dropped_and_sampling_rests_from_then_on(self):
        governor = ClockGovernor(timing(rest_ratio=1.0), 1980)
        self.assertTrue(governor.after_batch(1950, 2e-3, 4)[0])
        self.assertEqual(governor.after_batch(1700, 2e-3, 4), (False, 0.05))  # 86%: power-managed
        self.assertTrue(governor.resting)
        self.assertEqual(governor.power_limited_samples, 4)
        self.assertEqual(governor.after_batch(1970, 3e-3, 4), (True, 3e-3))
        self.assertEqual(governor.after_batch(1800, 2e-3, 4), (True, 2e-3))
        self.assertEqual(governor.power_limited_samples, 4)

    def test_throttled_batches_are_dropped_with_the_backoff_and_counted_apart(self):
        governor = ClockGovernor(timing(rest_ratio=2.0), 1980)
        self.assertEqual(governor.after_batch(1000, 1e-3, 3), (False, 0.05))
        self.assertEqual(governor.throttled_samples, 3)
        self.assertFalse(governor.resting)
        governor.after_batch(1800, 1e-3, 2)  # now resting
        keep, idle_s = governor.after_batch(1000, 1e-3, 3)
        self.assertFalse(keep)
        self.assertAlmostEqual(idle_s, 0.05 + 2e-3)
        self.assertEqual((governor.throttled_samples, governor.power_limited_samples), (6, 2))

    def test_unknown_default_clock_never_drops_or_rests(self):
        self.assertEqual(ClockGovernor(timing(), 0).after_batch(1000, 2e-3, 4), (True, 0.0))


class StreamHoldTest(unittest.TestCase):
    def test_a_hold_covers_twice_the_last_batch_enqueue_time_plus_a_margin(self):
        hold = StreamHold(host_s_per_sample=50e-6)
        self.assertAlmostEqual(hold.seconds(64), 2 * 50e-6 * 64 + StreamHold.MARGIN_S)
        hold.after_batch(30e-6, ran_out=False)
        self.assertAlmostEqual(hold.seconds(10), 2 * 30e-6 * 10 + StreamHold.MARGIN_S)

    def test_one_stall_does_not_lengthen_every_later_hold(self):
        hold = StreamHold(host_s_per_sample=50e-6)
        hold.after_batch(5e-3, ran_out=False)  # a batch slowed by a 320 ms stall, which the hold covered
        hold.after_batch(60e-6, ran_out=False)
        self.assertAlmostEqual(hold.seconds(64), 2 * 60e-6 * 64 + StreamHold.MARGIN_S)

    def test_a_hold_that_ran_out_doubles_and_never_falls_below_what_was_measured(self):
        hold = StreamHold(host_s_per_sample=50e-6)
        hold.after_batch(80e-6, ran_out=True)
        self.assertAlmostEqual(hold.host_s_per_sample, 160e-6)
        hold.after_batch(10e-6, ran_out=True)  # ran out again although enqueuing looked fast
        self.assertAlmostEqual(hold.host_s_per_sample, 320e-6)


class InputCopiesTest(unittest.TestCase):
    L2, BUDGET, MAX = 60 * MIB, 4.0 * (1 << 30), 64

    def copies(self, size, placements, budget=None):
        return input_copies(size, self.L2, placements, self.BUDGET if budget is None else budget, self.MAX)

    def test_copies_that_fit_in_the_l2_cover_it_twice(self):
        self.assertEqual(self.copies(30 * MIB, 1), 4)
        self.assertEqual(self.copies(50 * MIB, 1), 3)
        self.assertEqual(self.copies(10 * MIB, 8), 12)
        self.assertEqual(self.copies(64 * 1024, 8), self.MAX)

    def test_copies_larger_than_the_l2_rotate_for_placements_within_the_budget(self):
        self.assertEqual(self.copies(self.L2, 1), 1)
        self.assertEqual(self.copies(235 * MIB, 8), 8)
        self.assertEqual(self.copies(1024 * MIB, 8), 4)
        self.assertEqual(self.copies(5000 * MIB, 8), 1)
        self.assertEqual(self.copies(235 * MIB, 8, budget=500.0 * MIB), 2)
        self.assertEqual(self.copies(30 * MIB, 8, budget=10.0 * MIB), 4)

    def test_an_empty_instance_has_one_copy(self):
        self.assertEqual(self.copies(0, 8), 1)


if __name__ == "__main__":
    unittest.main()
