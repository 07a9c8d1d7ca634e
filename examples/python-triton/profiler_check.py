#!/usr/bin/env python3
"""Checks kgate's CUPTI medians of this suite against torch.profiler's kernel records of the same calls
(issue 37: they agree within 2% or 100 ns).

    python examples/python-triton/profiler_check.py RESULTS.json [--filter REGEX] [--calls N] [--seed N]

RESULTS.json (or .json.gz) is what suite.py wrote (--kgate_out). For each of its benchmarks that ran (or those
whose name matches --filter, re.search), this re-runs the benchmark's variant on its shape as kgate's cold mode
times it, under torch.profiler with CUDA activities:

* inputs and outputs made by the family's own functions, the inputs from a seeded torch.Generator, in as many
  copies as kgate's cold mode rotated among in one process (at most 64), rotated the same way: a variant that
  asks the L2 to keep a tensor (tuned's evict_last weight) finds it there after the flush when one copy is
  called over and over (1.76 us against 1.98 us at m 1 on an H100), and not when copies rotate;
* before every call the L2 emptied by reading a buffer of twice its size into a scalar, as kgate's read flush;
* the calls queued in batches behind a torch.cuda._sleep hold, so that they run back to back on the GPU as kgate's
  held batches do, not at Python's launch pace;
* warm-up calls first (Triton compiles the kernel on its first call), then --calls recorded calls.

A call's time is the span of its kernel records, first start to last end, as a kgate sample is. The variant's
records are told from the flush's and the hold's by name: the names that calls of the variant alone record,
which must not be among those the flush and the hold record.

It prints, per benchmark, kgate's cold median, the profiler's median, their difference and whether it is within
2% or 100 ns. Exit status: 0 every benchmark within, 1 one or more outside, 2 bad usage or input."""

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from pathlib import Path

import kgate
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

import suite  # noqa: F401  (registers the suite's families and variants)

MAX_INPUT_COPIES = 64  # kgate's kMaxInputCopies (measure/timing.hpp)

WITHIN_FRACTION = 0.02
WITHIN_NS = 100.0
WARMUP_CALLS = 20
CALLS_PER_HOLD = 20
# torch.cuda._sleep spins a number of cycles. Counted at a clock above any H100's or H200's (1.98 GHz), a hold
# lasts at least the time it was sized for; at a lower clock it only lasts longer.
HOLD_CLOCK_HZ = 2.0e9
HOLD_MARGIN = 3  # the hold lasts this many times the host's time to enqueue its batch under the profiler


class CannotCheck(Exception):
    """The check cannot be made: a results file that is not what it needs (the message names the file and JSON
    path), or a variant whose records cannot be told from the harness's."""


def read_results(path):
    try:
        raw = Path(path).read_bytes()
        if raw[:2] == b"\x1f\x8b":  # gzip, recognised by content as kgate's readers do
            raw = gzip.decompress(raw)
        document = json.loads(raw)
    except (OSError, EOFError, ValueError) as e:
        raise CannotCheck(f"{path}: {e}") from None
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        raise CannotCheck(f"{path}: $: not a results file (no benchmarks array)")
    return document


def field(node, where, key, kind):
    """node[key], which must be a `kind`; `where` is the file and node's JSON path, for the error."""
    if not isinstance(node, dict) or key not in node:
        raise CannotCheck(f"{where}: missing field '{key}'")
    if not isinstance(node[key], kind) or isinstance(node[key], bool):
        raise CannotCheck(f"{where}.{key}: expected {kind.__name__ if isinstance(kind, type) else 'a number'}, "
                          f"got {json.dumps(node[key])}")
    return node[key]


