"""kgate for Python: the project's regression harness for CUDA kernels (docs/python.md).

`pip install .` at the repository root installs this package and the `kgate` command line. Where
the CUDA Toolkit was found at build time it also holds the measurement engine (kgate._engine);
everything that needs the engine or a GPU raises EngineUnavailable, saying why, where there is none.
"""

from kgate._build import __version__
from kgate.device import device
from kgate.engine import EngineUnavailable

__all__ = ["EngineUnavailable", "__version__", "device"]
