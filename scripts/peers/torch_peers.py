#!/usr/bin/env python3
"""Times what a user would run instead of each kgate family -- F.rms_norm, add + F.rms_norm, RoPE as
model code writes it, F.silu(a) * b (eager and through torch.compile), Liger-Kernel's Triton kernels,
F.linear (cuBLAS), F.scaled_dot_product_attention per backend -- on exactly the benchmark shapes
kgate's registry defines, by kgate's timing method, and writes kgate results JSON with the peer in
the variant position (rmsnorm/torch-compile/m:4096/n:4096/bf16, prefill_attention/torch-cudnn/...),
ready for `kgate merge` and `kgate report`. A peer whose library is not installed is left out and
said so. docs/peers.md."""

import argparse
import datetime
import os
import platform
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peer_listing import ListingError, load_listing  # noqa: E402
from peer_results import PeerContext, PeerRecord, results_document, summarize, write_results  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TIMING_FLAGS = {  # flag -> (the listing's timing key, type): override what kgate_bench would use
    "min_samples": ("min_samples", int),
    "min_time": ("min_gpu_time_s", float),
    "max_time": ("max_wall_time_s", float),
    "target_rsd": ("target_rel_stddev", float),
    "max_samples": ("max_samples", int),
    "flush": ("l2_flush", str),
    "timer": ("timer", str),
}


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Timing defaults are kgate_bench's, read from the listing (kgate_bench --kgate_list_json); the flags "
               "below override them. Exit status: 0 written (skipped peers included), 1 a peer failed or no GPU, "
               "2 bad usage or input.")
    parser.add_argument("--list", required=True, metavar="FILE-or-kgate_bench",
                        help="the registry listing: a JSON file, or the kgate_bench binary to ask for it")
    parser.add_argument("--out", metavar="FILE", help="results file to write (.gz: gzip'd); default: none, summary only")
    parser.add_argument("--filter", metavar="REGEX", default="",
                        help="only benchmarks whose name matches (re.search), e.g. '^rmsnorm/' or 'torch-cudnn'")
    parser.add_argument("--modes", default="", metavar="cold,hot",
                        help="timing modes to measure (default: each family's headline mode only)")
    parser.add_argument("--time-budget", type=float, metavar="SECONDS",
                        help="wall-clock budget for the whole run: benchmarks not started within it are recorded "
                             "as skipped, and the file is still written")
    parser.add_argument("--seed", type=int, default=0x6B67617465, help="input seed (fixed, as kgate's benchmarks)")
    parser.add_argument("--min-samples", type=int, help="samples before stopping is considered")
    parser.add_argument("--min-time", type=float, metavar="SECONDS", help="GPU time to accumulate per mode")
    parser.add_argument("--max-time", type=float, metavar="SECONDS", help="wall-clock cap per mode")
    parser.add_argument("--target-rsd", type=float, metavar="FRACTION", help="relative stddev that ends sampling")
    parser.add_argument("--max-samples", type=int, help="sample cap per mode")
    parser.add_argument("--flush", choices=["read", "write"], help="how cold mode empties the L2")
    parser.add_argument("--timer", choices=["cupti", "events"],
                        help="a sample's clock: the span of the call's CUPTI records (kgate's own code, "
                             "libkgate_peer_clock.so) or CUDA events around it")
    parser.add_argument("--clock", metavar="LIB",
                        help="kgate's CUPTI clock library (default: libkgate_peer_clock.so beside the kgate_bench "
                             "given to --list, else build/bench/)")
    args = parser.parse_args(argv)
    args.modes = [m for m in args.modes.split(",") if m]
    if any(m not in ("cold", "hot") for m in args.modes):
        parser.error(f"--modes: expected cold and/or hot, got '{','.join(args.modes)}'")
    try:
        args.pattern = re.compile(args.filter)
    except re.error as e:
        parser.error(f"--filter: {e}")
    return args


def git_provenance():
    given = os.environ.get("KGATE_GIT_COMMIT", "")
    if given:
        return given, False

    def git(*command):
        result = subprocess.run(["git", "-C", REPO, *command], capture_output=True, text=True, check=False)
        return result.stdout.strip() if result.returncode == 0 else ""

    commit = git("rev-parse", "HEAD") or "unknown"
    return commit, bool(git("status", "--porcelain", "--untracked-files=no"))


def clock_library(args):
    """Where kgate's CUPTI clock for the peers is: --clock, else beside the kgate_bench that gave the
    listing, else in this repository's build."""
    if args.clock:
        return args.clock
    if os.path.isfile(args.list) and not args.list.endswith(".json"):
        return os.path.join(os.path.dirname(os.path.abspath(args.list)), "libkgate_peer_clock.so")
    return os.path.join(REPO, "build", "bench", "libkgate_peer_clock.so")


