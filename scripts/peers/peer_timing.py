"""Device timing of a PyTorch call by kgate's method (src/kgate/measure/timing.cu, src/kgate/measure/stopping.cpp), with
kgate_bench's options as its registry listing states them:

* the clock (the listing's `timer`): "cupti" takes a sample as the span of the call's CUPTI activity
  records, measured by kgate's own code (bench/peer_clock.cpp, loaded through ctypes: KgateClock
  below), so a peer and a kgate variant are timed alike; the CUDA events around each call are kept as
  its end-to-end time. Without that library or without CUPTI, the events are the samples, said once;
* cold: before every sample the L2 is emptied with a buffer of twice its size (read, or written as
  memset does; the listing's `l2_flush`), the inputs rotate among copies, and each call sits between
  its own pair of CUDA events;
* hot: many calls captured in a CUDA graph, one replay timed, divided by the count;
* batches of samples are queued behind a spin kernel (torch.cuda._sleep) that keeps the GPU busy
  until the host has enqueued them all, so that Python's launch overhead never lands between two
  events; a batch whose hold ran out first is discarded and retried with a longer hold;
* after each batch two spins of known cycles timed with events measure the SM clock; a batch run
  below the throttle threshold is dropped and counted, and sampling backs off briefly; a batch run
  below full clock starts rests between batches (ClockGovernor, sampling_rules.py);
* sampling stops by kgate's noise-adaptive criterion (StoppingCriterion, sampling_rules.py)."""

import ctypes
import json
import math
import os
import statistics
import sys
import time

import torch

from peer_results import Timing
from sampling_rules import ClockGovernor, StoppingCriterion, StreamHold

PROBE_CYCLES = 200_000  # ~100 us at 2 GHz: the event timer's 0.5 us resolution is 0.5% of it
MAX_HOLD_RETRIES = 6


class ClockUnavailable(Exception):
    """kgate's CUPTI clock cannot be used in this process; the message says why."""


class KgateClock:
    """kgate's CUPTI clock for Python (bench/peer_clock.cpp): each timed call's activity records,
    attributed by external correlation, as GpuTimer takes them; and the kernels a call ran."""

    def __init__(self, library, serial_kernels=False):
        if not os.path.exists(library):
            raise ClockUnavailable(f"{library} does not exist (build kgate first: it lies beside kgate_bench)")
        try:
            self.lib = ctypes.CDLL(library)
        except OSError as e:
            raise ClockUnavailable(f"{library}: {e}") from None
        lib = self.lib
        lib.kgate_peer_clock_error.restype = ctypes.c_char_p
        lib.kgate_peer_clock_unavailable.argtypes = [ctypes.c_char_p, ctypes.c_ulong]
        lib.kgate_peer_clock_unavailable.restype = ctypes.c_long
        lib.kgate_peer_calls_start.argtypes = [ctypes.c_int]
        lib.kgate_peer_call_begin.argtypes = [ctypes.c_ulonglong]
        lib.kgate_peer_calls_stop.argtypes = [ctypes.c_ulonglong, ctypes.c_int, ctypes.POINTER(ctypes.c_double),
                                              ctypes.POINTER(ctypes.c_double)]
        lib.kgate_peer_trace_stop.argtypes = [ctypes.c_char_p, ctypes.c_ulong]
        lib.kgate_peer_trace_stop.restype = ctypes.c_long
        reason = ctypes.create_string_buffer(2048)
        if lib.kgate_peer_clock_unavailable(reason, len(reason)) > 0:
            raise ClockUnavailable(reason.value.decode(errors="replace"))
        self.serial_kernels = int(serial_kernels)

    def _check(self, status):
        if status != 0:
            raise ClockUnavailable(self.lib.kgate_peer_clock_error().decode(errors="replace"))

    def start(self):
        self._check(self.lib.kgate_peer_calls_start(self.serial_kernels))

    def begin_call(self, call):
        self._check(self.lib.kgate_peer_call_begin(call))

    def end_call(self):
        self._check(self.lib.kgate_peer_call_end())

    def stop(self, count, calls_per_sample):
        """Each call's (span, busy) seconds, calls 1..count."""
        spans, busy = (ctypes.c_double * count)(), (ctypes.c_double * count)()
        self._check(self.lib.kgate_peer_calls_stop(count, calls_per_sample, spans, busy))
        return list(spans), list(busy)

    def kernels(self, call):
        """The kernels `call()` launched, as kgate's kernel records (the results file's "kernels")."""
        self._check(self.lib.kgate_peer_trace_start())
        call()
        size = 1 << 16
        while True:
            text = ctypes.create_string_buffer(size)
            needed = self.lib.kgate_peer_trace_stop(text, size)
            if needed < 0:
                raise ClockUnavailable(self.lib.kgate_peer_clock_error().decode(errors="replace"))
            if needed < size:
                return json.loads(text.value.decode())
            size = needed + 1


