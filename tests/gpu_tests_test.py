#!/usr/bin/env python3
"""scripts/gpu_tests.py on CPU, with a synthetic GoogleTest binary and a synthetic `ctest` listing:
the batches, the GPUs they run on, a RESOURCE_LOCK's cases one process per GPU and never two at once
on a GPU (on several GPUs, alone on the first), a crashing case
failed alone while its batch's other cases run again, skips and failures as ctest's JUnit says
them (and as kgate report reads them), each GPU's share, and the exit status.

Usage: gpu_tests_test.py SCRIPTS_DIR"""

import json
import os
import stat
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

# A GoogleTest binary in miniature: runs the cases its --gtest_filter names, writes GoogleTest's
# XML report at the end (so a crash loses the whole process's), and logs each case with the GPU and
# process that ran it.
FAKE_GTEST = r'''#!/usr/bin/env python3
import os, sys, time
args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
names = args["--gtest_filter"].split(":")
xml_path = args["--gtest_output"].removeprefix("xml:")
log = os.environ["FAKE_LOG"]
rows = []
gpu = os.environ.get("CUDA_VISIBLE_DEVICES")
started = time.time()
with open(log + ".threads", "a") as f:
    f.write(os.environ.get("KGATE_HOST_THREADS", "unset") + "\n")
for name in names:
    with open(log, "a") as f:
        f.write(f"{name} {gpu} {os.getpid()}\n")
    suite, _, test = name.partition(".")
    if suite == "Cupti":  # holds the GPU's profiler a while: a second holder at once is logged
        held = os.path.join(os.path.dirname(log), f"profiler-{gpu}")
        try:
            os.close(os.open(held, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            with open(log, "a") as f:
                f.write(f"{name} {gpu} {os.getpid()} OVERLAP\n")
        time.sleep(0.05)
        if os.path.exists(held):
            os.remove(held)
    if test.startswith("Crashes"):
        os._exit(134)
    if test.startswith("Fails"):
        body = '<failure message="x.cpp:3&#x0A;Expected equality" type=""/>'
    elif test.startswith("Skips"):
        body = '<skipped message="main.cpp:47&#x0A;does not handle d:80"/>'
    else:
        body = ""
    result = "skipped" if body.startswith("<skipped") else "completed"
    if not body:  # a passing case says where its time went, as correctness/main.cpp's do
        body = '<properties><property name="inputs_s" value="0.25"/><property name="check_s" value="0.5"/></properties>'
    rows.append(f'<testcase name="{test}" status="run" result="{result}" time="0.01" classname="{suite}">'
                f'{body}</testcase>')
with open(xml_path, "w") as f:
    f.write('<?xml version="1.0"?><testsuites><testsuite name="all">' + "".join(rows) + "</testsuite></testsuites>")
with open(log + ".spans", "a") as f:  # when this process ran, on which GPU, and whether it held the lock
    f.write(f"{gpu} {started} {time.time()} {int(any(n.startswith('Cupti.') for n in names))}\n")
sys.exit(1 if any("Fails" in n for n in names) else 0)
'''


def executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)


def listing(binary, names, lock_names=()):
    tests = []
    for name in names:
        properties = [{"name": "LABELS", "value": ["gpu"]}, {"name": "TIMEOUT", "value": 60.0},
                      {"name": "WORKING_DIRECTORY", "value": os.path.dirname(binary)}]
        if name in lock_names:
            properties.append({"name": "RESOURCE_LOCK", "value": ["cupti_profiler"]})
        tests.append({"name": name, "command": [binary, f"--gtest_filter={name}", "--gtest_also_run_disabled_tests"],
                      "properties": properties})
    return {"kind": "ctestInfo", "tests": tests}


