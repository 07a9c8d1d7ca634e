#!/usr/bin/env python3
"""The GPU tests of a build (ctest's label gpu) spread over GPUs, one process per worker.

ctest starts one process per case, and a CUDA process takes 0.4-0.5 s to start on an H100: most of
the correctness suite's 70 s on one GPU (336 cases; the same cases ran in 18 s as four processes).
So the cases ctest lists are run in batches, one GoogleTest process per batch (--gtest_filter),
as many at once per GPU as --slots, each worker taking the next batch when it finishes, and each
process its share of the host's cores for the references' threads (KGATE_HOST_THREADS).
What ctest would have done is kept: each case's working directory and timeout, a RESOURCE_LOCK's
cases one at a time on each GPU (on several GPUs, alone on the first: lock_gpu), and a case
that takes its process down (a crash, a lost context, a timeout) fails alone: the cases of its
batch that did not finish run again, one process each. The results are written as ctest writes
its JUnit (--junit), which `kgate report --correctness` reads, and each GPU's share of the work
and its wall time are printed.

Usage (scripts/gpu-tests.sh calls it): gpu_tests.py --build DIR --gpu ID [--gpu ID ...]
    [--slots N] [--junit FILE] [ctest's -R/-E/-L arguments...]
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

DEFAULT_TIMEOUT_S = 1500.0  # ctest's default when a test sets none
# Each worker takes this many batches. More would even out the workers' ends, but every batch is
# a process with its own CUDA context, and contexts are made and torn down one at a time host-wide:
# on a 4x H200 host, 16 processes at once spent about 3 s each outside their cases (0.85 s with 4).
# With the host references spread over threads (KGATE_HOST_THREADS) the cases are short enough
# that one batch a worker ends evenly: on a 2x H200 host 9.3-9.6 s against 10.4-10.6 s with two.
BATCHES_PER_WORKER = 1
SLOWEST_SHOWN = 5  # the cases named at the end, slowest first: where a slow suite's time goes


@dataclass
class Case:
    name: str  # GoogleTest's "Suite.Test", as ctest names it
    binary: str
    cwd: str
    timeout_s: float
    lock: str = ""  # ctest's RESOURCE_LOCK: such cases never run at the same time


@dataclass
class Batch:
    cases: list
    lock: str = ""  # its cases' RESOURCE_LOCK: one such batch at a time on a GPU


@dataclass
class Outcome:
    result: str  # "passed", "failed", "skipped"
    time_s: float = 0.0
    output: str = ""  # as ctest's JUnit shows it: for a skip, "<file>:<line>: Skipped\n<reason>"
    steps: dict = field(default_factory=dict)  # the case's own "<step>_s" properties: {step: seconds}


@dataclass
class GpuShare:
    cases: int = 0
    processes: int = 0
    busy_s: float = 0.0  # its processes' wall time, summed
    cases_s: float = 0.0  # its cases' own time, as GoogleTest reports it, summed
    first_start: float = math.inf
    last_end: float = 0.0


def list_cases(ctest_json):
    """ctest's --show-only=json-v1 listing -> [Case]; refuses a test that is not a GoogleTest case."""
    cases = []
    for test in ctest_json.get("tests", []):
        command = test.get("command") or []
        filters = [arg for arg in command[1:] if arg.startswith("--gtest_filter=")]
        if not command or len(filters) != 1:
            raise ValueError(f"test {test.get('name')!r} is not one GoogleTest case (command {command})")
        properties = {p["name"]: p["value"] for p in test.get("properties", [])}
        lock = properties.get("RESOURCE_LOCK", [])
        cases.append(Case(name=filters[0].partition("=")[2], binary=command[0],
                          cwd=properties.get("WORKING_DIRECTORY", os.path.dirname(command[0])),
                          timeout_s=float(properties.get("TIMEOUT", DEFAULT_TIMEOUT_S)),
                          lock=",".join(sorted(lock)) if isinstance(lock, list) else str(lock)))
    return cases


