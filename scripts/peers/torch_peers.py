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

import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peer_listing import ListingError, load_listing  # noqa: E402

USAGE = """usage: torch_peers.py --list=FILE|KGATE_BENCH [kgate_bench's flags]
       torch_peers.py --versions

  --list=FILE|KGATE_BENCH       the registry listing whose families and bench shapes the peers run: its JSON
                                (kgate_bench --kgate_list_json=FILE), or the kgate_bench binary, which is asked
                                for it
  --versions                    print the versions of the libraries the peers call, as a JSON object of
                                "peers.<library>": "version" ("not installed" for one that is not), and exit:
                                what `kgate peers reuse --versions` compares with the stored peers'
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


def _cublas_version():
    """cuBLAS as loaded by torch (it links it), read from the library itself: its distribution's
    name differs by CUDA major version and by how torch was installed."""
    import ctypes
    import torch  # noqa: F401  (loads libcublas)
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libcublas.so" in line and "libcublasLt" not in line}
    for path in sorted(paths):
        value = ctypes.c_int()
        library = ctypes.CDLL(path)
        parts = []
        for kind in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
            if library.cublasGetProperty(kind, ctypes.byref(value)) != 0:
                break
            parts.append(str(value.value))
        if len(parts) == 3:
            return ".".join(parts)
    return "unknown"


def _distribution_version(distribution):
    import importlib.metadata
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def library_versions():
    """What decides the peers' speed beside the GPU, its clocks and the driver: the libraries they
    call, as the run's context and the stored peers name them (kgate peers reuse; docs/peers.md).
    Without PyTorch every one is "not installed": stored peers may still be shown."""
    try:
        import torch
    except ImportError:
        return {f"peers.{name}": "not installed" for name in ("torch", "cuda", "cudnn", "cublas", "triton", "liger_kernel")}
    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = "not installed"
    return {"peers.torch": torch.__version__, "peers.cuda": str(torch.version.cuda),
            "peers.cudnn": str(torch.backends.cudnn.version()), "peers.cublas": _cublas_version(),
            "peers.triton": triton_version, "peers.liger_kernel": _distribution_version("liger-kernel")}


def main(argv):
    if argv == ["--versions"]:
        print(json.dumps(library_versions(), indent=2))
        return 0
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
        libraries = library_versions()
        registration = register_peers(listing, peer_families.FAMILY_CODE, peer_families.all_peers(),
                                      {name.removeprefix("peers."): version for name, version in libraries.items()})
    except ListingError as e:
        print(f"torch_peers: {e}", file=sys.stderr)
        return 2
    # Said once: a later timing process goes on from the results the first handed over.
    if not any(arg.startswith("--kgate_resume=") for arg in rest):
        for reason in registration.left_out.values():
            print(f"torch_peers: peers left out: {reason}", file=sys.stderr)
        for name in registration.without_peers:
            print(f"torch_peers: no PyTorch peer for family {name} (scripts/peers/peer_families.py)", file=sys.stderr)
    context = dict(libraries)
    context.update({"peers.python": platform.python_version(),
                    "peers.sdpa_backends": ", ".join(suffix for suffix, _, _ in peer_families.sdpa_backends()),
                    "peers.listing": source, "peers.command_line": " ".join(sys.orig_argv)})
    if registration.left_out:
        context["peers.left_out"] = "; ".join(registration.left_out.values())
    kgate.main(rest, suite=listing.suite, context=context)  # exits with the suite's status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