class Session:
    """One run: the timer, the seed, the records, the check results."""

    def __init__(self, args, listing, timing):
        import torch

        from peer_timing import TorchTimer, device_facts
        self.torch = torch
        self.args = args
        self.listing = listing
        self.timing = timing
        self.gpu = device_facts()
        self.timer = TorchTimer(timing, self.gpu, clock_library(args))
        self.records = []
        self.checks = {}  # peer name -> (shape id, passed, detail)
        self.not_installed = {}  # module -> why the peers that need it were left out
        self.started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    def generator(self, label):
        g = self.torch.Generator(device="cuda")
        g.manual_seed((self.args.seed ^ hash_label(label)) & (2**63 - 1))
        return g

    def run_once(self, peer, inputs):
        self.torch.cuda.synchronize()  # the inputs were made on the default stream
        with peer.context(), self.torch.cuda.stream(self.timer.stream):
            outputs = peer.runner(inputs)(inputs)
        self.timer.stream.synchronize()
        return outputs

    def check(self, peer, shapes):
        """The peer against kgate's definition at its smallest shape that runs (docs/peers.md)."""
        from peer_families import Unsupported, check_outputs
        for shape in sorted(shapes, key=lambda s: (s.flops, s.instance_bytes)):
            if peer.unsupported(shape):
                continue
            try:
                inputs = peer.make_inputs(shape, self.generator(f"check/{peer.name}/{shape.id}"))
                expected = peer.reference(inputs)  # before the call: a peer may rotate its inputs in place
                passed, detail = check_outputs(self.run_once(peer, inputs), expected, shape)
            except Unsupported:
                continue
            except Exception as e:  # a peer that cannot even run is recorded by its timing; the check says why
                self.checks[peer.name] = (shape.id, None, f"not checked: {first_line(e)}")
                return
            finally:
                self.torch.cuda.empty_cache()
            self.checks[peer.name] = (shape.id, passed, detail)
            return

    def measure(self, family, peer, shape):
        from peer_families import Unsupported
        from sampling_rules import input_copies
        torch = self.torch
        record = PeerRecord(family.name, peer.variant, shape.id, shape.min_bytes, shape.flops, family.headline_mode,
                            "read" if family.read_dominated else "copy", provenance=self.provenance(peer))
        checked = self.checks.get(peer.name)
        if checked and checked[0] == shape.id:
            record.correct, record.correctness_detail = checked[1], checked[2]
        elif checked:
            record.correctness_detail = f"not checked: peers are checked at one shape per family ({checked[0]})"
        else:
            record.correctness_detail = "not checked: the peer ran at none of its family's shapes"
        reason = peer.unsupported(shape)
        if reason:
            record.status, record.error = "skipped", reason
            return record
        started = time.perf_counter()
        try:
            # As kgate_bench: the budget is also held under what the device has free.
            usable = 0.85 * torch.cuda.mem_get_info()[0] - 2 * self.gpu["l2_bytes"]
            copies = input_copies(shape.instance_bytes, self.gpu["l2_bytes"], int(self.timing["input_placements"]),
                                  min(float(self.timing["placement_budget_bytes"]), usable),
                                  int(self.timing["max_input_copies"]))
            inputs = [peer.make_inputs(shape, self.generator(f"{peer.name}/{shape.id}/{c}")) for c in range(copies)]
            torch.cuda.synchronize()  # made on the default stream, used on the timer's
            with peer.context():
                built = time.perf_counter()
                with torch.cuda.stream(self.timer.stream):
                    run = peer.runner(inputs[0])
                if peer.compile:
                    torch.cuda.synchronize()
                    record.provenance["compile_s"] = f"{time.perf_counter() - built:.2f}"

                def launch(copy):
                    return run(inputs[copy])
                record.first_launch_s = self.timer.first_launch_s(launch)
                record.kernels = self.timer.kernels(launch)
                for mode in self.args.modes or [family.headline_mode]:
                    setattr(record, mode, self.timer.measure_cold(launch, copies) if mode == "cold"
                            else self.timer.measure_hot(launch))
        except Unsupported as e:
            record.status, record.error = "skipped", str(e)
        except torch.cuda.OutOfMemoryError as e:
            record.status, record.error = "skipped", f"out of device memory: {first_line(e)}"
        except Exception as e:  # recorded, never fatal: one broken backend must not lose the others
            record.status, record.error = "failed", first_line(e)
        finally:
            inputs = None
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        if record.status == "ok" and record.headline() is None:
            record.status, record.error = "failed", f"the headline mode ({family.headline_mode}) was not measured"
        record.wall_time_s = time.perf_counter() - started
        return record

    def provenance(self, peer):
        p = {"library": peer.library(self.torch.__version__), "cuda": str(self.torch.version.cuda),
             "cudnn": str(self.torch.backends.cudnn.version()), "call": peer.call}
        if peer.note:
            p["note"] = peer.note
        return p

    def context(self, command_line):
        torch = self.torch
        from peer_families import sdpa_backends
        commit, dirty = git_provenance()
        t = self.timing
        extra = {"peers.torch": torch.__version__, "peers.cuda": str(torch.version.cuda),
                 "peers.cudnn": str(torch.backends.cudnn.version()), "peers.python": platform.python_version(),
                 "peers.gpu": self.gpu["name"], "peers.sdpa_backends": ", ".join(s for s, _, _ in sdpa_backends()),
                 "peers.l2_flush": t["l2_flush"],
                 "peers.stopping": f"min_samples={t['min_samples']} min_time={t['min_gpu_time_s']}s "
                                   f"max_time={t['max_wall_time_s']}s target_rsd={t['target_rel_stddev']} "
                                   f"max_samples={t['max_samples']}",
                 "peers.listing": self.listing.source, "peers.date": self.started, "peers.command_line": command_line}
        if self.not_installed:
            extra["peers.left_out"] = "; ".join(self.not_installed.values())
        # The merged run keeps its own provenance; "peers.*" keeps this run's where merge puts it.
        return PeerContext(suite=self.listing.suite, gpu=self.gpu, date=self.started, host=socket.gethostname(),
                           command_line=command_line, git_commit=commit, git_dirty=dirty, extra=extra)


