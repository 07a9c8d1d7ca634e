#!/usr/bin/env python3
"""Writes tests/data/synthetic-torch-peers.json: a peers file with FABRICATED timings, through the
peers' own JSON writer (scripts/peers/peer_results.py), for the CPU tests of `kgate merge` and
`kgate report` until a peers run recorded on a GPU replaces it. Its benchmarks are the families and
shapes of a recorded kgate run, each peer's median a fixed multiple of kgate's fastest variant there
(some above 1, some below, so both "kgate faster" and "kgate slower" appear), one peer skipped at one
shape and one output check per peer.

  tests/make_synthetic_torch_peers.py [RUN.json] [--out FILE]   write it
  tests/make_synthetic_torch_peers.py --check                   exit 1 when the checked-in file differs
"""

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts", "peers"))

from peer_results import PeerContext, PeerRecord, Timing, results_document, results_text, write_results  # noqa: E402

DEFAULT_RUN = os.path.join(HERE, "data", "recorded-h200-run-a.json")
DEFAULT_OUT = os.path.join(HERE, "data", "synthetic-torch-peers.json")
ATTENTION = ("decode_attention", "decode_attention_paged", "prefill_attention")
# Peer median / kgate's fastest median, cycled over a family's shapes.
FACTORS = (1.6, 0.8, 1.25, 2.5, 0.95, 1.1)


def peers_of(family):
    return ["torch-flash", "torch-cudnn", "torch-efficient"] if family in ATTENTION else ["torch"]


def samples_around(median_s, count=31):
    """A symmetric spread of +-0.5% around the median: its median is the median itself."""
    return [median_s * (1 + 0.005 * math.sin(i * 2.1)) for i in range(count)]


def fabricate(run):
    best = {}  # (family, shape) -> kgate's fastest own median; families and shapes in run order
    for b in run["benchmarks"]:
        k = b["kgate"]
        if k["role"] not in ("reference", "candidate") or k["status"] != "ok" or k.get("correct") is False:
            continue
        median = k[k["headline_mode"]]["summary"]["median"]
        key = (k["family"], k["shape"])
        best[key] = min(best.get(key, median), median)
    meta = {(b["kgate"]["family"], b["kgate"]["shape"]): b["kgate"] for b in run["benchmarks"]}
    records, seen_families = [], {}
    for (family, shape), kgate_median in best.items():
        index = seen_families.setdefault(family, [0])
        k = meta[(family, shape)]
        for p, peer in enumerate(peers_of(family)):
            factor = FACTORS[(index[0] + 2 * p) % len(FACTORS)]
            r = PeerRecord(family, peer, shape, k["min_bytes"], k["flops"], k["headline_mode"],
                           k["derived"]["memory_ceiling"],
                           provenance={"library": "torch 0.0-synthetic", "cuda": "13.0", "cudnn": "0",
                                       "call": f"synthetic {peer} peer of {family}",
                                       "note": "fabricated timings for the CPU tests, not a measurement"})
            if peer == "torch-efficient" and index[0] == 1:
                r.status, r.error = "skipped", "No available kernel. Aborting execution. (synthetic)"
            else:
                r.cold = Timing(samples_around(kgate_median * factor), target_met=True, target_rel_stddev=0.005,
                                stop_reason="target-met", sm_clock_mhz=1980.0, gpu_time_s=31 * kgate_median * factor,
                                wall_time_s=0.01)
                r.first_launch_s = 1e-3
            if index[0] == 0:
                r.correct = True
                r.correctness_detail = "out: rel_l2=0.0021 (limit 0.01) max_abs=0.0039 violations=0/4096 nan/inf=0 PASS"
            else:
                r.correctness_detail = "not checked: peers are checked at one shape per family"
            records.append(r)
        index[0] += 1
    gpu = run["context"]["kgate"]["gpu"]
    context = PeerContext(suite=run["context"]["kgate"]["suite"], gpu=gpu, date="2026-01-01T00:00:00Z",
                          host="synthetic", command_line="tests/make_synthetic_torch_peers.py",
                          git_commit="synthetic",
                          extra={"peers.torch": "0.0-synthetic", "peers.cuda": "13.0", "peers.cudnn": "0",
                                 "peers.gpu": gpu["name"],
                                 "peers.synthetic": "fabricated timings (tests/make_synthetic_torch_peers.py)"})
    return results_document(context, records)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", nargs="?", default=DEFAULT_RUN, help="the recorded kgate run it follows")
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    with open(args.run, encoding="utf-8") as f:
        doc = fabricate(json.load(f))
    if not args.check:
        write_results(args.out, doc)
        print(f"wrote {len(doc['benchmarks'])} synthetic peer benchmarks to {args.out}")
        return 0
    with open(args.out, encoding="utf-8") as f:
        if f.read() == results_text(doc):
            return 0
    print(f"{args.out} is not what {os.path.relpath(__file__)} writes now; regenerate it", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
