"""Families and variants written in Python: what a C++ Family declares (core/family.hpp), as a
constructor's arguments, and a variant as a decorated callable (docs/python.md).

Families register themselves when constructed and variants when decorated, as C++ variants
register at static initialization: importing a suite's modules is registering its benchmarks.
Nothing here needs torch or a GPU; instance.py makes the tensors.
"""

import re
from dataclasses import dataclass, field
from typing import Callable, Optional

from kgate.engine import engine

_families = []  # every Family constructed in this process, in order

TIMING_MODES = ("cold", "hot")
VARIANT_ROLES = ("candidate", "peer", "reference", "vendor")
_NAME = re.compile(r"[A-Za-z0-9_.+-]+")  # a family or variant name: one part of a benchmark name


class Unsupported(Exception):
    """Raised by a family's inputs or a variant (its call or its prepare) for a shape it cannot run:
    the benchmark is recorded as skipped with this message, as a C++ launch's UnsupportedShape is."""

    __module__ = "kgate"  # where users raise it: kgate.Unsupported


def _check_name(kind, name):
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"{kind} name {name!r}: use letters, digits and _ . + - (it is one part of "
                         "<family>/<variant>/<shape>)")
    return name


class Shape:
    """A problem shape: named integer dimensions in the order given, and the dtype.

    Shape(m=64, n=4096, dtype="bf16").id == "m:64/n:4096/bf16", the suffix of every benchmark name.
    """

    def __init__(self, dtype="bf16", **dims):
        if not dims:
            raise ValueError("a shape needs at least one dimension, e.g. Shape(n=4096, dtype='bf16')")
        self.dims = dict(dims)
        self.dtype = dtype
        self._id = None

    @property
    def id(self):
        """The engine names and checks it as a C++ shape (base/shape.hpp), on first use: a suite's file
        imports without the engine, and its command then says why there is none."""
        if self._id is None:
            self._id = engine().shape_id(list(self.dims.items()), self.dtype)
        return self._id

    def __getitem__(self, name):
        try:
            return self.dims[name]
        except KeyError:
            raise KeyError(f"shape {self.id} has no dimension {name!r}") from None

    @property
    def torch_dtype(self):
        import torch
        return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "i32": torch.int32}[self.dtype]

    def __repr__(self):
        return f"Shape({self.id})"


@dataclass
class Variant:
    """One implementation of a family's operation: `fn(**inputs, **outputs)` launches it, writing
    the outputs, or returning them (see Family.variant)."""
    family: "Family"
    name: str
    fn: Callable
    follows: str = ""
    description: str = ""
    role: str = "candidate"
    prepare: Optional[Callable] = None  # (arguments of copy 0) -> the callable timed in place of fn
    provenance: dict = field(default_factory=dict)  # {key: text} in each of its records' provenance

    @property
    def full_name(self):
        return f"{self.family.name}/{self.name}"


@dataclass
class Family:
    """An operation with everything needed to check and time its variants.

    inputs(shape, generator) -> dict: fresh random tensors drawn with `generator` (never zeros;
        kgate.random_tensor draws as the C++ families do) and any non-tensor arguments.
    outputs(shape) -> dict: the tensors the variants write, allocated (kgate poisons them).
    reference(**inputs) -> dict (or one tensor for one output): the expected outputs, computed from
        the inputs with every floating tensor converted to float64.
    test_shapes, bench_shapes: the shapes the reference checks and the benchmarks run at.
    min_bytes(shape), flops(shape): the compulsory DRAM traffic and arithmetic of one call, for the
        roofline.
    tolerance: None (each output dtype's default), a kgate.Tolerance, or {output: Tolerance}.
    headline: "cold" (L2 flushed before every call) or "hot" (CUDA-graph replays): the mode gated.
    read_dominated: judged against the read ceiling rather than the copy ceiling.
    in_place: names of inputs the variants update in place (RoPE's q and k): checked against the
        reference as outputs are (the reference returns them too), never poisoned.

    A bench shape that is also a test shape is checked in the suite whatever its size (the suite
    checks the others only up to 16 MiB per instance).
    """
    name: str
    inputs: Callable
    outputs: Callable
    reference: Callable
    test_shapes: list
    bench_shapes: list
    min_bytes: Callable
    flops: Callable = lambda shape: 0
    description: str = ""
    tolerance: object = None
    headline: str = "cold"
    read_dominated: bool = False
    in_place: tuple = ()
    variants: list = field(default_factory=list)

    def __post_init__(self):
        _check_name("family", self.name)
        if self.headline not in TIMING_MODES:
            raise ValueError(f"family {self.name}: headline {self.headline!r} is not one of {TIMING_MODES}")
        for kind, shapes in (("test_shapes", self.test_shapes), ("bench_shapes", self.bench_shapes)):
            if not all(isinstance(s, Shape) for s in shapes):
                raise TypeError(f"family {self.name}: {kind} must be kgate.Shape objects")
        self.in_place = (self.in_place,) if isinstance(self.in_place, str) else tuple(self.in_place)
        if not all(isinstance(name, str) for name in self.in_place):
            raise TypeError(f"family {self.name}: in_place names inputs, e.g. in_place=('q', 'k')")
        if any(f.name == self.name for f in _families):
            raise ValueError(f"two families are named {self.name}")
        _families.append(self)

    def variant(self, name: str, *, follows: str = "", description: str = "", role: str = "candidate",
                prepare: Optional[Callable] = None, provenance: Optional[dict] = None):
        """Registers the decorated callable as a variant of this family; returns it unchanged.

        The callable writes the family's outputs, or returns them, as a library call that allocates
        its result does (F.rms_norm): a dict by output name, or a tensor for a family with one;
        what copy 0's call returned is then what is checked.
        role: "candidate" (gated), "reference", "vendor", or "peer" (what a user would run instead:
            reported beside the family's variants, never gated; docs/peers.md).
        prepare(arguments) -> callable: done once per instance before its first launch, untimed,
            with copy 0's inputs and outputs as keyword arguments; what it returns is launched in
            place of the decorated callable (torch.compile's compile for the shape). Its wall time
            is recorded in the records' provenance as compile_s.
        provenance: {key: text} written into the provenance of each of the variant's records (the
            library and version it calls, the code it runs: `kgate report` shows "library", "call"
            and "note" for peers).
        """
        _check_name("variant", name)
        if role not in VARIANT_ROLES:
            raise ValueError(f"variant {self.name}/{name}: role {role!r} is not one of {VARIANT_ROLES}")
        if any(v.name == name for v in self.variants):
            raise ValueError(f"family {self.name} has two variants named {name}")
        provenance = dict(provenance or {})
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in provenance.items()):
            raise TypeError(f"variant {self.name}/{name}: provenance maps text to text")

        def register(fn):
            self.variants.append(Variant(self, name, fn, follows, description, role, prepare, provenance))
            return fn
        return register

    def tolerance_of(self, output, dtype):
        """The tolerance an output is checked with."""
        chosen = self.tolerance.get(output) if isinstance(self.tolerance, dict) else self.tolerance
        return chosen if chosen is not None else engine().default_tolerance(dtype)

    def validate(self):
        """Every `follows` names a variant of this family (checked when a suite or a check starts)."""
        names = {v.name for v in self.variants}
        for v in self.variants:
            if v.follows and v.follows not in names:
                raise ValueError(f"variant {v.full_name} follows {v.follows!r}, which is not a variant of {self.name}")


def families():
    """Every family registered in this process, in the order they were made."""
    return list(_families)