class Benchmark:
    """One benchmark of the results file that ran: its name, kgate's cold median, the names of the kernels kgate
    recorded for it, and the suite's family, variant and shape it names."""

    def __init__(self, where, block, families):
        self.name = field(block, where, "name", str)
        headline = field(block, where, "headline_mode", str)
        if headline != "cold":
            raise CannotCheck(f"{where}.headline_mode: '{headline}': this check re-runs the cold mode")
        cold = field(block, where, "cold", dict)
        timer = cold.get("timer", "events")  # absent: an event-timed file (docs/results-format.md)
        if timer != "cupti":
            raise CannotCheck(f"{where}.cold.timer: '{timer}': the check is of CUPTI-timed medians")
        summary = field(cold, f"{where}.cold", "summary", dict)
        self.kgate_median_ns = field(summary, f"{where}.cold.summary", "median", (int, float)) * 1e9
        # The copies one process rotated among: the record pools its processes' (input_copies each).
        processes = max(1, len(cold.get("repetition_medians_s", [])))
        self.input_copies = max(1, min(MAX_INPUT_COPIES, int(cold.get("input_copies", 1)) // processes))
        if not self.kgate_median_ns > 0:
            raise CannotCheck(f"{where}.cold.summary.median: expected a positive time")
        self.kgate_kernels = {kernel.get(key) for kernel in block.get("kernels", []) for key in ("name", "demangled")}

        family_name = field(block, where, "family", str)
        self.family = families.get(family_name)
        if self.family is None:
            raise CannotCheck(f"{where}.family: '{family_name}' is not a family suite.py registers "
                              f"({', '.join(sorted(families))})")
        variant_name = field(block, where, "variant", str)
        self.variant = next((v for v in self.family.variants if v.name == variant_name), None)
        if self.variant is None:
            raise CannotCheck(f"{where}.variant: '{variant_name}' is not a variant of {family_name}")
        shape_id = field(block, where, "shape", str)
        self.shape = next((s for s in self.family.bench_shapes if s.id == shape_id), None)
        if self.shape is None:
            raise CannotCheck(f"{where}.shape: '{shape_id}' is not a bench shape of {family_name}")


def benchmarks_to_check(path, document, name_filter):
    """The benchmarks of the file that ran and match the filter, each found in the suite before any is run."""
    families = {family.name: family for family in kgate.families()}
    checked = []
    for index, entry in enumerate(document["benchmarks"]):
        block = entry.get("kgate") if isinstance(entry, dict) else None
        # Rows without a kgate block are other repetitions or Google Benchmark's own; a benchmark that did not run
        # has no timing to check.
        if not isinstance(block, dict) or block.get("status") != "ok":
            continue
        if name_filter.search(str(block.get("name", ""))):
            checked.append(Benchmark(f"{path}: $.benchmarks[{index}].kgate", block, families))
    if not checked:
        raise CannotCheck(f"{path}: no benchmark that ran matches the filter '{name_filter.pattern}'")
    return checked


class ColdCalls:
    """A variant's calls as kgate's cold mode makes them: the L2 emptied before each, in held batches."""

    def __init__(self):
        l2_bytes = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
        # Equal values everywhere; the sum is read into a scalar that nobody reads, as kgate's read flush does.
        self.flush_buffer = torch.zeros(2 * max(l2_bytes, 1 << 20) // 4, dtype=torch.float32, device="cuda")
        self.flush_sink = torch.empty((), dtype=torch.float32, device="cuda")
        self.hold_cycles = 0

    def flush(self):
        torch.sum(self.flush_buffer, 0, out=self.flush_sink)

    def hold(self):
        torch.cuda._sleep(self.hold_cycles)

    def run(self, call, count):
        """Enqueues `count` cold calls in held batches; returns how many batches the host took longer to
        enqueue than their hold lasted (whose calls may then have waited on Python)."""
        hold_s = self.hold_cycles / HOLD_CLOCK_HZ
        outlasted = 0
        for first in range(0, count, CALLS_PER_HOLD):
            began = time.perf_counter()
            self.hold()
            for _ in range(min(CALLS_PER_HOLD, count - first)):
                self.flush()
                call()
            outlasted += time.perf_counter() - began > hold_s
        torch.cuda.synchronize()
        return outlasted

    def size_hold(self, call):
        """Sizes the hold from the host's time to enqueue one batch while the profiler records, as it will."""
        with profile(activities=[ProfilerActivity.CUDA]):
            began = time.perf_counter()
            for _ in range(CALLS_PER_HOLD):
                self.flush()
                call()
            enqueue_s = time.perf_counter() - began
            torch.cuda.synchronize()
        self.hold_cycles = int(HOLD_MARGIN * enqueue_s * HOLD_CLOCK_HZ)


def kernel_records(prof):
    """The profiler's device records (kernels, and copies or sets where there were any), in start order."""
    records = [event for event in prof.events() if event.device_type == DeviceType.CUDA]
    return sorted(records, key=lambda event: event.time_range.start)


def recorded_names(action, count):
    """Names of the device records `count` runs of `action` make, and how many records one run makes."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(count):
            action()
        torch.cuda.synchronize()
    records = kernel_records(prof)
    if len(records) % count:
        raise CannotCheck(f"{count} runs made {len(records)} device records: not the same number each")
    return {event.name for event in records}, len(records) // count


def profiler_median_ns(benchmark, cold, calls, seed):
    """The median span of the variant's records over `calls` cold calls, in ns; the names it recorded; how many
    batches outlasted their hold."""
    family, shape = benchmark.family, benchmark.shape
    generator = torch.Generator(device="cuda").manual_seed(seed)
    copies = [{**family.inputs(shape, generator), **family.outputs(shape)} for _ in range(benchmark.input_copies)]
    next_copy = [0]

    def call():
        benchmark.variant.fn(**copies[next_copy[0]])
        next_copy[0] = (next_copy[0] + 1) % len(copies)

    cold.run(call, WARMUP_CALLS)
    variant_names, records_per_call = recorded_names(call, 3)
    cold.size_hold(call)

    def harness():
        cold.hold()
        cold.flush()

    harness_names, _ = recorded_names(harness, 1)
    shared = variant_names & harness_names
    if shared:
        raise CannotCheck(f"{benchmark.name}: the variant and the flush or hold both record {sorted(shared)}: their "
                          "records cannot be told apart by name")

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        outlasted = cold.run(call, calls)
    records = [event for event in kernel_records(prof) if event.name in variant_names]
    if len(records) != calls * records_per_call:
        raise CannotCheck(f"{benchmark.name}: {calls} calls of {records_per_call} device records each made "
                          f"{len(records)} records of the variant's names")
    spans_ns = []
    for first in range(0, len(records), records_per_call):
        one_call = records[first:first + records_per_call]
        spans_ns.append((max(e.time_range.end for e in one_call) - one_call[0].time_range.start) * 1e3)
    return statistics.median(spans_ns), variant_names, outlasted


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", metavar="RESULTS.json", help="results file suite.py wrote (.json or .json.gz)")
    parser.add_argument("--filter", metavar="REGEX", default="",
                        help="only benchmarks whose name matches (re.search); default: every benchmark that ran")
    parser.add_argument("--calls", type=int, default=200, metavar="N", help="recorded calls per benchmark (200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the inputs' generator (0)")
    args = parser.parse_args(argv)
    if args.calls < 1:
        parser.error("--calls must be at least 1")
    try:
        args.filter = re.compile(args.filter)
    except re.error as e:
        parser.error(f"--filter '{args.filter}': {e}")
    return args


def main(argv):
    args = parse_args(argv)
    try:
        document = read_results(args.results)
        benchmarks = benchmarks_to_check(args.results, document, args.filter)
        recorded_gpu = document.get("context", {}).get("kgate", {}).get("gpu", {}).get("name")
        this_gpu = torch.cuda.get_device_name()
        if recorded_gpu != this_gpu:
            raise CannotCheck(f"{args.results}: $.context.kgate.gpu.name: the results name the GPU {recorded_gpu!r}, "
                              f"this process runs on {this_gpu!r}")
        cold = ColdCalls()
        rows, notes = [], []
        for benchmark in benchmarks:
            median_ns, names, outlasted = profiler_median_ns(benchmark, cold, args.calls, args.seed)
            difference_ns = median_ns - benchmark.kgate_median_ns
            within = abs(difference_ns) <= max(WITHIN_NS, WITHIN_FRACTION * benchmark.kgate_median_ns)
            rows.append((benchmark, median_ns, difference_ns, within))
            if not names <= benchmark.kgate_kernels:
                notes.append(f"{benchmark.name}: the profiler recorded {sorted(names)}, kgate's record names "
                             f"{sorted(benchmark.kgate_kernels - {None})}")
            if outlasted:
                notes.append(f"{benchmark.name}: {outlasted} of {-(-args.calls // CALLS_PER_HOLD)} batches took the "
                             "host longer to enqueue than their hold lasted (their calls may have waited on Python)")
    except CannotCheck as e:
        print(f"profiler_check: {e}", file=sys.stderr)
        return 2

    width = max(len("benchmark"), *(len(benchmark.name) for benchmark, *_ in rows))
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {args.calls} cold calls per benchmark")
    print(f"{'benchmark':<{width}}  {'kgate median':>12}  {'profiler median':>15}  {'difference':>20}  "
          "within 2% or 100 ns")
    for benchmark, median_ns, difference_ns, within in rows:
        percent = 100 * difference_ns / benchmark.kgate_median_ns
        print(f"{benchmark.name:<{width}}  {benchmark.kgate_median_ns / 1e3:>9.3f} us  {median_ns / 1e3:>12.3f} us  "
              f"{difference_ns:>+8.0f} ns ({percent:>+6.2f}%)  {'yes' if within else 'NO'}")
    for note in notes:
        print(f"note: {note}")
    outside = sum(not within for *_, within in rows)
    print(f"{len(rows) - outside} of {len(rows)} within 2% or 100 ns")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
