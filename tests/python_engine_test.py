#!/usr/bin/env python3
"""CPU tests of the kgate Python package's sources (python/kgate/) without building it: the package
is copied into a temporary folder with a _build.py rendered from python/build.py.in as CMake renders
it, and a synthetic kgate._engine (a Python stand-in for the nanobind module) where a case needs one.
They check that kgate.__version__ is the project's version, that kgate.device() raises
kgate.EngineUnavailable with the reason that fits (no engine built, an engine that does not load, no
usable GPU: the probe's reason), and the Python API's own rules: families' and variants' names,
roles and headline modes, a journey step that names no variant, what a suite hands the engine for
each benchmark (role, provenance, checked at any size), and a suite's Google Benchmark flags.
tests/python_package.sh builds and installs the real package.
Usage: python_engine_test.py SOURCE_DIR PROJECT_VERSION"""

import importlib
import shutil
import sys
import tempfile
import unittest

from synthetic_kgate_package import install_package

SOURCE_DIR, PROJECT_VERSION = sys.argv[1:3]
del sys.argv[1:3]

SYNTHETIC_ENGINE = '''
class _Probe:
    def __init__(self, device, reason):
        self.device, self.reason = device, reason

def probe_device():
    return _Probe({device!r}, {reason!r})
'''


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
        install_package(self.folder, SOURCE_DIR, PROJECT_VERSION, **build)
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


# A stand-in for the engine's shape ids (base/shape.hpp's rule, for these tests only).
SYNTHETIC_SHAPE_ENGINE = '''
def shape_id(dims, dtype):
    return "/".join(f"{name}:{value}" for name, value in dims) + "/" + dtype
'''


class FamilyCase(PackageCase):
    def family(self, kgate, name="synthetic_fam", **overrides):
        arguments = dict(inputs=None, outputs=None, reference=None, test_shapes=[kgate.Shape(n=8, dtype="fp32")],
                         bench_shapes=[kgate.Shape(m=1, n=4096), kgate.Shape(m=64, n=4096)], min_bytes=lambda s: 1)
        arguments.update(overrides)
        return kgate.Family(name, **arguments)

    def test_a_family_registers_itself_and_its_variants_in_order(self):
        kgate = self.load(engine_built=True, engine=SYNTHETIC_SHAPE_ENGINE)
        fam = self.family(kgate)

        @fam.variant(name="naive")
        def naive(x, out):
            pass

        @fam.variant(name="tuned", follows="naive", description="synthetic")
        def tuned(x, out):
            pass

        self.assertEqual(naive.__name__, "naive", "the decorator returns the callable unchanged")
        self.assertEqual(kgate.families(), [fam])
        self.assertEqual([(v.full_name, v.follows, v.role) for v in fam.variants],
                         [("synthetic_fam/naive", "", "candidate"), ("synthetic_fam/tuned", "naive", "candidate")])
        self.assertEqual([s.id for s in fam.bench_shapes], ["m:1/n:4096/bf16", "m:64/n:4096/bf16"])
        fam.validate()

    def test_what_does_not_hold_together_is_refused_by_name(self):
        kgate = self.load(engine_built=True, engine=SYNTHETIC_SHAPE_ENGINE)
        with self.assertRaisesRegex(ValueError, "family name 'bad/name'"):
            self.family(kgate, name="bad/name")
        with self.assertRaisesRegex(ValueError, "headline 'warm'"):
            self.family(kgate, headline="warm")
        with self.assertRaisesRegex(TypeError, "bench_shapes must be kgate.Shape"):
            self.family(kgate, bench_shapes=[{"m": 1}])
        fam = self.family(kgate)
        with self.assertRaisesRegex(ValueError, "two families are named synthetic_fam"):
            self.family(kgate)
        fam.variant(name="a")(lambda: None)
        with self.assertRaisesRegex(ValueError, "two variants named a"):
            fam.variant(name="a")
        with self.assertRaisesRegex(ValueError, "role 'winner'"):
            fam.variant(name="b", role="winner")
        fam.variant(name="c", follows="eager")(lambda: None)
        with self.assertRaisesRegex(ValueError, "synthetic_fam/c follows 'eager', which is not a variant of synthetic_fam"):
            fam.validate()

    def test_a_suite_hands_the_engine_each_variants_provenance_and_the_shapes_checked_at_any_size(self):
        kgate = self.load(engine_built=True, engine=SYNTHETIC_SHAPE_ENGINE + "\ndef callable_benchmark(**arguments):\n"
                                                                              "    return arguments\n")
        fam = self.family(kgate, test_shapes=[kgate.Shape(n=8, dtype="fp32"), kgate.Shape(m=64, n=4096)], in_place="x")
        fam.variant(name="torch", role="peer", provenance={"library": "synthetic-lib 1.0"}, prepare=lambda arguments: None)(lambda: None)
        from kgate.runner import benchmarks
        made = {b["name"]: b for b in benchmarks()}
        self.assertEqual(fam.in_place, ("x",))
        self.assertEqual({name: (b["role"], b["provenance"], b["checked_at_any_size"]) for name, b in made.items()},
                         {"synthetic_fam/torch/m:1/n:4096/bf16": ("peer", {"library": "synthetic-lib 1.0"}, False),
                          "synthetic_fam/torch/m:64/n:4096/bf16": ("peer", {"library": "synthetic-lib 1.0"}, True)})
        with self.assertRaisesRegex(TypeError, "provenance maps text to text"):
            fam.variant(name="bad", provenance={"compile_s": 1.5})
        with self.assertRaisesRegex(TypeError, "in_place names inputs"):
            self.family(kgate, name="synthetic_other", in_place=[1])
        self.assertEqual(f"{kgate.Unsupported.__module__}.{kgate.Unsupported.__name__}", "kgate.Unsupported")

    def test_a_shape_needs_a_dimension_and_names_the_one_it_lacks(self):
        kgate = self.load(engine_built=True, engine=SYNTHETIC_SHAPE_ENGINE)
        with self.assertRaises(ValueError):
            kgate.Shape(dtype="bf16")
        with self.assertRaisesRegex(KeyError, "shape m:2/bf16 has no dimension 'n'"):
            kgate.Shape(m=2)["n"]

    def test_a_suite_takes_three_google_benchmark_flags_and_refuses_others(self):
        self.load(engine_built=False)
        from kgate.runner import _gbench_flags, _suite_name
        self.assertEqual(_gbench_flags(["--benchmark_filter=^a/", "--benchmark_list_tests", "--benchmark_repetitions=3", "--help"],
                                       "suite.py"), {"filter": "^a/", "list_tests": True, "repetitions": 3})
        self.assertFalse(_gbench_flags(["--benchmark_list_tests=false"], "suite.py")["list_tests"])
        for bad in ("--benchmark_repetitions=0", "--benchmark_min_time=1", "extra"):
            with self.assertRaisesRegex(ValueError, "unknown or malformed argument"):
                _gbench_flags([bad], "suite.py")
        self.assertEqual(_suite_name("/x/python-triton/suite.py"), "python-triton")
        self.assertEqual(_suite_name("/x/y/rmsnorm_bench.py"), "rmsnorm_bench")


if __name__ == "__main__":
    unittest.main()
