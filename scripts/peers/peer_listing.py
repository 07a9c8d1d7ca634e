"""kgate's registry listing (kgate_bench --kgate_list_json, docs/peers.md): the families and their
benchmark shapes, read from a file or straight from the binary. The peers run exactly these shapes;
nothing here keeps a copy of them."""

import json
import os
import subprocess
from dataclasses import dataclass, field

SUPPORTED_SCHEMA = 1


class ListingError(Exception):
    """The listing cannot be obtained or does not hold what the peers need."""


@dataclass
class TensorSpec:
    name: str
    distribution: dict | None  # min_magnitude, max_magnitude, symmetric; None: the family fills it itself
    tolerance: dict | None = None  # a checked tensor's own tolerance (an fp32 lse), else the shape's applies


@dataclass
class BenchShape:
    family: str
    id: str  # "m:4096/n:4096/bf16": the suffix of every benchmark name at this shape
    dims: dict  # name -> value, in the shape's order
    dtype: str
    min_bytes: float
    flops: float
    tolerance: dict  # rel_l2, max_ulps, abs_floor
    tensors: dict = field(default_factory=dict)  # name -> TensorSpec

    def dim(self, *names):
        """The first of `names` the shape has: families name their dimensions themselves."""
        for name in names:
            if name in self.dims:
                return self.dims[name]
        raise ListingError(f"{self.family} shape {self.id} has none of the dimensions {', '.join(names)}")

    def tensor(self, *names):
        for name in names:
            if name in self.tensors:
                return self.tensors[name]
        raise ListingError(f"{self.family} shape {self.id} declares none of the tensors {', '.join(names)}")


@dataclass
class Family:
    name: str
    headline_mode: str  # "cold" | "hot"
    read_dominated: bool
    shapes: list  # [BenchShape]


@dataclass
class Listing:
    suite: str
    families: list  # [Family]
    source: str


def _read(source):
    """The listing's text from a JSON file, or from a kgate_bench binary run with --kgate_list_json=-."""
    if not os.path.exists(source):
        raise ListingError(f"{source}: no such file (give the listing JSON or build/bench/kgate_bench)")
    if os.path.isfile(source) and os.access(source, os.X_OK) and not source.endswith(".json"):
        result = subprocess.run([source, "--kgate_list_json=-"], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise ListingError(f"{source} --kgate_list_json=- exited {result.returncode}: {result.stderr.strip()}")
        return result.stdout
    with open(source, encoding="utf-8") as f:
        return f.read()


def load_listing(source):
    try:
        doc = json.loads(_read(source))
    except json.JSONDecodeError as e:
        raise ListingError(f"{source}: not JSON: {e}") from None
    if not isinstance(doc, dict) or "families" not in doc:
        raise ListingError(f"{source}: not a kgate registry listing (no \"families\")")
    if doc.get("schema_version", 0) > SUPPORTED_SCHEMA:
        raise ListingError(f"{source}: listing schema {doc['schema_version']} is newer than this script reads ({SUPPORTED_SCHEMA})")
    try:
        families = []
        for f in doc["families"]:
            shapes = []
            for s in f["bench_shapes"]:
                tensors = {t["name"]: TensorSpec(t["name"], t["distribution"], t.get("tolerance")) for t in s["tensors"]}
                shapes.append(BenchShape(f["name"], s["id"], {d["name"]: int(d["value"]) for d in s["dims"]}, s["dtype"],
                                         float(s["min_bytes"]), float(s["flops"]), s["tolerance"], tensors))
            families.append(Family(f["name"], f["headline_mode"], bool(f["read_dominated"]), shapes))
    except (KeyError, TypeError, ValueError) as e:
        raise ListingError(f"{source}: a family or shape lacks what the peers read ({type(e).__name__}: {e})") from None
    return Listing(doc.get("suite", "kgate"), families, source)
