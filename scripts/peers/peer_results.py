"""The peers' results as kgate results JSON (docs/results-format.md): valid Google Benchmark JSON with
a `kgate` block in the context and in each benchmark, so that `kgate merge` folds it into a kgate
run and `kgate report` shows it. Needs neither torch nor a GPU."""

import gzip
import json
import math
import os
import re
import struct
from dataclasses import dataclass, field

RESULTS_SCHEMA = 1  # kResultsSchemaVersion (include/kgate/results/results.hpp)


@dataclass
class Timing:
    """One timing mode's samples and how sampling ended (kgate's TimingRecord)."""
    samples_s: list
    target_met: bool
    target_rel_stddev: float
    stop_reason: str
    throttled_samples: int = 0
    power_limited_samples: int = 0
    rested: bool = False
    sm_clock_mhz: float = 0.0  # median over the kept batches; 0 = unknown
    gpu_time_s: float = 0.0
    wall_time_s: float = 0.0
    launches_per_sample: int = 1
    input_copies: int = 1  # separately allocated input copies the samples ran on (cold: rotated)
    timer: str = "events"  # "cupti" | "events", as kgate's TimingRecord::timer
    event_median_s: float = 0.0  # CUPTI-timed only: the median end-to-end time between the call's events
    busy_median_s: float = 0.0  # CUPTI-timed only: the median sum of the call's activity durations


@dataclass
class PeerRecord:
    family: str
    variant: str  # the peer in the variant position: "torch", "torch-cudnn", ...
    shape: str
    min_bytes: float
    flops: float
    headline_mode: str
    memory_ceiling: str  # "copy" | "read", as kgate judges the family
    status: str = "ok"  # "ok" | "failed" | "skipped"
    error: str = ""
    cold: Timing | None = None
    hot: Timing | None = None
    first_launch_s: float = 0.0
    wall_time_s: float = 0.0
    correct: bool | None = None
    correctness_detail: str = ""
    provenance: dict = field(default_factory=dict)  # library versions, the call, the backend, notes
    kernels: list = field(default_factory=list)  # the kernels one call ran, as kgate's kernel records

    @property
    def name(self):
        return f"{self.family}/{self.variant}/{self.shape}"

    def headline(self):
        return self.hot if self.headline_mode == "hot" else self.cold


def percentile(sorted_samples, q):
    """Linear interpolation between order statistics, as kgate's statistics.cpp (NumPy's default)."""
    position = q * (len(sorted_samples) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(sorted_samples) - 1)
    fraction = position - lower
    return sorted_samples[lower] + fraction * (sorted_samples[upper] - sorted_samples[lower])


def summarize(samples):
    s = sorted(samples)
    n = len(s)
    mean = sum(s) / n
    stddev = math.sqrt(sum((x - mean) ** 2 for x in s) / (n - 1)) if n > 1 else 0.0
    return {"count": n, "median": percentile(s, 0.5), "mean": mean, "stddev": stddev, "min": s[0], "max": s[-1],
            "p10": percentile(s, 0.1), "p90": percentile(s, 0.9)}


def single_precision(seconds):
    """As kgate writes samples: the shortest decimal that reads back to the same float."""
    return float("%.9g" % struct.unpack("f", struct.pack("f", seconds))[0])


def timing_block(t):
    samples = [single_precision(s) for s in t.samples_s]
    block = {"samples_s": samples, "summary": summarize(samples), "target_met": t.target_met,
            "target_rel_stddev": t.target_rel_stddev, "stop_reason": t.stop_reason,
            "throttled_samples": t.throttled_samples, "power_limited_samples": t.power_limited_samples,
            "rested": t.rested, "sm_clock_mhz": t.sm_clock_mhz, "gpu_time_s": t.gpu_time_s,
            "wall_time_s": t.wall_time_s, "launches_per_sample": t.launches_per_sample,
            "input_copies": t.input_copies, "timer": t.timer}
    for key in ("event_median_s", "busy_median_s"):
        if getattr(t, key) > 0:
            block[key] = getattr(t, key)
    return block


