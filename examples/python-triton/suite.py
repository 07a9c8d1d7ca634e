#!/usr/bin/env python3
"""The Triton RMSNorm example as a kgate benchmark suite, with kgate_bench's flags:

    python examples/python-triton/suite.py --kgate_out=run.json [--benchmark_filter=REGEX] [--kgate_processes=N]
    python examples/python-triton/suite.py --benchmark_list_tests

Importing the family and its variants registers them (README.md)."""

import kgate

from rmsnorm import family, naive, tuned  # noqa: F401  (registered on import)

if __name__ == "__main__":
    kgate.main()
