#!/usr/bin/env python3
"""CPU tests of the kgate Python package's sources (python/kgate/) without building it: the package
is copied into a temporary folder with a _build.py rendered from python/build.py.in as CMake renders
it, and a synthetic kgate._engine (a Python stand-in for the nanobind module) where a case needs one.
They check that kgate.__version__ is the project's version, and that kgate.device() raises
kgate.EngineUnavailable with the reason that fits: no engine built, an engine that does not load, no
usable GPU (the probe's reason). tests/python_package.sh builds and installs the real package.
Usage: python_engine_test.py SOURCE_DIR PROJECT_VERSION"""

import importlib
import os
import shutil
import sys
import tempfile
import unittest

SOURCE_DIR, PROJECT_VERSION = sys.argv[1:3]
del sys.argv[1:3]

SYNTHETIC_ENGINE = '''
class _Probe:
    def __init__(self, device, reason):
        self.device, self.reason = device, reason

def probe_device():
    return _Probe({device!r}, {reason!r})
'''


def install_package(folder, engine_built, absent_reason="", engine=None):
    """python/kgate/ into folder, its _build.py from build.py.in, and engine as kgate/_engine.py."""
    package = os.path.join(folder, "kgate")
    shutil.copytree(os.path.join(SOURCE_DIR, "python", "kgate"), package)
    with open(os.path.join(SOURCE_DIR, "python", "build.py.in"), encoding="utf-8") as template:
        build = (template.read().replace("@PROJECT_VERSION@", PROJECT_VERSION)
                 .replace("@engine_built@", str(engine_built)).replace("@KGATE_ENGINE_ABSENT_REASON@", absent_reason))
    with open(os.path.join(package, "_build.py"), "w", encoding="utf-8") as out:
        out.write(build)
    if engine is not None:
        with open(os.path.join(package, "_engine.py"), "w", encoding="utf-8") as out:
            out.write(engine)


class PackageCase(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="synthetic-kgate-package.")
        sys.path.insert(0, self.folder)

    def tearDown(self):
        sys.path.remove(self.folder)
        for name in [name for name in sys.modules if name == "kgate" or name.startswith("kgate.")]:
            del sys.modules[name]
        shutil.rmtree(self.folder)

    def load(self, **build):
        install_package(self.folder, **build)
        importlib.invalidate_caches()
        return importlib.import_module("kgate")

    def device_error(self, kgate):
        with self.assertRaises(kgate.EngineUnavailable) as raised:
            kgate.device()
        return str(raised.exception)

    def test_version_is_cmakes_project_version(self):
        kgate = self.load(engine_built=False)
        self.assertEqual(kgate.__version__, PROJECT_VERSION)

    def test_without_engine_device_says_why_it_was_not_built(self):
        kgate = self.load(engine_built=False, absent_reason="synthetic-no nvcc")
        message = self.device_error(kgate)
        self.assertTrue(message.startswith("kgate's measurement engine is not installed: synthetic-no nvcc."), message)
        self.assertIn("reinstall kgate", message)
        self.assertEqual(f"{kgate.EngineUnavailable.__module__}.{kgate.EngineUnavailable.__name__}", "kgate.EngineUnavailable")

    def test_an_engine_that_does_not_load_is_unavailable(self):
        kgate = self.load(engine_built=True)  # built, but no kgate/_engine to import
        self.assertIn("kgate's measurement engine did not load: ", self.device_error(kgate))

    def test_without_gpu_device_gives_the_probes_reason(self):
        reason = "synthetic-no CUDA device found (cudaErrorNoDevice)"
        kgate = self.load(engine_built=True, engine=SYNTHETIC_ENGINE.format(device=None, reason=reason))
        self.assertEqual(self.device_error(kgate), f"no usable GPU: {reason}")

    def test_with_gpu_device_is_the_probed_one(self):
        device = {"name": "synthetic-GPU", "compute_capability": 90}
        kgate = self.load(engine_built=True, engine=SYNTHETIC_ENGINE.format(device=device, reason=""))
        self.assertEqual(kgate.device(), device)


if __name__ == "__main__":
    unittest.main()