def _driver():
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
        return libcuda if libcuda.cuInit(0) == 0 else None
    except OSError:
        return None


def _device_attribute(libcuda, attribute, ordinal):
    """cuDeviceGetAttribute, as kgate's device probe reads the clocks (0 when unknown)."""
    if libcuda is None:
        return 0
    device, value = ctypes.c_int(), ctypes.c_int()
    if libcuda.cuDeviceGet(ctypes.byref(device), ordinal) != 0:
        return 0
    return value.value if libcuda.cuDeviceGetAttribute(ctypes.byref(value), attribute, device) == 0 else 0


CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13  # kHz, cudaDevAttrClockRate
CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36  # kHz, cudaDevAttrMemoryClockRate


def device_facts():
    """The current GPU as kgate's context names it (context.kgate.gpu, docs/results-format.md)."""
    ordinal = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(ordinal)
    libcuda = _driver()
    driver = ctypes.c_int()
    if libcuda is None or libcuda.cuDriverGetVersion(ctypes.byref(driver)) != 0:
        driver.value = 0
    major, minor = (int(x) for x in (torch.version.cuda or "0.0").split(".")[:2])
    return {"name": props.name, "uuid": "GPU-" + str(getattr(props, "uuid", "")),
            "compute_capability": props.major * 10 + props.minor, "sm_count": props.multi_processor_count,
            "l2_bytes": props.L2_cache_size, "memory_bytes": props.total_memory, "driver_version": driver.value,
            "runtime_version": major * 1000 + minor * 10,
            "sm_clock_mhz_default": _device_attribute(libcuda, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, ordinal) / 1e3,
            "memory_clock_mhz": _device_attribute(libcuda, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, ordinal) / 1e3}


