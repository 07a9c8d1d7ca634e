#!/usr/bin/env python3
"""The peers' suite: what a user would run instead of each kgate family -- F.rms_norm, add +
F.rms_norm, RoPE as model code writes it, F.silu(a) * b (eager and through torch.compile),
Liger-Kernel's Triton kernels, F.linear (cuBLAS), F.scaled_dot_product_attention per backend -- on
exactly the benchmark shapes kgate's registry lists, as variants with role "peer" of Python families
named as kgate's (rmsnorm/torch-compile/m:4096/n:4096/bf16, prefill_attention/torch-cudnn/...).
kgate's engine checks and times them as it does kgate_bench's variants, with kgate_bench's flags, and
writes kgate results for `kgate merge` and `kgate report`. A peer whose library is not installed is
left out and said so. docs/peers.md.

Needs the kgate package with its engine on the Python path (pip install ., or a build's python/
folder: scripts/run.sh) and PyTorch with CUDA."""

import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peer_listing import ListingError, load_listing  # noqa: E402

USAGE = """usage: torch_peers.py --list=FILE|KGATE_BENCH [kgate_bench's flags]

  --list=FILE|KGATE_BENCH       the registry listing whose families and bench shapes the peers run: its JSON
                                (kgate_bench --kgate_list_json=FILE), or the kgate_bench binary, which is asked
"""


def take_listing(argv):
    """(the --list source, the other arguments); raises ValueError without one."""
    rest, source = [], None
    arguments = iter(argv)
    for arg in arguments:
        if arg.startswith("--list="):
            source = arg.partition("=")[2]
        elif arg == "--list":
            source = next(arguments, None)
        else:
            rest.append(arg)
    if not source and "--help" not in rest:
        raise ValueError("give the registry listing: --list=build/bench/kgate_bench (or a listing JSON)")
    return source, rest


def versions():
    import torch
    return {"torch": torch.__version__, "cuda": str(torch.version.cuda), "cudnn": str(torch.backends.cudnn.version())}


def main(argv):
    try:
        source, rest = take_listing(argv)
    except ValueError as e:
        print(f"torch_peers: {e}\n{USAGE}", file=sys.stderr)
        return 2
    try:
        import kgate
    except ImportError as e:
        print(f"torch_peers: the kgate package is not importable ({e}); build it (KGATE_BUILD_PYTHON_ENGINE, then "
              "PYTHONPATH=build/python) or pip install . in kgate's repository", file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print(f"torch_peers: PyTorch is not importable ({e}); nothing measured", file=sys.stderr)
        return 2
    if "--help" in rest:
        print(__doc__ + "\n" + USAGE)
        kgate.main(rest)  # kgate_bench's flags, which the suite takes
    try:
        listing = load_listing(source)
        import peer_families
        from peer_registration import register_peers
        registration = register_peers(listing, peer_families.FAMILY_CODE, peer_families.all_peers(), versions())
    except ListingError as e:
        print(f"torch_peers: {e}", file=sys.stderr)
        return 2
    # Said once: a later timing process goes on from the results the first handed over.
    if not any(arg.startswith("--kgate_resume=") for arg in rest):
        for reason in registration.left_out.values():
            print(f"torch_peers: peers left out: {reason}", file=sys.stderr)
        for name in registration.without_peers:
            print(f"torch_peers: no PyTorch peer for family {name} (scripts/peers/peer_families.py)", file=sys.stderr)
    tools = versions()
    context = {"peers.torch": tools["torch"], "peers.cuda": tools["cuda"], "peers.cudnn": tools["cudnn"],
               "peers.python": platform.python_version(),
               "peers.sdpa_backends": ", ".join(suffix for suffix, _, _ in peer_families.sdpa_backends()),
               "peers.listing": source, "peers.command_line": " ".join(sys.orig_argv)}
    if registration.left_out:
        context["peers.left_out"] = "; ".join(registration.left_out.values())
    kgate.main(rest, suite=listing.suite, context=context)  # exits with the suite's status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
