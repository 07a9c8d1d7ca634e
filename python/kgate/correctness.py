"""The reference check of a Python variant at a shape, as correctness/main.cpp runs a C++ one:
fresh inputs from a seed derived from the session's (KGATE_SEED reproduces it), outputs poisoned,
the variant's prepare, one launch, every output compared by the engine's rule."""

from dataclasses import dataclass

from kgate.engine import engine
from kgate.family import families
from kgate.instance import Instance


@dataclass
class CaseResult:
    name: str  # "<family>/<variant>/<shape id>"
    passed: bool
    detail: str  # one line per output: the engine's AccuracyReport.describe()
    base_seed: int  # KGATE_SEED=<base_seed> reproduces the case

    def __str__(self):
        verdict = "passed" if self.passed else "FAILED"
        return f"{self.name}: {verdict}\n{self.detail}\nreproduce with KGATE_SEED={self.base_seed}"


def check_case(variant, shape, base_seed=None):
    """Checks `variant` at `shape` against its family's reference."""
    import torch
    base = engine().session_seed() if base_seed is None else base_seed
    name = f"{variant.full_name}/{shape.id}"
    instance = Instance(variant, shape, engine().derive_seed(base, name))
    instance.prepare(keep_reference=True)
    instance.launch(0, 0)
    torch.cuda.synchronize()
    reports = instance.check()
    return CaseResult(name, all(r.passed() for r in reports), "\n".join(r.describe() for r in reports), base)


def cases(selected=None):
    """(variant, shape) for every registered variant x test shape, of `selected` families (all: None)."""
    out = []
    for family in families() if selected is None else selected:
        family.validate()
        out += [(v, s) for v in family.variants for s in family.test_shapes]
    return out


def check(selected=None):
    """Runs every case of `selected` families (all registered: None); returns the CaseResults."""
    return [check_case(variant, shape) for variant, shape in cases(selected)]