def plan_batches(cases, workers, kept_slots=0):
    """The batches in the order they are taken: first a lock's cases, in one batch (one process,
    on whichever GPU takes it: a GPU test's lock guards what each GPU has once, its profiler,
    CUPTI_ERROR_HARDWARE_BUSY for a second session), as they are the longest chain (13 CUPTI cases,
    6.6 s alone on an H200); then the others, split per binary into batches of about the same
    count, BATCHES_PER_WORKER for each worker left to them (every worker but one per locked batch;
    where a GPU is kept for the lock, lock_gpu, the workers of the others: all but its kept_slots),
    longest first. Split over GPUs, one batch per GPU, the lock's cases were slower everywhere: the
    driver serves profiling sessions one at a time host-wide, so on a 4x H200 host four copies of
    the CUPTI tests, one per GPU, took 17.5 s against 6.6 s for one alone (each case 2.6 times as
    slow), and the correctness phase 10.5-12.9 s on four GPUs against 11.1 s on one of them. Taken last, the locked batch ran
    after a worker's free batch, and with one batch a worker that added 3-4 s."""
    locked, free = {}, {}
    for case in cases:
        (locked.setdefault((case.binary, case.cwd, case.lock), []) if case.lock
         else free.setdefault((case.binary, case.cwd), [])).append(case)
    first = [Batch(group, lock) for (_, _, lock), group in locked.items()]
    batches = []
    unlocked = sum(len(group) for group in free.values())
    free_workers = workers - (kept_slots if kept_slots else len(first))
    size = max(1, math.ceil(unlocked / max(1, free_workers * BATCHES_PER_WORKER)))
    for group in free.values():
        # Interleaved rather than cut in runs: neighbouring cases are often one variant's large shapes.
        count = math.ceil(len(group) / size)
        batches += [Batch(group[i::count]) for i in range(count)]
    return first + sorted(batches, key=lambda b: -len(b.cases))


def lock_gpu(cases, gpus):
    """The GPU kept for the locked cases on a host of several GPUs, or None (one GPU, or no lock).
    There the lock's batch has its GPU to itself, and the other GPUs run the rest: the 13 CUPTI
    cases took 4.9-5.5 s alone on an H200 of a 4x H200 host, and 8.2 s beside another process on
    the same GPU, the longest process of the phase (a profiling pass counts the whole GPU's work,
    and replays beside another context's kernels). On one GPU they still run beside the others,
    which would otherwise wait for them."""
    return gpus[0] if len(gpus) > 1 and any(case.lock for case in cases) else None