def benchmark_entry(r, family_index, instance_index):
    """One Google Benchmark row with its kgate block, as kgate's gbench_entry writes it."""
    timing = r.headline() if r.status == "ok" else None
    median_s = summarize([single_precision(s) for s in timing.samples_s])["median"] if timing else 0.0
    block = {"name": r.name, "family": r.family, "variant": r.variant, "shape": r.shape, "role": "peer",
             "status": r.status, "error": r.error, "min_bytes": r.min_bytes, "flops": r.flops,
             "headline_mode": r.headline_mode, "first_launch_s": r.first_launch_s, "wall_time_s": r.wall_time_s,
             # The ceilings are kgate's, measured in its own run: `kgate merge` places the peers on them.
             "derived": {"bytes_per_s": r.min_bytes / median_s if median_s else 0.0,
                         "flops_per_s": r.flops / median_s if median_s else 0.0,
                         "arithmetic_intensity": r.flops / r.min_bytes if r.min_bytes else 0.0,
                         "pct_of_memory_ceiling": 0.0, "pct_of_compute_ceiling": 0.0,
                         "memory_ceiling": r.memory_ceiling, "roofline": "below-roofs"},
             "kernels": r.kernels, "metrics": {},
             "metrics_unavailable": "peers get no counter pass (docs/peers.md)",
             "correct": r.correct, "correctness_detail": r.correctness_detail}
    if r.cold:
        block["cold"] = timing_block(r.cold)
    if r.hot:
        block["hot"] = timing_block(r.hot)
    if r.provenance:
        block["provenance"] = dict(r.provenance)
    entry = {"name": r.name, "family_index": family_index, "per_family_instance_index": instance_index,
             "run_name": r.name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
             "iterations": len(timing.samples_s) if timing else 0, "real_time": median_s * 1e6,
             "cpu_time": median_s * 1e6, "time_unit": "us"}
    if r.status != "ok":
        entry["error_occurred"] = r.status == "failed"
        entry["error_message"] = r.error
    else:
        stats = block[r.headline_mode]["summary"]
        entry.update({"GB/s": block["derived"]["bytes_per_s"] / 1e9, "TFLOP/s": block["derived"]["flops_per_s"] / 1e12,
                      "%mem_roof": 0.0,
                      "rsd%": stats["stddev"] / stats["mean"] * 100 if stats["mean"] > 0 else 0.0,
                      "MHz": timing.sm_clock_mhz})
    entry["kgate"] = block
    return entry


@dataclass
class PeerContext:
    """What the run's context says: the GPU as the peers saw it, and the libraries (in `extra`)."""
    suite: str
    gpu: dict  # name, uuid, compute_capability, sm_count, l2_bytes, memory_bytes, driver_version, ...
    date: str  # ISO 8601 UTC
    host: str
    command_line: str
    git_commit: str = ""
    git_dirty: bool = False
    extra: dict = field(default_factory=dict)


def results_document(context, records):
    executable = os.path.basename(context.command_line.split(" ")[0]) if context.command_line else "torch_peers.py"
    kgate_context = {
        "schema_version": RESULTS_SCHEMA,
        "suite": context.suite,
        "gpu": context.gpu,
        # No ceilings of its own: the peers are placed on those of the kgate run they merge into.
        "calibration": {"copy_bytes_per_s": 0.0, "read_bytes_per_s": 0.0, "gemm_flops_per_s": 0.0,
                        "launch_floor_s": 0.0, "graph_floor_s": 0.0, "datasheet_bytes_per_s": 0.0,
                        "datasheet_sm_clock_mhz": 0.0, "cached_from": ""},
        "provenance": {"git_commit": context.git_commit, "git_dirty": context.git_dirty, "build_type": "",
                       "cuda_architectures": "", "host": context.host, "date": context.date,
                       "command_line": context.command_line},
        "extra": {k: str(v) for k, v in context.extra.items()},
    }
    doc = {"context": {"date": context.date, "host_name": context.host, "executable": executable, "num_cpus": 0,
                       "mhz_per_cpu": 0, "cpu_scaling_enabled": False, "caches": [], "library_build_type": "release",
                       "json_schema_version": 1, "kgate": kgate_context},
           "benchmarks": []}
    family_index, instances = {}, {}
    for r in records:
        index = family_index.setdefault(r.family, len(family_index))
        doc["benchmarks"].append(benchmark_entry(r, index, instances.get(r.family, 0)))
        instances[r.family] = instances.get(r.family, 0) + 1
    return doc


def results_text(doc):
    """Indented for people and diffs, each samples array on one line, as kgate's write_results_file."""
    arrays = []
    shaped = json.loads(json.dumps(doc))
    for benchmark in shaped["benchmarks"]:
        for mode in ("cold", "hot"):
            timing = benchmark["kgate"].get(mode)
            if timing:
                arrays.append(json.dumps(timing["samples_s"], separators=(",", ":"), allow_nan=False))
                timing["samples_s"] = f"@kgate-samples-{len(arrays) - 1}@"
    text = json.dumps(shaped, indent=2, allow_nan=False)
    return re.sub(r'"@kgate-samples-(\d+)@"', lambda m: arrays[int(m.group(1))], text) + "\n"


def write_results(path, doc):
    """The results file (gzip'd when the name ends in .gz), written to a temporary name and renamed."""
    text = results_text(doc)
    temporary = f"{path}.tmp.{os.getpid()}"
    if path.endswith(".gz"):
        with gzip.open(temporary, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(text)
    os.replace(temporary, path)