def run(scripts, work, names, lock_names=(), gpus=("0", "1"), slots=2, threads=None):
    binary = os.path.join(work, "fake_correctness")
    executable(binary, FAKE_GTEST)
    with open(os.path.join(work, "listing.json"), "w") as f:
        json.dump(listing(binary, names, lock_names), f)
    # `ctest` on PATH prints the listing, as ctest -N --show-only=json-v1 would.
    executable(os.path.join(work, "ctest"), f"#!/bin/sh\ncat {work}/listing.json\n")
    log = os.path.join(work, "ran.log")
    for old in (log, log + ".threads", log + ".spans"):
        if os.path.exists(old):
            os.remove(old)
    environment = dict(os.environ, PATH=f"{work}:{os.environ['PATH']}", FAKE_LOG=log)
    environment.pop("CUDA_VISIBLE_DEVICES", None)
    environment.pop("KGATE_HOST_THREADS", None)
    if threads:
        environment["KGATE_HOST_THREADS"] = threads
    junit = os.path.join(work, "junit.xml")
    command = [sys.executable, os.path.join(scripts, "gpu_tests.py"), "--build", work, "--slots", str(slots),
               "--junit", junit] + [arg for gpu in gpus for arg in ("--gpu", gpu)]
    done = subprocess.run(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(log) as f:
        ran = [line.split() for line in f]
    with open(log + ".threads") as f:
        run.threads = {line.strip() for line in f}  # KGATE_HOST_THREADS as the processes saw it
    with open(log + ".spans") as f:
        run.spans = [(gpu, float(start), float(end), held == "1") for gpu, start, end, held in map(str.split, f)]
    return done, ran, ET.parse(junit).getroot() if os.path.exists(junit) else None


def check(condition, message):
    if not condition:
        print(f"FAIL: {message}")
        sys.exit(1)


def main(scripts):
    with tempfile.TemporaryDirectory() as work:
        # Forty passing cases and six CUPTI cases under one lock, on two GPUs with two slots each.
        names = [f"rmsnorm/naive.m={m}/n=4096/bf16" for m in range(40)]
        locked = [f"Cupti.Trace{i}" for i in range(6)]
        done, ran, junit = run(scripts, work, names + locked, lock_names=locked)
        check(done.returncode == 0, f"all passed: exit {done.returncode}\n{done.stdout}{done.stderr}")
        check(sorted(r[0] for r in ran) == sorted(names + locked), "every case ran once")
        check({r[1] for r in ran} == {"0", "1"}, "both GPUs ran cases")
        processes = {r[2] for r in ran}
        check(len(processes) < len(names) / 2,
              f"a few cases per process: {len(processes)} processes for {len(ran)} cases")
        check(not any(r[3:] for r in ran), f"never two holders of the lock at once on a GPU: {ran}")
        locked_processes = {(r[1], r[2]) for r in ran if r[0] in locked}
        check(len(locked_processes) == 1, f"the locked cases in one process, on one GPU: {locked_processes}")
        cases = junit.findall("testcase")
        check([c.get("name") for c in cases] == names + locked, "the JUnit lists the cases in ctest's order")
        check(all(c.get("status") == "run" for c in cases), "passed cases are status run")
        check("GPU 0:" in done.stdout and "GPU 1:" in done.stdout, f"each GPU's share is said:\n{done.stdout}")
        check("46 cases: 46 passed, 0 failed, 0 skipped" in done.stdout, done.stdout)
        # On two GPUs the lock's process has its GPU to itself: nothing else runs there beside it.
        lock_spans = [s for s in run.spans if s[3]]
        check(len(lock_spans) == 1, f"one locked process: {run.spans}")
        gpu, start, end, _ = lock_spans[0]
        beside = [s for s in run.spans if s[0] == gpu and not s[3] and s[1] < end and s[2] > start]
        check(not beside, f"nothing beside the locked process on GPU {gpu}: {beside}")
        check("run first and alone on GPU 0" in done.stdout, done.stdout)
        # Three processes at once: the locked one, and one per slot of the other GPU.
        share = str(max(1, len(os.sched_getaffinity(0)) // 3))
        check(run.threads == {share}, f"each of 3 processes at once has its share of the cores: {run.threads}, not {share}")
        check(f"{share} host thread(s) each" in done.stdout, done.stdout)
        check("the cases' own time by step: inputs 11.5 s, check 23.0 s" in done.stdout, done.stdout)
        check("the slowest cases: " in done.stdout and done.stdout.count("0.01 s (inputs 0.25, check 0.50)") == 5,
              f"the five slowest cases are named with their steps:\n{done.stdout}")

        # KGATE_HOST_THREADS given: every process has it as given.
        done, ran, junit = run(scripts, work, names[:4], threads="3")
        check(run.threads == {"3"} and "3 host thread(s) each (KGATE_HOST_THREADS)" in done.stdout,
              f"KGATE_HOST_THREADS is passed on: {run.threads}\n{done.stdout}")

        # On one GPU the lock's cases are one process, whatever the slots.
        done, ran, junit = run(scripts, work, names[:8] + locked, lock_names=locked, gpus=("0",), slots=3)
        check(done.returncode == 0 and not any(r[3:] for r in ran), f"one GPU, no overlap: {done.stdout}{ran}")
        check(len({r[2] for r in ran if r[0] in locked}) == 1, "one GPU: the locked cases share one process")

        # The locked batch is taken first, whatever its count: on one worker its cases run before all the others.
        done, ran, junit = run(scripts, work, names[:6] + locked, lock_names=locked, gpus=("0",), slots=1)
        check(done.returncode == 0 and ran and ran[0][0] in locked and ran[-1][0] not in locked,
              f"the locked batch runs first: {ran[:2]} ... {ran[-2:]}")
        # One batch a worker: 2 GPUs x 2 slots are the locked batch on GPU 0, and one for each of GPU 1's slots.
        done, ran, junit = run(scripts, work, names + locked, lock_names=locked)
        check(len({r[2] for r in ran}) == 3, f"one process a worker: {len({r[2] for r in ran})} processes")
        # Without a lock every GPU's slots share the cases: 2 GPUs x 2 slots are four batches.
        done, ran, junit = run(scripts, work, names)
        check(len({r[2] for r in ran}) == 4 and {r[1] for r in ran} == {"0", "1"},
              f"no lock, one process a worker on both GPUs: {len({r[2] for r in ran})} processes")

        # A failure, a skip, and a crash that takes down its process: the crash fails alone, the
        # other cases of its process run again, each in its own.
        names = [f"rmsnorm/naive.m={m}/n=4096/bf16" for m in range(12)]
        names[3] = "rmsnorm/naive.Fails"
        names[5] = "rmsnorm/naive.Skips"
        names[7] = "rmsnorm/naive.Crashes"
        done, ran, junit = run(scripts, work, names, gpus=("GPU-aaaa",), slots=1)
        check(done.returncode == 1, f"a failure fails the run: exit {done.returncode}")
        by_name = {c.get("name"): c for c in junit.findall("testcase")}
        check(by_name["rmsnorm/naive.Fails"].get("status") == "fail", "the failed case is status fail")
        skipped_out = by_name["rmsnorm/naive.Skips"].find("system-out").text
        check(by_name["rmsnorm/naive.Skips"].get("status") == "run"
              and skipped_out == "main.cpp:47: Skipped\ndoes not handle d:80\n",
              f"a skip reads as ctest shows GoogleTest's: {skipped_out!r}")
        crashed = by_name["rmsnorm/naive.Crashes"]
        check(crashed.get("status") == "fail" and "exit status 134" in crashed.find("system-out").text,
              "the crashing case failed, saying how its process ended")
        check(all(by_name[n].get("status") == "run" for n in names if n.rpartition(".")[2].startswith("m=")),
              "the crash's batch mates ran again and passed")
        check(sum(r[0] == "rmsnorm/naive.Crashes" for r in ran) == 2, "the crash ran in its batch, then alone")
        check({r[1] for r in ran} == {"GPU-aaaa"}, "a GPU named by UUID is passed on as given")
        check("each runs again in its own process" in done.stderr
              and "FAILED rmsnorm/naive.Crashes" in done.stderr, done.stderr)
        check("12 cases: 9 passed, 2 failed, 1 skipped" in done.stdout, done.stdout)
        # A listed binary that is gone: its cases fail, each saying so, and the run ends.
        os.rename(os.path.join(work, "fake_correctness"), os.path.join(work, "gone"))
        executable(os.path.join(work, "ctest"), f"#!/bin/sh\ncat {work}/listing.json\n")
        environment = dict(os.environ, PATH=f"{work}:{os.environ['PATH']}", FAKE_LOG=os.path.join(work, "ran.log"))
        done = subprocess.run([sys.executable, os.path.join(scripts, "gpu_tests.py"), "--build", work, "--gpu", "0",
                               "--junit", os.path.join(work, "gone.xml")], env=environment, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=60)
        check(done.returncode == 1 and "12 cases: 0 passed, 12 failed" in done.stdout,
              f"a missing binary fails its cases: exit {done.returncode}\n{done.stdout}{done.stderr}")
        check("could not start" in done.stderr, done.stderr)

        # ctest that lists nothing: nothing to run, as ctest says; a ctest that fails: exit 2.
        with open(os.path.join(work, "listing.json"), "w") as f:
            json.dump({"tests": []}, f)
        done = subprocess.run([sys.executable, os.path.join(scripts, "gpu_tests.py"), "--build", work, "--gpu", "0"],
                              env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(done.returncode == 0 and "nothing to run" in done.stdout, f"no GPU test: {done.returncode} {done.stdout}")
        executable(os.path.join(work, "ctest"), "#!/bin/sh\nexit 8\n")
        done = subprocess.run([sys.executable, os.path.join(scripts, "gpu_tests.py"), "--build", work, "--gpu", "0"],
                              env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(done.returncode == 2 and "cannot list the GPU tests" in done.stderr, f"{done.returncode} {done.stderr}")
    print("gpu_tests: all checks passed")


if __name__ == "__main__":
    main(sys.argv[1])