def host_threads(cores, workers):
    """Each process's share of the cores (KGATE_HOST_THREADS, parallel.hpp), for the host
    references it spreads over threads: the processes at once share the host evenly."""
    return max(1, cores // max(1, workers))


def available_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def batch_timeout_s(batch):
    """A batch may take its slowest case's timeout, and a little more for each of the others: a
    hang is caught about as soon as ctest's per-case timeout would catch it."""
    return max(c.timeout_s for c in batch.cases) + 30.0 * (len(batch.cases) - 1)


def case_steps(case):
    """A case's RecordProperty("<step>_s", seconds) entries, as GoogleTest writes them: in
    <properties> (1.10 and later) or as attributes of <testcase> (before) -> {step: seconds}."""
    named = [(p.get("name") or "", p.get("value")) for p in case.iter("property")]
    named += [(k, v) for k, v in case.attrib.items() if k not in ("name", "classname", "time")]
    steps = {}
    for name, value in named:
        try:
            if name.endswith("_s") and len(name) > 2:
                steps[name[:-2]] = float(value)
        except (TypeError, ValueError):
            continue
    return steps


def gtest_outcomes(xml_path):
    """GoogleTest's XML report (--gtest_output=xml:FILE) -> {"Suite.Test": Outcome}."""
    outcomes = {}
    for suite in ET.parse(xml_path).getroot().iter("testsuite"):
        for case in suite.iter("testcase"):
            name = f"{case.get('classname') or suite.get('name')}.{case.get('name')}"
            time_s = float(case.get("time") or 0)
            failures = case.findall("failure")
            skipped = case.find("skipped")
            if failures:
                text = "\n".join((f.text or f.get("message") or "") for f in failures)
                outcomes[name] = Outcome("failed", time_s, text)
            elif skipped is not None or case.get("result") == "skipped":
                message = (skipped.get("message") if skipped is not None else "") or ""
                where, _, reason = message.partition("\n")
                outcomes[name] = Outcome("skipped", time_s, f"{where}: Skipped\n{reason}\n")
            elif case.get("status", "run") == "run":
                outcomes[name] = Outcome("passed", time_s)
            if name in outcomes:
                outcomes[name].steps = case_steps(case)
    return outcomes


def junit(results, wall_s):
    """The results as ctest writes its JUnit (ctest --output-junit), in the cases' listed order."""
    failures = sum(o.result == "failed" for _, o in results)
    skipped = sum(o.result == "skipped" for _, o in results)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuite name="(empty)" tests="{len(results)}" failures="{failures}" disabled="0" '
             f'skipped="{skipped}" hostname="" time="{round(wall_s)}" timestamp="{stamp}">']
    for name, outcome in results:
        status = {"passed": "run", "failed": "fail", "skipped": "run"}[outcome.result]
        lines.append(f'\t<testcase name={quoteattr(name)} classname={quoteattr(name)} time="{outcome.time_s:g}" '
                     f'status="{status}">')
        if outcome.result == "failed":
            first_line = outcome.output.splitlines()[0] if outcome.output else ""
            lines.append(f"\t\t<failure message={quoteattr(first_line)}/>")
        lines.append(f"\t\t<system-out>{escape(outcome.output)}</system-out>")
        lines.append("\t</testcase>")
    lines.append("</testsuite>")
    return "\n".join(lines) + "\n"


