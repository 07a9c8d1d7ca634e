"""The measurement engine (kgate._engine, C++) and the one error for its absence.

Every call into the engine goes through engine(), so that a package built without the CUDA
Toolkit, or whose engine does not load, fails the same way: EngineUnavailable, saying why.
"""

import importlib
from types import ModuleType

from kgate import _build


class EngineUnavailable(RuntimeError):
    """kgate cannot time kernels here: no engine was built, it does not load, or there is no usable GPU."""

    __module__ = "kgate"  # where users catch it: kgate.EngineUnavailable


def engine() -> ModuleType:
    """The kgate._engine module; raises EngineUnavailable where this package has none that loads."""
    if not _build.ENGINE_BUILT:
        raise EngineUnavailable(
            f"kgate's measurement engine is not installed: {_build.ENGINE_ABSENT_REASON}. The command line and "
            "the result tools work; to time kernels, reinstall kgate (pip install . in its repository) with the "
            "CUDA Toolkit 12 or 13 on PATH")
    try:
        return importlib.import_module("kgate._engine")
    except ImportError as error:
        raise EngineUnavailable(f"kgate's measurement engine did not load: {error}") from error
