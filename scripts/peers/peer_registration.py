"""The peers as kgate families of the Python API (docs/peers.md, docs/python.md): each family of
kgate's registry listing that has peers becomes a kgate.Family of the same name, with the listing's
bench shapes, min_bytes and flops, whose variants are its peers with role "peer". Their benchmarks
are then named as kgate's ("<family>/<peer>/<shape id>"), timed and checked by kgate's engine, and
paired with kgate's variants by `kgate report`.

Needs neither torch nor a GPU to register: the peers' code (peer_families.py) comes in as a
FamilyCode per family and a Peer per library call, and is only called when the engine measures."""

import importlib
import importlib.metadata
import math
from dataclasses import dataclass, field
from typing import Callable

import kgate
from peer_listing import ListingError


@dataclass
class FamilyCode:
    """kgate's problem in PyTorch, shared by a family's peers; tensors under kgate's names."""
    inputs: Callable  # (listing shape, generator) -> dict: one copy of the inputs
    outputs: dict  # output name -> (listing shape) -> its size: what the peers return, allocated as kgate's outputs are
    reference: Callable  # (dict of the inputs in fp64) -> dict of every checked tensor: kgate's definition
    in_place: tuple = ()  # inputs kgate's variants update in place (its inout tensors): checked as outputs
    unsupported: Callable = field(default=lambda shape: None)  # listing shape -> why no peer can run it, or None
    # listing shape -> the group of shapes it belongs to, where a peer may run some groups and not
    # others (an attention backend that refuses grouped queries): the peers are checked at the
    # smallest shape of each group. One group by default.
    check_group: Callable = field(default=lambda shape: None)

    def checked(self):
        return tuple(self.outputs) + self.in_place