class Runner:
    def __init__(self, batches, gpus, slots, scratch, threads, lock_gpu=None):
        self.waiting = list(batches)  # in the order they are taken (plan_batches), reruns last
        self.held = set()  # (lock, GPU) of the locked batches running
        self.lock_gpu = lock_gpu  # the GPU kept for the locked batches, run alone there (lock_gpu())
        self.running = {gpu: 0 for gpu in gpus}  # batches running on each GPU
        self.pending = len(batches)
        self.gpus, self.slots, self.scratch, self.threads = gpus, slots, scratch, threads
        self.outcomes = {}
        self.shares = {gpu: GpuShare() for gpu in gpus}
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # a batch was added, or a lock released
        self.counter = 0
        self.longest = (0.0, 0, "", 0.0)  # the longest process: wall s, cases, GPU, its cases' own s

    def run(self):
        threads = [threading.Thread(target=self.worker, args=(gpu,), daemon=True)
                   for gpu in self.gpus for _ in range(self.slots)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def take(self, gpu):
        """The first waiting batch this GPU may run now, or None once every batch has finished."""
        with self.changed:
            while True:
                if self.pending == 0:
                    return None
                for i, batch in enumerate(self.waiting):
                    if self.may_take(batch, gpu):
                        if batch.lock:
                            self.held.add((batch.lock, gpu))
                        self.running[gpu] += 1
                        return self.waiting.pop(i)
                self.changed.wait()

    def may_take(self, batch, gpu):
        """Whether this GPU may start the batch now (called holding the lock)."""
        if self.lock_gpu is None:
            return not batch.lock or (batch.lock, gpu) not in self.held
        if gpu != self.lock_gpu:
            return not batch.lock
        # The kept GPU: the locked batches one at a time with nothing beside them, then the others.
        if any(b.lock for b in self.waiting) or self.held:
            return bool(batch.lock) and self.running[gpu] == 0
        return True

    def worker(self, gpu):
        while (batch := self.take(gpu)) is not None:
            try:
                self.run_batch(batch, gpu)
            except Exception as e:  # a fault of this script: its cases fail, and the others still run
                with self.lock:
                    for case in batch.cases:
                        self.outcomes.setdefault(case.name, Outcome("failed", 0.0, f"gpu_tests.py: {e!r}"))
                    self.pending -= 1
                print(f"gpu-tests: {len(batch.cases)} case(s) failed by gpu_tests.py itself: {e!r}", file=sys.stderr)
            with self.changed:
                self.held.discard((batch.lock, gpu))
                self.running[gpu] -= 1
                self.changed.notify_all()

    def run_batch(self, batch, gpu):
        with self.lock:
            self.counter += 1
            number = self.counter
        xml_path = os.path.join(self.scratch, f"batch{number}.xml")
        first = batch.cases[0]
        command = [first.binary, "--gtest_filter=" + ":".join(c.name for c in batch.cases),
                   f"--gtest_output=xml:{xml_path}"]
        environment = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu, KGATE_HOST_THREADS=str(self.threads))
        for variable in [v for v in environment if v.startswith("CTEST_RESOURCE_GROUP")]:
            del environment[variable]
        if "CUDA_VISIBLE_DEVICES" not in os.environ:
            environment["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"  # nvidia-smi's indices
        started = time.monotonic()
        try:
            done = subprocess.run(command, cwd=first.cwd, env=environment, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=batch_timeout_s(batch))
            output, ended_how = done.stdout.decode(errors="replace"), f"exit status {done.returncode}"
        except subprocess.TimeoutExpired as e:
            output = (e.stdout or b"").decode(errors="replace")
            ended_how = f"timeout after {e.timeout:.0f} s"
        except OSError as e:  # the listed binary is gone, or cannot run
            output, ended_how = str(e), "could not start"
        ended = time.monotonic()
        try:
            outcomes = gtest_outcomes(xml_path) if os.path.exists(xml_path) else {}
        except ET.ParseError:  # cut short as its process died
            outcomes = {}
        unfinished = [c for c in batch.cases if c.name not in outcomes]
        with self.lock:
            share = self.shares[gpu]
            share.processes += 1
            share.busy_s += ended - started
            share.first_start = min(share.first_start, started)
            share.last_end = max(share.last_end, ended)
            own_s = sum(o.time_s for o in outcomes.values())
            share.cases_s += own_s
            self.longest = max(self.longest, (ended - started, len(batch.cases), gpu, own_s))
            for case in batch.cases:
                if case.name in outcomes:
                    self.outcomes[case.name] = outcomes[case.name]
                    share.cases += 1
            if unfinished and len(batch.cases) == 1:
                # Alone, it took its process down (or never reported): that is its result.
                said = f"the test's process ended ({ended_how}) without a result:\n" + output[-4000:]
                self.outcomes[unfinished[0].name] = Outcome("failed", ended - started, said)
                share.cases += 1
                print(f"gpu-tests: FAILED {unfinished[0].name} ({ended_how})", file=sys.stderr)
            elif unfinished:
                print(f"gpu-tests: a process of {len(batch.cases)} cases on GPU {gpu} ended ({ended_how}) with "
                      f"{len(unfinished)} unfinished: each runs again in its own process", file=sys.stderr)
                self.waiting += [Batch([case], batch.lock) for case in unfinished]
                self.pending += len(unfinished)
            for case in batch.cases:
                if self.outcomes.get(case.name, Outcome("")).result == "failed" and case not in unfinished:
                    print(f"gpu-tests: FAILED {case.name}\n{self.outcomes[case.name].output}", file=sys.stderr)
            self.pending -= 1


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="the build directory to test")
    parser.add_argument("--gpu", action="append", required=True,
                        help="a GPU to use, as CUDA_VISIBLE_DEVICES names it (repeat for each)")
    parser.add_argument("--slots", type=int, default=1, help="processes at a time per GPU (default 1)")
    parser.add_argument("--junit", help="where to write the results as ctest's JUnit")
    options, ctest_arguments = parser.parse_known_args(argv)
    if options.slots < 1:
        parser.error("--slots takes a whole number of at least 1")
    try:
        listing = subprocess.run(["ctest", "--test-dir", options.build, "-N", "--show-only=json-v1", "-L", "gpu",
                                  *ctest_arguments], stdout=subprocess.PIPE, check=True)
        cases = list_cases(json.loads(listing.stdout))
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        print(f"gpu-tests: cannot list the GPU tests of {options.build} with ctest: {e}", file=sys.stderr)
        return 2
    if not cases:
        print(f"gpu-tests: ctest lists no GPU test (label gpu) in {options.build}: nothing to run")
        return 0
    workers = len(options.gpu) * options.slots
    kept = lock_gpu(cases, options.gpu)
    kept_slots = options.slots if kept is not None else 0
    batches = plan_batches(cases, workers, kept_slots)
    # The processes at once: every worker, or, beside a kept GPU's one locked batch, the other GPUs'.
    at_once = min(len(batches), workers - kept_slots + 1 if kept_slots else workers)
    given = os.environ.get("KGATE_HOST_THREADS")
    threads = given if given else str(host_threads(available_cores(), at_once))
    print(f"gpu-tests: {len(cases)} cases in {len(batches)} processes, {at_once} at a time "
          f"({options.slots} per GPU on {len(options.gpu)} GPU(s): {', '.join(options.gpu)}), "
          f"{threads} host thread(s) each{' (KGATE_HOST_THREADS)' if given else ''}")
    if kept is not None:
        print(f"gpu-tests: the cases under a RESOURCE_LOCK run first and alone on GPU {kept}, the others on the other GPUs")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kgate-gpu-tests.") as scratch:
        runner = Runner(batches, options.gpu, options.slots, scratch, threads, kept)
        runner.run()
    wall_s = time.monotonic() - started
    results = [(c.name, runner.outcomes[c.name]) for c in cases]
    if options.junit:
        with open(options.junit, "w") as out:
            out.write(junit(results, wall_s))
    for gpu, share in runner.shares.items():
        span = share.last_end - share.first_start if share.processes else 0
        # Where a GPU's span goes: its processes' wall time beyond their cases' own is their start
        # and exit (CUDA's context, GoogleTest's registration).
        print(f"gpu-tests: GPU {gpu}: {share.cases} cases in {share.processes} processes, "
              f"{span:.1f} s from its first start to its last end; processes {share.busy_s:.1f} s, "
              f"their cases {share.cases_s:.1f} s")
    wall, count, gpu, own = runner.longest
    print(f"gpu-tests: the longest process: {count} cases on GPU {gpu}, {wall:.1f} s (its cases {own:.1f} s)")
    steps = {}  # in the order the cases name them
    for _, outcome in results:
        for step, seconds in outcome.steps.items():
            steps[step] = steps.get(step, 0.0) + seconds
    if steps:
        # What the cases' own time is made of (the correctness cases: inputs drawn and copied,
        # the launch, the check against the reference): where to look when the cases are slow.
        print("gpu-tests: the cases' own time by step: " + ", ".join(f"{step} {s:.1f} s" for step, s in steps.items()))
    slowest = sorted(results, key=lambda r: -r[1].time_s)[:SLOWEST_SHOWN]
    if slowest and slowest[0][1].time_s > 0:
        print("gpu-tests: the slowest cases: " + "; ".join(
            f"{name} {o.time_s:.2f} s" + (" (" + ", ".join(f"{k} {v:.2f}" for k, v in o.steps.items()) + ")" if o.steps else "")
            for name, o in slowest))
    counts = {kind: sum(o.result == kind for _, o in results) for kind in ("passed", "failed", "skipped")}
    print(f"gpu-tests: {len(results)} cases: {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['skipped']} skipped, in {wall_s:.1f} s")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
