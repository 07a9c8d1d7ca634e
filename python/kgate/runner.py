"""A Python suite's command line: kgate.main() makes the file that calls it a benchmark suite with
kgate_bench's flags (docs/python.md). Every registered variant x bench shape is a benchmark,
measured by the engine's SuiteProcess exactly as kgate_bench measures a C++ variant; this module
only turns families into benchmarks, walks the process's steps and chains the processes."""

import os
import re
import sys
from pathlib import Path

from kgate.engine import EngineUnavailable, engine
from kgate.family import families
from kgate.instance import Instance

# Google Benchmark's flags that a Python suite takes too, so that the same command lines (kgate ab's
# --base-cmd, CI scripts) work for both kinds of suite.
PYTHON_SUITE_USAGE = """
Google Benchmark's flags that a Python suite takes:
  --benchmark_filter=REGEX        only the benchmarks whose name REGEX matches (searched, as Google Benchmark does)
  --benchmark_list_tests          print the benchmarks' names and exit (no GPU needed)
  --benchmark_repetitions=N       measure each benchmark N times (pooled into one record)
"""


def _gbench_flags(rest, program):
    """--benchmark_filter / _list_tests / _repetitions from what the engine left; refuses the rest."""
    taken = {"filter": "", "list_tests": False, "repetitions": 1}
    for arg in rest:
        name, has_value, value = arg.partition("=")
        if name == "--benchmark_filter" and has_value:
            taken["filter"] = value
        elif name == "--benchmark_list_tests":
            taken["list_tests"] = not has_value or value not in ("false", "0")
        elif name == "--benchmark_repetitions" and has_value and value.isdigit() and int(value) > 0:
            taken["repetitions"] = int(value)
        elif arg == "--help":  # the engine's flags left it in, as kgate_bench leaves it for Google Benchmark
            continue
        else:
            raise ValueError(f"unknown or malformed argument {arg!r} (see {program} --help)")
    return taken


def _suite_name(main_file):
    """A suite's name (its baseline file's name): the main file's stem, or its folder's for __main__."""
    path = Path(main_file).resolve()
    return path.parent.name if path.stem in ("__main__", "suite") else path.stem


def benchmarks(name_filter=""):
    """Every registered variant x bench shape as the engine's Benchmark, those `name_filter` matches."""
    pattern = re.compile(name_filter) if name_filter else None
    made = []
    for family in families():
        family.validate()
        for variant in family.variants:
            for shape in family.bench_shapes:
                name = f"{variant.full_name}/{shape.id}"
                if pattern and not pattern.search(name):
                    continue
                made.append(engine().callable_benchmark(
                    name=name, family=family.name, variant=variant.name, shape=shape.id, role=variant.role,
                    follows=variant.follows, min_bytes=float(family.min_bytes(shape)), flops=float(family.flops(shape)),
                    hot_headline=family.headline == "hot", read_dominated=family.read_dominated,
                    checked_at_any_size=any(shape.id == t.id for t in family.test_shapes), provenance=variant.provenance,
                    instantiate=lambda seed, v=variant, s=shape: Instance(v, s, seed)))
    return made


def _continue_in_new_process(suite):
    """Replaces this process with a fresh one going on from the results so far (--kgate_resume), after a fault."""
    args = suite.continuation(list(sys.orig_argv))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, args)


def _print_records(records):
    print(f"{'benchmark':<60} {'time':>12}  check")
    for name, r in records:
        if r.status != "ok":
            print(f"{name:<60} {r.status:>12}  {r.error}")
            continue
        check = {True: "passed", False: "FAILED", None: "-"}[r.correct]
        print(f"{name:<60} {r.median_s * 1e6:>9.3f} us  {check}")


def run(argv, suite_name=None, context=None):
    """The suite's command; returns its exit status (0, 1 when a benchmark failed, 2 on bad usage)."""
    program = Path(sys.argv[0]).name or "suite"
    try:
        flags, rest = engine().parse_flags([program] + list(argv))
        gbench = _gbench_flags(rest[1:], program)
        flags.repetitions = gbench["repetitions"]
        if flags.help:
            print(engine().usage() + PYTHON_SUITE_USAGE)
            return 0
        if flags.list_json:
            raise ValueError("--kgate_list_json lists a C++ registry; a Python suite lists with --benchmark_list_tests")
        chosen = benchmarks(gbench["filter"])
        names = engine().suite_benchmark_names(flags, chosen)
    except EngineUnavailable as error:
        print(f"{program}: {error}", file=sys.stderr)
        return 2
    except (ValueError, re.error) as error:
        print(f"{program}: {error}", file=sys.stderr)
        return 2
    if gbench["list_tests"]:
        print("\n".join(names))
        return 0

    if flags.handover_fd >= 0:  # started ahead of its turn: its context now, then the hand-over
        if not engine().await_handover(flags.handover_fd):
            Path(flags.resume).unlink(missing_ok=True)
            return 0  # the process before restarted after a fault, or ended: it measures on without this one
    try:
        suite = engine().Suite(flags, suite_name or _suite_name(sys.argv[0]), str(Path(sys.argv[0]).resolve().parent),
                               list(sys.orig_argv), chosen, {str(k): str(v) for k, v in (context or {}).items()})
    except RuntimeError as error:  # no usable GPU, or results handed over that cannot be read
        print(f"{program}: {error}; nothing to measure", file=sys.stderr)
        return 1
    if suite.needs_calibration:
        suite.calibrate()
    if suite.counts_first:
        suite.count()
    last = suite.process_index + 1 == suite.process_count
    if not last:  # the next process starts while this one times (kgate/suite/next_process.hpp)
        suite.start_next(sys.executable, list(sys.orig_argv))
    due = [name for name in suite.names if suite.due(name)]
    prefix = f"process {suite.process_index + 1}/{suite.process_count} " if suite.process_count > 1 else ""
    total = "" if suite.claims_as_it_runs else f"/{len(due)}"  # a claiming shard's share is known as it goes
    done = 0
    for name in due + suite.others:  # others: other shards' benchmarks, once this shard's are timed
        if not suite.take(name):  # another shard claimed it (kgate/suite/suite_process.hpp)
            continue
        done += 1
        if sys.stderr.isatty():
            print(f"{prefix}[{done}{total}] {name}", file=sys.stderr)
        if suite.measure(name).context_lost:
            if not engine().count_restart():
                print(f"{program}: too many restarts after faults; giving up", file=sys.stderr)
                return 1
            print(f"{program}: the CUDA context was lost; restarting on the remaining benchmarks", file=sys.stderr)
            _continue_in_new_process(suite)
    suite.finish_timing()
    if not last:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(suite.hand_over())  # no exit handlers: the device, PyTorch's with it, is released
    if not suite.counts_first:
        suite.count()
    path = suite.write()
    records = suite.records()
    _print_records(records)
    if path:
        print(f"{program}: wrote {len(records)} benchmarks to {path}", file=sys.stderr)
    return 1 if any(r.status == "failed" for _, r in records) else 0


def main(argv=None, *, suite=None, context=None):
    """Runs the suite of every family registered so far with this process's arguments, and exits.

    suite: the suite's name (its baseline file: baselines/<gpu>/<suite>.json); by default the main
    file's name, or its folder's for a suite.py or __main__.py.
    context: {key: text} recorded in the run's context.kgate.extra (what the suite ran with, e.g.
    library versions), which `kgate merge` keeps and the report's Environment table lists.
    """
    sys.exit(run(sys.argv[1:] if argv is None else argv, suite, context))
