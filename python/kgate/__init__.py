"""kgate for Python: the project's regression harness for CUDA kernels (docs/python.md).

`pip install .` at the repository root installs this package and the `kgate` command line. Where
the CUDA Toolkit was found at build time it also holds the measurement engine (kgate._engine);
everything that needs the engine or a GPU raises EngineUnavailable, saying why, where there is none.

A suite: kgate.Family(...) with kgate.Shape test and bench shapes, @family.variant(name=...) on each
implementation, and kgate.main() under `if __name__ == "__main__":`; `pytest --kgate` runs its
reference checks.
"""

from kgate._build import __version__
from kgate.correctness import check
from kgate.device import device
from kgate.engine import EngineUnavailable, engine
from kgate.family import Family, Shape, Unsupported, Variant, families
from kgate.instance import random_tensor
from kgate.runner import main

__all__ = ["EngineUnavailable", "Family", "Shape", "Tolerance", "Unsupported", "Variant", "__version__", "check", "device", "families",
           "main", "random_tensor"]


def __getattr__(name):
    # kgate.Tolerance is the engine's (core/accuracy.hpp), reached only when used, so that
    # `import kgate` works where the engine is absent.
    if name == "Tolerance":
        return engine().Tolerance
    raise AttributeError(f"module 'kgate' has no attribute {name!r}")
