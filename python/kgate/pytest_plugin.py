"""`pytest --kgate`: every variant x test shape of a Python suite is a test, as correctness/main.cpp
makes every C++ variant x test shape a GoogleTest case. The suite files are found by name
(`kgate_suite_files`, default "suite.py *_suite.py"); importing one registers its families, whose
cases become the file's tests. A failing test prints every output's figures and the KGATE_SEED that
reproduces it; without a usable GPU every case is skipped, saying why."""

import importlib.util
import os
import sys

import pytest

from kgate.correctness import cases, check_case
from kgate.device import device
from kgate.engine import EngineUnavailable
from kgate.family import families


def pytest_addoption(parser):
    parser.addoption("--kgate", action="store_true", help="check every variant x test shape of kgate suites against the reference")
    parser.addini("kgate_suite_files", type="args", default=["suite.py", "*_suite.py"], help="file names pytest --kgate imports as suites")


def pytest_collect_file(file_path, parent):
    if not parent.config.getoption("kgate") or file_path.suffix != ".py":
        return None
    if any(file_path.match(pattern) for pattern in parent.config.getini("kgate_suite_files")):
        return KgateSuiteFile.from_parent(parent, path=file_path)
    return None


class KgateSuiteFile(pytest.File):
    def collect(self):
        before = families()
        # As `python suite.py` runs it: its folder first on the path, so its own imports resolve.
        sys.path.insert(0, str(self.path.parent))
        try:
            spec = importlib.util.spec_from_file_location(f"kgate_suite_{self.path.parent.name}_{self.path.stem}", self.path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(self.path.parent))
        for variant, shape in cases([f for f in families() if f not in before]):
            yield KgateCase.from_parent(self, name=f"{variant.full_name}/{shape.id}", variant=variant, shape=shape)


class KgateCheckFailed(Exception):
    pass


class KgateCase(pytest.Item):
    def __init__(self, *, variant, shape, **kwargs):
        super().__init__(**kwargs)
        self.variant, self.shape = variant, shape

    def runtest(self):
        try:
            device()
        except EngineUnavailable as error:
            if os.environ.get("KGATE_REQUIRE_GPU", "") not in ("", "0"):  # a GPU job: its absence is a failure
                raise
            pytest.skip(str(error))
        result = check_case(self.variant, self.shape)
        if not result.passed:
            raise KgateCheckFailed(str(result))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, KgateCheckFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, self.name
