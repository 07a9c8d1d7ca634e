#!/usr/bin/env python3
"""docs/results.schema.json against the results kgate wrote: every recorded run under tests/data
and every stored baseline under baselines/ validates, and so does a baseline kgate writes now from
the recorded nvbench run; copies of a recorded run with one planted mistake each (a wrong type, a
missing required field, a value out of range) do not, so the schema is strict enough to catch them.

usage: results_schema_test.py KGATE SCHEMA DATA_DIR BASELINES_DIR
Exits 77 (skipped) only when Python's jsonschema is missing (scripts/bootstrap.sh installs Debian's
python3-jsonschema).
"""
import copy
import glob
import gzip
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ProcessPoolExecutor

try:
    import jsonschema
except ImportError:
    print("skipped: no jsonschema for Python (scripts/bootstrap.sh installs python3-jsonschema)")
    sys.exit(77)

# The files under tests/data that are not kgate results, and why.
OTHER_FORMATS = {
    "synthetic-gbench-repetitions.json": "plain Google Benchmark JSON",
    "recorded-nvbench.tar.gz": "nvbench JSON and its --jsonbin sample files",
    "synthetic-kgate-bench.sh": "a stand-in for kgate_bench, not a result",
    "synthetic-results-command.sh": "a stand-in for a command under kgate ab --base-cmd/--head-cmd, not a result",
    "synthetic-story-llama3-8b.py": "the script that writes synthetic-story-llama3-8b.json",
}
# The recorded run the mutations are planted in: small, with a workload block and kernels.
MUTATED = "recorded-h200-story-decode.json"


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def validator(schema_path):
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(schema_path, path):
    """The schema's complaints about one file, as 'path: JSON path: message' lines."""
    found = validator(schema_path).iter_errors(load(path))
    return [f"{path}: {e.json_path}: {e.message[:200]}" for e in found]


def mutations(doc):
    """(what was planted, the document with it), one mistake each."""
    first = doc["benchmarks"][0]["kgate"]
    mode = first.get("headline_mode", "cold")

    def planted(change):
        mutated = copy.deepcopy(doc)
        change(mutated, mutated["benchmarks"][0]["kgate"])
        return mutated

    yield "no context.kgate", planted(lambda d, b: d["context"].pop("kgate"))
    yield "no gpu.name", planted(lambda d, b: d["context"]["kgate"]["gpu"].pop("name"))
    yield "schema_version a string", planted(lambda d, b: d["context"]["kgate"].update(schema_version="1"))
    yield "schema_version 2", planted(lambda d, b: d["context"]["kgate"].update(schema_version=2))
    yield "sm_count negative", planted(lambda d, b: d["context"]["kgate"]["gpu"].update(sm_count=-1))
    yield "extra holds a number", planted(lambda d, b: d["context"]["kgate"]["extra"].update(shard=1))
    yield "a negative wall-time phase", planted(lambda d, b: d["context"]["kgate"].update(wall_s={"timing": -1}))
    yield "no benchmarks", planted(lambda d, b: d.update(benchmarks=[]))
    yield "a benchmark without a name", planted(lambda d, b: d["benchmarks"][0].pop("name"))
    yield "no status", planted(lambda d, b: b.pop("status"))
    yield "unknown status", planted(lambda d, b: b.update(status="fine"))
    yield "headline_mode warm", planted(lambda d, b: b.update(headline_mode="warm"))
    yield "ok without its headline mode", planted(lambda d, b: b.pop(mode))
    yield "ok without samples", planted(lambda d, b: b[mode].update(samples_s=[]))
    yield "samples a string", planted(lambda d, b: b[mode].update(samples_s="many"))
    yield "a negative sample", planted(lambda d, b: b[mode]["samples_s"].__setitem__(0, -1.0))
    yield "unknown timer", planted(lambda d, b: b[mode].update(timer="rdtsc"))
    yield "launches_per_sample 0", planted(lambda d, b: b[mode].update(launches_per_sample=0))
    yield "correct a string", planted(lambda d, b: b.update(correct="yes"))
    yield "unknown roofline class", planted(lambda d, b: b["derived"].update(roofline="fast"))
    yield "a grid of two", planted(lambda d, b: b["kernels"][0].update(grid=[1, 2]))
    yield "a workload without its model", planted(lambda d, b: b["workload"].pop("model"))
    yield "a timeline kernel without a step", planted(lambda d, b: b["workload"]["timeline"][0].pop("step"))
    yield "a plain row without its time", planted(lambda d, b: (d["benchmarks"][0].pop("kgate"), d["benchmarks"][0].pop("real_time")))
    yield "time_unit minutes", planted(lambda d, b: d["benchmarks"][0].update(time_unit="min"))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    kgate, schema_path, data_dir, baselines_dir = sys.argv[1:]
    failures = []

    runs = []
    for path in sorted(glob.glob(os.path.join(data_dir, "*"))):
        name = os.path.basename(path)
        if name in OTHER_FORMATS:
            print(f"skipped {name}: {OTHER_FORMATS[name]}")
        elif name.endswith((".json", ".json.gz")):
            runs.append(path)
        else:
            failures.append(f"{path}: neither a kgate result nor named in OTHER_FORMATS (say what it is)")
    runs += sorted(glob.glob(os.path.join(baselines_dir, "*", "*.json")))

    with tempfile.TemporaryDirectory() as work:
        # A baseline kgate writes now, from records that were not kgate's: nvbench's.
        with tarfile.open(os.path.join(data_dir, "recorded-nvbench.tar.gz")) as archive:
            archive.extractall(work)
        update = subprocess.run([kgate, "baseline", "update", os.path.join(work, "recorded-nvbench-run-a.json"),
                                 "--baseline-dir", os.path.join(work, "baselines")], capture_output=True, text=True)
        if update.returncode != 0:
            failures.append(f"kgate baseline update of the recorded nvbench run: exit {update.returncode}: {update.stderr}")
        runs += sorted(glob.glob(os.path.join(work, "baselines", "*", "*.json")))

        # Tens of megabytes of samples: the files are validated side by side.
        with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            for path, found in zip(runs, pool.map(problems, [schema_path] * len(runs), runs)):
                print(f"{'valid' if not found else 'INVALID'} {path}")
                failures += found[:5]

    check = validator(schema_path)
    original = load(os.path.join(data_dir, MUTATED))
    for planted, doc in mutations(original):
        if check.is_valid(doc):
            failures.append(f"{MUTATED} with {planted}: the schema accepts it")
        else:
            print(f"refused as it must be: {MUTATED} with {planted}")

    for failure in failures:
        print("FAIL", failure)
    print(f"{len(runs)} results files against {schema_path}: {len(failures)} problem(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