class TorchTimer:
    def __init__(self, timing, gpu, clock_library=None):
        self.timing = timing
        # The clock kgate_bench used (the listing's timer): CUPTI through kgate's own library where
        # it can be had, else the events, said once (the records say "timer": "events").
        self.clock = None
        self.fallback_reason = ""
        if timing.get("timer", "events") == "cupti":
            try:
                if not clock_library:
                    raise ClockUnavailable("no libkgate_peer_clock.so given")
                self.clock = KgateClock(clock_library, timing.get("cupti_kernels") == "serial")
            except ClockUnavailable as e:
                self.fallback_reason = str(e)
                print(f"peer_timing: warning: CUPTI timing unavailable ({e}); peers are CUDA-event-timed", file=sys.stderr)
        self.default_mhz = float(gpu["sm_clock_mhz_default"])
        self.stream = torch.cuda.Stream()
        flush_bytes = 2 * max(int(gpu["l2_bytes"]), 1 << 20)
        # Equal bytes everywhere; the read flush sums them into a scalar nobody reads.
        self.flush_buffer = torch.zeros(flush_bytes // 4, dtype=torch.float32, device="cuda")
        self.flush_sink = torch.empty((), dtype=torch.float32, device="cuda")
        self.flush_mode = timing["l2_flush"]
        if self.flush_mode not in ("read", "write"):
            raise ValueError(f"unknown L2 flush '{self.flush_mode}' (read | write)")
        self.max_batch = int(timing["max_batch"])
        self.starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.max_batch)]
        self.stops = [torch.cuda.Event(enable_timing=True) for _ in range(self.max_batch)]
        self.can_hold = hasattr(torch.cuda, "_sleep")
        self.hold = StreamHold()
        torch.cuda.synchronize()

    def _clock_hz(self):
        return (self.default_mhz if self.default_mhz > 0 else 2000.0) * 1e6

    def flush_l2(self, fill):
        if self.flush_mode == "write":
            self.flush_buffer.view(torch.uint8).fill_(fill & 0xFF)
        else:
            torch.sum(self.flush_buffer, 0, out=self.flush_sink)

    def kernels(self, launch):
        """The kernels one call ran (kgate's kernel records), or [] without kgate's clock."""
        if self.clock is None:
            return []
        with torch.cuda.stream(self.stream):
            records = self.clock.kernels(lambda: launch(0))
        return records

    def first_launch_s(self, launch):
        start = time.perf_counter()
        with torch.cuda.stream(self.stream):
            launch(0)
        self.stream.synchronize()
        return time.perf_counter() - start

    def sm_clock_mhz(self):
        """Two spins of PROBE_CYCLES and twice that, queued behind a hold: their difference is
        PROBE_CYCLES cycles with the events' fixed few microseconds cancelled out. (One spin read
        as its cycles over its events' time came out 5-17% low on an H200: the events' own overhead
        and, unheld, Python's launch latency landed in it.)"""
        if not self.can_hold:
            return 0.0

        def spin(s):
            self.starts[s].record(self.stream)
            torch.cuda._sleep(PROBE_CYCLES * (s + 1))
            self.stops[s].record(self.stream)

        short_s, long_s = self.run_batch(2, spin)[0]
        return PROBE_CYCLES / ((long_s - short_s) * 1e6) if long_s > short_s else 0.0

    def timed_call(self, s, call):
        """Sample s's call between its events and, while a batch records CUPTI activity, marked as call s + 1."""
        self.starts[s].record(self.stream)
        if self.recording:
            self.clock.begin_call(s + 1)
            try:
                call()
            finally:
                self.clock.end_call()
        else:
            call()
        self.stops[s].record(self.stream)

    recording = False

    def run_batch(self, count, enqueue_one, cupti=False, calls_per_sample=1):
        """Queues `count` samples behind a hold, releases it; returns (event seconds, CUPTI span
        seconds, CUPTI busy seconds) per sample, the last two empty without `cupti`."""
        count = max(1, min(count, self.max_batch))
        for _ in range(MAX_HOLD_RETRIES):
            released = torch.cuda.Event()
            if cupti:
                self.clock.start()
                self.recording = True
            try:
                with torch.cuda.stream(self.stream):
                    if self.can_hold:
                        torch.cuda._sleep(int(self.hold.seconds(count) * self._clock_hz()))
                        released.record(self.stream)
                    started = time.perf_counter()
                    for s in range(count):
                        enqueue_one(s)
                    enqueue_s_per_sample = (time.perf_counter() - started) / count
                    gaps_possible = self.can_hold and released.query()
                self.stream.synchronize()
            finally:
                self.recording = False
                spans, busy = self.clock.stop(count, calls_per_sample) if cupti else ([], [])
            self.hold.after_batch(enqueue_s_per_sample, ran_out=gaps_possible)
            if not gaps_possible:
                return [self.starts[s].elapsed_time(self.stops[s]) * 1e-3 for s in range(count)], spans, busy
            # The hold ran out before the host finished: redo the batch behind a longer one.
        raise RuntimeError("the host could not enqueue a batch within the stream hold; timings would include launch gaps")

    def sample_until_done(self, expected_sample_s, enqueue_one, launches_per_sample):
        if self.clock is not None:
            try:
                return self._sample(True, expected_sample_s, enqueue_one, launches_per_sample)
            except ClockUnavailable as e:  # for good, as GpuTimer falls back
                self.clock, self.fallback_reason = None, str(e)
                print(f"peer_timing: warning: CUPTI timing failed ({e}); peers from here on are CUDA-event-timed",
                      file=sys.stderr)
        return self._sample(False, expected_sample_s, enqueue_one, launches_per_sample)

    def _sample(self, cupti, expected_sample_s, enqueue_one, launches_per_sample):
        criterion = StoppingCriterion(self.timing)
        event_s, busy_s = [], []
        governor = ClockGovernor(self.timing, self.default_mhz)
        clocks = []
        start = time.perf_counter()
        batch = int(min(max(self.timing["batch_target_s"] / max(expected_sample_s, 1e-7), 1), self.max_batch))
        reason = None
        while reason is None:
            events, spans, busy = self.run_batch(batch, enqueue_one, cupti, launches_per_sample)
            samples = spans if cupti else events
            mhz = self.sm_clock_mhz()
            keep, idle_s = governor.after_batch(mhz, sum(samples), len(samples))
            if keep:
                for s in samples:
                    criterion.add_sample(s)
                event_s += events
                busy_s += busy
                clocks.append(mhz)
            if idle_s > 0:
                time.sleep(idle_s)
            reason = criterion.check(time.perf_counter() - start)
        if not criterion.samples_s:
            raise RuntimeError(f"every sample ran below the throttle threshold ({governor.throttled_samples} dropped); "
                               "the GPU is throttling")
        return Timing(samples_s=[s / launches_per_sample for s in criterion.samples_s],
                      target_met=criterion.target_met(), target_rel_stddev=criterion.target_rel_stddev,
                      stop_reason=reason, throttled_samples=governor.throttled_samples,
                      power_limited_samples=governor.power_limited_samples, rested=governor.resting, sm_clock_mhz=statistics.median(clocks),
                      gpu_time_s=criterion.gpu_time_s, wall_time_s=time.perf_counter() - start,
                      launches_per_sample=launches_per_sample, timer="cupti" if cupti else "events",
                      event_median_s=statistics.median(event_s) / launches_per_sample if cupti else 0.0,
                      busy_median_s=statistics.median(busy_s) / launches_per_sample if cupti else 0.0)

    def measure_cold(self, launch, copies):
        state = {"fill": 0, "copy": 0}

        def enqueue_one(s):
            state["fill"] += 1
            self.flush_l2(state["fill"])
            self.timed_call(s, lambda: launch(state["copy"]))
            state["copy"] = (state["copy"] + 1) % copies

        with torch.cuda.stream(self.stream):
            for c in range(copies):  # warm-up: one call per copy
                launch(c)
        estimate = self.run_batch(1, enqueue_one)[0][0]
        timing = self.sample_until_done(estimate, enqueue_one, 1)
        timing.input_copies = copies
        return timing

    def measure_hot(self, launch):
        def single(s):
            self.timed_call(s, lambda: launch(0))

        single_s = self.run_batch(1, single)[0][0]
        launches = int(min(max(math.ceil(self.timing["hot_replay_target_s"] / max(single_s, 1e-7)), 1),
                           self.timing["max_graph_launches"]))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=self.stream):
            for _ in range(launches):
                launch(0)

        def replay(s):
            self.timed_call(s, graph.replay)

        with torch.cuda.stream(self.stream):
            graph.replay()  # warm-up: the first replay uploads the graph
        self.stream.synchronize()
        return self.sample_until_done(single_s * launches, replay, launches)