def first_line(error):
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


def hash_label(label):
    """A stable 64-bit hash (Python's hash() of a str changes per process)."""
    h = 0xcbf29ce484222325
    for byte in label.encode():
        h = ((h ^ byte) * 0x100000001b3) & (2**64 - 1)
    return h


def describe(record):
    if record.status != "ok":
        return f"{record.status}: {record.error}"
    t = record.headline()
    s = summarize(t.samples_s)
    return (f"{s['median'] * 1e6:10.2f} us  rsd {s['stddev'] / s['mean'] * 100:5.2f}%  {s['count']:5d} samples  "
            f"{t.stop_reason}")


def main(argv):
    started = time.perf_counter()
    args = parse_args(argv)
    try:
        listing = load_listing(args.list)
    except (ListingError, KeyError, TypeError, ValueError) as e:
        print(f"torch_peers: {e}", file=sys.stderr)
        return 2
    timing = dict(listing.timing)
    for flag, (key, kind) in TIMING_FLAGS.items():
        if getattr(args, flag) is not None:
            timing[key] = kind(getattr(args, flag))
    try:
        import torch
    except ImportError as e:
        print(f"torch_peers: PyTorch is not importable ({e}); nothing measured", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_peers: torch sees no CUDA device; nothing measured", file=sys.stderr)
        return 1
    from peer_families import all_peers

    session = Session(args, listing, timing)
    peers = []
    for peer in all_peers():
        reason = peer.missing()
        if reason is None:
            peers.append(peer)
        elif args.pattern.search(peer.name + "/"):
            session.not_installed.setdefault(peer.requires, reason)
    for reason in session.not_installed.values():
        print(f"torch_peers: peers left out: {reason}", file=sys.stderr)
    plan = []
    for family in listing.families:
        mine = [p for p in peers if p.family == family.name]
        if not mine:
            print(f"torch_peers: no PyTorch peer for family {family.name} (scripts/peers/peer_families.py)", file=sys.stderr)
        for peer in mine:
            shapes = [s for s in family.shapes if args.pattern.search(f"{peer.name}/{s.id}")]
            if shapes:
                plan.append((family, peer, shapes))
    if not plan:
        print(f"torch_peers: no benchmark matches --filter '{args.filter}'", file=sys.stderr)
        return 2
    print(f"torch_peers: torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()} "
          f"on {session.gpu['name']}", file=sys.stderr)
    for family, peer, shapes in plan:
        session.check(peer, shapes)
        if peer.name not in session.checks:
            print(f"torch_peers: check {peer.name}: ran at none of its shapes", file=sys.stderr)
            continue
        shape_id, passed, detail = session.checks[peer.name]
        verdict = "" if passed is None else "PASS: " if passed else "FAIL: "
        print(f"torch_peers: check {peer.name} at {shape_id}: {verdict}{detail.replace(chr(10), '; ')}", file=sys.stderr)

    total = sum(len(shapes) for _, _, shapes in plan)
    order = [(family, peer, shape) for family in listing.families for shape in family.shapes
             for f, peer, shapes in plan if f is family and shape in shapes]
    for i, (family, peer, shape) in enumerate(order, 1):
        if args.time_budget is not None and time.perf_counter() - started > args.time_budget:
            record = PeerRecord(family.name, peer.variant, shape.id, shape.min_bytes, shape.flops, family.headline_mode,
                                "read" if family.read_dominated else "copy", status="skipped",
                                error=f"not measured: the run's --time-budget of {args.time_budget:g} s was spent")
        else:
            record = session.measure(family, peer, shape)
        session.records.append(record)
        print(f"[{i}/{total}] {record.name}  {describe(record)}", file=sys.stderr)

    command_line = " ".join(["scripts/peers/torch_peers.py", *argv])
    if args.out:
        write_results(args.out, results_document(session.context(command_line), session.records))
        print(f"torch_peers: wrote {len(session.records)} benchmarks to {args.out}", file=sys.stderr)
    width = max(len(r.name) for r in session.records)
    for r in session.records:
        print(f"{r.name:<{width}}  {describe(r)}")
    return 1 if any(r.status == "failed" for r in session.records) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