def _installed_version(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:  # installed under another name (pytorch-triton)
        return "(version unknown)"


@dataclass
class Peer:
    family: str
    variant: str  # in the benchmark name's variant position: "torch", "torch-cudnn", "liger", ...
    call: str  # the code a user writes, for the record
    run: Callable  # (dict of the inputs and outputs) -> dict of outputs under kgate's names: the timed call
    note: str = ""  # what differs from kgate's problem, stated in every record
    requires: str = ""  # the Python module the peer needs beyond torch ("liger_kernel"); absent: the peer is left out
    install: str = ""  # how a user gets that module, said when it is absent ("pip install liger-kernel")
    distributions: tuple = ()  # packages beside torch whose versions every record names ("liger-kernel", "triton")
    # (dict of copy 0's inputs and outputs) -> the callable to time in place of `run`, built for that shape
    # (torch.compile): the variant's prepare, untimed, its time recorded as compile_s. None: `run` is timed.
    compile: Callable = None

    @property
    def name(self):
        return f"{self.family}/{self.variant}"

    def missing(self):
        """Why the peer cannot run in this Python (its module is not installed), or None."""
        if not self.requires:
            return None
        try:
            importlib.import_module(self.requires)
        except ImportError as e:
            return f"{self.requires} is not importable ({e}); {self.install or 'install it'}"
        return None

    def provenance(self, versions):
        """What each record says the peer ran: the libraries and versions ("torch 2.11.0, liger-kernel
        0.8.5, triton 3.6.0"), CUDA and cuDNN as torch has them, the call and the note."""
        libraries = [f"torch {versions['torch']}"] + [f"{name} {_installed_version(name)}" for name in self.distributions]
        said = {"library": ", ".join(libraries), "cuda": versions["cuda"], "cudnn": versions["cudnn"], "call": self.call}
        return {**said, "note": self.note} if self.note else said


@dataclass
class Registration:
    families: list  # the kgate.Family made for each listed family with peers
    left_out: dict  # module -> why the peers that need it were left out
    without_peers: list  # listed families no peer is written for


def peer_tolerance(family, name):
    """The listing's relative-L2 limit of a checked tensor (its own, else its shape's), the same at
    every shape, with no per-element bound: a peer passes when its outputs are finite and within
    the family's relative L2 limit, which catches a different problem (another eps, a rotation the
    other way, a mask); a library's rounding steps are its own (docs/peers.md, "Checking the peers")."""
    limits = set()
    for shape in family.shapes:
        own = shape.tensors.get(name)
        limits.add(float((own.tolerance if own and own.tolerance else shape.tolerance)["rel_l2"]))
    if len(limits) != 1:
        raise ListingError(f"{family.name}: tensor {name} has relative L2 limits {sorted(limits)} across its shapes; "
                           "the peers check every shape with one")
    return kgate.Tolerance(rel_l2=limits.pop(), max_ulps=math.inf, abs_floor=0.0)


def _allocate(sizes, shape, dtype):
    import torch
    return {name: torch.empty(size(shape), dtype=dtype, device="cuda") for name, size in sizes.items()}


def _draw_inputs(code, shape, generator):
    reason = code.unsupported(shape)
    if reason:
        raise kgate.Unsupported(reason)
    return code.inputs(shape, generator)


def _as_variant(run):
    return lambda **arguments: run(arguments)


def _prepare(compile_for_shape):
    def prepare(arguments):
        compiled = compile_for_shape(arguments)
        return lambda **t: compiled(t)
    return prepare


def make_family(listed, code, peers, versions):
    """kgate.Family `listed.name` with `peers` as its variants."""
    by_id = {s.id: s for s in listed.shapes}
    bench_shapes = []
    for s in listed.shapes:
        shape = kgate.Shape(dtype=s.dtype, **s.dims)
        if shape.id != s.id:
            raise ListingError(f"{listed.name}: the listing's shape {s.id} is {shape.id} as kgate.Shape names it")
        bench_shapes.append(shape)
    # The peers' reference check at the shape with the least work that they can run, of each group of
    # shapes, as test shapes: checked whatever their size (the suite checks the others up to its size limit).
    smallest = {}
    for s in sorted((s for s in bench_shapes if not code.unsupported(by_id[s.id])),
                    key=lambda s: (by_id[s.id].flops, by_id[s.id].min_bytes)):
        smallest.setdefault(code.check_group(by_id[s.id]), s)
    family = kgate.Family(
        name=listed.name,
        description=f"what a user would run instead of kgate's {listed.name} (docs/peers.md)",
        inputs=lambda shape, generator: _draw_inputs(code, by_id[shape.id], generator),
        outputs=lambda shape: _allocate(code.outputs, by_id[shape.id], shape.torch_dtype),
        reference=lambda **inputs: code.reference(inputs),
        test_shapes=[s for s in bench_shapes if s in smallest.values()],
        bench_shapes=bench_shapes,
        min_bytes=lambda shape: by_id[shape.id].min_bytes,
        flops=lambda shape: by_id[shape.id].flops,
        tolerance={name: peer_tolerance(listed, name) for name in code.checked()},
        headline=listed.headline_mode,
        read_dominated=listed.read_dominated,
        in_place=code.in_place)
    for peer in peers:
        family.variant(name=peer.variant, role="peer", description=peer.call,
                       prepare=_prepare(peer.compile) if peer.compile else None,
                       provenance=peer.provenance(versions))(_as_variant(peer.run))
    return family


def register_peers(listing, codes, peers, versions):
    """Registers a kgate.Family for each listed family with a peer whose module is importable.

    codes: {family name: FamilyCode}; peers: [Peer]; versions: {"torch", "cuda", "cudnn", ...: text}
    (torch_peers.library_versions, without the "peers." of its names).
    """
    left_out, usable = {}, []
    for peer in peers:
        reason = peer.missing()
        if reason is None:
            usable.append(peer)
        else:
            left_out.setdefault(peer.requires, reason)
    families, without_peers = [], []
    for listed in listing.families:
        if listed.name not in codes or not any(p.family == listed.name for p in peers):
            without_peers.append(listed.name)
            continue
        mine = [p for p in usable if p.family == listed.name]
        if mine:  # else every one was left out, and left_out says why
            families.append(make_family(listed, codes[listed.name], mine, versions))
    return Registration(families, left_out, without_peers)
