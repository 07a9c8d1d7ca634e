#!/usr/bin/env python3
"""CPU tests of the peers as the Python API's families (scripts/peers/peer_registration.py,
peer_listing.py), without torch or a GPU: the kgate package's sources with a synthetic engine (its
shape ids, its Tolerance, and a callable_benchmark that keeps what the suite would be given), a
synthetic registry listing, and synthetic peers. They check that each listed family with peers
becomes a kgate.Family of the same name with the listing's shapes, min_bytes, flops and headline
mode; that the benchmarks are named <family>/<peer>/<shape id> with role peer and the peer's
provenance; that the family's smallest shape it can run is checked whatever its size; that the
check judges the listing's relative L2 limit alone; that a shape no peer can run raises
kgate.Unsupported; that a peer whose module is missing is left out, saying how to install it; and
that the listing is read from a file or from a kgate_bench-like binary, or refused naming why.
Usage: peer_registration_test.py SOURCE_DIR PROJECT_VERSION"""

import importlib
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

from synthetic_kgate_package import install_package

SOURCE_DIR, PROJECT_VERSION = sys.argv[1:3]
del sys.argv[1:3]
sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts", "peers"))

# What the peers need of kgate._engine without a GPU; callable_benchmark hands back its arguments.
SYNTHETIC_ENGINE = '''
class Tolerance:
    def __init__(self, rel_l2=1e-2, max_ulps=2.0, abs_floor=0.0):
        self.rel_l2, self.max_ulps, self.abs_floor = rel_l2, max_ulps, abs_floor

def shape_id(dims, dtype):
    return "/".join(f"{name}:{value}" for name, value in dims) + "/" + dtype

def callable_benchmark(**arguments):
    return arguments
'''


def synthetic_shape(id_dims, dtype="bf16", min_bytes=4096.0, flops=1024.0, rel_l2=0.01, tensors=()):
    dims = [{"name": n, "value": v} for n, v in id_dims]
    return {"id": "/".join(f"{n}:{v}" for n, v in id_dims) + f"/{dtype}", "dims": dims, "dtype": dtype, "min_bytes": min_bytes,
            "flops": flops, "instance_bytes": int(min_bytes), "origin": "synthetic",
            "tolerance": {"rel_l2": rel_l2, "max_ulps": 2.0, "abs_floor": 0.0},
            "tensors": [{"name": "x", "dtype": dtype, "count": 1, "access": "input",
                         "distribution": {"min_magnitude": 0.5, "max_magnitude": 2.0, "symmetric": False}}, *tensors]}


def synthetic_listing(norm_shapes=None):
    norm = norm_shapes or [synthetic_shape([("m", 64), ("n", 4096)], min_bytes=1 << 20, flops=4e5),
                           synthetic_shape([("m", 1), ("n", 4096)], min_bytes=16384.0, flops=8e3),
                           synthetic_shape([("m", 1), ("n", 8192), ("l_min", 2)], min_bytes=4096.0, flops=1e3)]
    return {"schema_version": 1, "suite": "synthetic-suite", "timing": {},
            "families": [{"name": "synthetic_norm", "description": "", "headline_mode": "cold", "read_dominated": True,
                          "variants": [], "bench_shapes": norm},
                         {"name": "synthetic_orphan", "description": "", "headline_mode": "hot", "read_dominated": False,
                          "variants": [], "bench_shapes": [synthetic_shape([("n", 8)])]}]}


class PeersCase(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="synthetic-peers.")
        install_package(self.folder, SOURCE_DIR, PROJECT_VERSION, engine_built=True, engine=SYNTHETIC_ENGINE)
        sys.path.insert(0, self.folder)
        importlib.invalidate_caches()
        self.kgate = importlib.import_module("kgate")
        self.listing_module = importlib.import_module("peer_listing")
        self.registration = importlib.import_module("peer_registration")

    def tearDown(self):
        sys.path.remove(self.folder)
        for name in [name for name in sys.modules if name.split(".")[0] in ("kgate", "peer_listing", "peer_registration")]:
            del sys.modules[name]
        shutil.rmtree(self.folder)

    def write_listing(self, doc, name="listing.json"):
        path = os.path.join(self.folder, name)
        with open(path, "w", encoding="utf-8") as out:
            json.dump(doc, out)
        return path

    def register(self, listing_doc=None, peers=None, check_group=lambda shape: None):
        r = self.registration
        code = r.FamilyCode(inputs=lambda shape, g: {"x": shape.tensor("x").distribution}, outputs={"y": lambda s: (s.dim("m"),)},
                            reference=lambda t: {"y": t["x"]},
                            unsupported=lambda s: "synthetic-ragged" if "l_min" in s.dims else None, check_group=check_group)
        peers = peers if peers is not None else [
            r.Peer("synthetic_norm", "torch", "F.synthetic(x)", lambda t: {"y": t["x"]}),
            r.Peer("synthetic_norm", "synthetic-lib", "synthetic_lib.norm(x)", lambda t: {"y": t["x"]}, note="synthetic-note",
                   requires="synthetic_module_that_is_not_installed", install="pip install synthetic-lib"),
            r.Peer("synthetic_norm", "torch-compile", "torch.compile(F.synthetic)", lambda t: {"y": t["x"]},
                   compile=lambda arguments: lambda t: {"y": t["x"]}),
        ]
        listing = self.listing_module.load_listing(self.write_listing(listing_doc or synthetic_listing()))
        versions = {"torch": "synthetic-2.11", "cuda": "synthetic-13.0", "cudnn": "91900"}
        return r.register_peers(listing, {"synthetic_norm": code}, peers, versions)

    def benchmarks(self):
        from kgate.runner import benchmarks
        return {b["name"]: b for b in benchmarks()}

    def test_a_listed_family_with_peers_is_a_kgate_family_of_its_name_and_shapes(self):
        registered = self.register()
        self.assertEqual([f.name for f in registered.families], ["synthetic_norm"])
        family = registered.families[0]
        self.assertIs(family, self.kgate.families()[0])
        self.assertEqual([s.id for s in family.bench_shapes], ["m:64/n:4096/bf16", "m:1/n:4096/bf16", "m:1/n:8192/l_min:2/bf16"])
        self.assertEqual((family.headline, family.read_dominated), ("cold", True))
        self.assertEqual(registered.without_peers, ["synthetic_orphan"])

    def test_benchmarks_are_named_as_kgates_with_role_peer_and_the_peers_provenance(self):
        self.register()
        made = self.benchmarks()
        self.assertEqual(sorted(made), sorted(f"synthetic_norm/{peer}/{shape}" for peer in ("torch", "torch-compile")
                                              for shape in ("m:64/n:4096/bf16", "m:1/n:4096/bf16", "m:1/n:8192/l_min:2/bf16")))
        torch_m1 = made["synthetic_norm/torch/m:1/n:4096/bf16"]
        self.assertEqual((torch_m1["role"], torch_m1["family"], torch_m1["variant"]), ("peer", "synthetic_norm", "torch"))
        self.assertEqual((torch_m1["min_bytes"], torch_m1["flops"]), (16384.0, 8e3))
        self.assertEqual(torch_m1["provenance"], {"library": "torch synthetic-2.11", "cuda": "synthetic-13.0", "cudnn": "91900",
                                                  "call": "F.synthetic(x)"})

    def test_the_smallest_shape_the_peers_can_run_is_checked_whatever_its_size(self):
        self.register()
        checked = sorted(name for name, b in self.benchmarks().items() if b["checked_at_any_size"])
        # m:1 n:8192 has less work but is ragged, which no peer runs.
        self.assertEqual(checked, ["synthetic_norm/torch-compile/m:1/n:4096/bf16", "synthetic_norm/torch/m:1/n:4096/bf16"])

    def test_each_group_of_shapes_is_checked_at_its_smallest(self):
        doc = synthetic_listing([synthetic_shape([("m", 64), ("n", 4096)], flops=4e5), synthetic_shape([("m", 1), ("n", 4096)], flops=8e3),
                                 synthetic_shape([("m", 64), ("n", 8192)], flops=8e5), synthetic_shape([("m", 8), ("n", 8192)], flops=1e5)])
        family = self.register(doc, check_group=lambda shape: shape.dims["n"]).families[0]
        self.assertEqual([s.id for s in family.test_shapes], ["m:1/n:4096/bf16", "m:8/n:8192/bf16"])

    def test_a_shape_no_peer_can_run_is_unsupported_and_the_others_draw_the_listings_distribution(self):
        family = self.register().families[0]
        ragged, m1 = family.bench_shapes[2], family.bench_shapes[1]
        with self.assertRaises(self.kgate.Unsupported) as raised:
            family.inputs(ragged, None)
        self.assertEqual(str(raised.exception), "synthetic-ragged")
        self.assertEqual(family.inputs(m1, None), {"x": {"min_magnitude": 0.5, "max_magnitude": 2.0, "symmetric": False}})

    def test_a_peer_is_judged_by_the_listings_relative_l2_limit_alone(self):
        tolerance = self.register().families[0].tolerance["y"]
        self.assertEqual((tolerance.rel_l2, tolerance.max_ulps, tolerance.abs_floor), (0.01, math.inf, 0.0))

    def test_a_tensors_own_tolerance_is_its_limit(self):
        own = {"name": "y", "dtype": "fp32", "count": 1, "access": "output", "distribution": None,
               "tolerance": {"rel_l2": 1e-5, "max_ulps": 64.0, "abs_floor": 0.0}}
        doc = synthetic_listing([synthetic_shape([("m", 1)], tensors=[own]), synthetic_shape([("m", 2)], tensors=[own])])
        self.assertEqual(self.register(doc).families[0].tolerance["y"].rel_l2, 1e-5)

    def test_limits_that_differ_across_shapes_are_refused(self):
        doc = synthetic_listing([synthetic_shape([("m", 1)], rel_l2=0.01), synthetic_shape([("m", 2)], rel_l2=0.02)])
        with self.assertRaises(self.listing_module.ListingError) as raised:
            self.register(doc)
        self.assertIn("synthetic_norm: tensor y has relative L2 limits [0.01, 0.02]", str(raised.exception))

    def test_a_peer_whose_module_is_missing_is_left_out_saying_how_to_install_it(self):
        registered = self.register()
        self.assertNotIn("synthetic-lib", [v.name for v in registered.families[0].variants])
        reason = registered.left_out["synthetic_module_that_is_not_installed"]
        self.assertTrue(reason.startswith("synthetic_module_that_is_not_installed is not importable ("), reason)
        self.assertTrue(reason.endswith("; pip install synthetic-lib"), reason)

    def test_a_family_whose_peers_are_all_left_out_is_not_registered(self):
        r = self.registration
        missing = r.Peer("synthetic_norm", "synthetic-lib", "synthetic_lib.norm(x)", lambda t: t,
                         requires="synthetic_module_that_is_not_installed")
        registered = self.register(peers=[missing])
        self.assertEqual((registered.families, registered.without_peers), ([], ["synthetic_orphan"]))
        self.assertEqual(list(registered.left_out), ["synthetic_module_that_is_not_installed"])

    def test_a_compiled_peer_is_prepared_and_the_others_are_not(self):
        variants = {v.name: v for v in self.register().families[0].variants}
        self.assertIsNone(variants["torch"].prepare)
        prepared = variants["torch-compile"].prepare({"x": 3, "y": None})
        self.assertEqual(prepared(x=5, y=None), {"y": 5})
        self.assertEqual(variants["torch"].fn(x=7, y=None), {"y": 7})

    def test_the_listing_is_read_from_a_kgate_bench_binary(self):
        listing = os.path.join(self.folder, "synthetic-listing.json")
        self.write_listing(synthetic_listing(), "synthetic-listing.json")
        binary = os.path.join(self.folder, "synthetic-kgate-bench")
        with open(binary, "w", encoding="utf-8") as out:
            out.write(f'#!/bin/sh\n[ "$1" = --kgate_list_json=- ] && exec cat "{listing}"\nexit 3\n')
        os.chmod(binary, 0o755)
        read = self.listing_module.load_listing(binary)
        self.assertEqual((read.suite, [f.name for f in read.families]), ("synthetic-suite", ["synthetic_norm", "synthetic_orphan"]))

    def test_an_unreadable_listing_is_refused_naming_why(self):
        load, error = self.listing_module.load_listing, self.listing_module.ListingError
        cases = {"synthetic-missing.json": "no such file", "synthetic-not-json.json": "not JSON",
                 "synthetic-no-families.json": "not a kgate registry listing", "synthetic-newer.json": "listing schema 2 is newer",
                 "synthetic-no-dims.json": "a family or shape lacks what the peers read (KeyError: 'dims')"}
        for name, text in (("synthetic-not-json.json", "{"), ("synthetic-no-families.json", "{}"),
                           ("synthetic-newer.json", '{"schema_version": 2, "families": []}'),
                           ("synthetic-no-dims.json", json.dumps({"families": [{"name": "f", "headline_mode": "cold",
                                                                                "read_dominated": False,
                                                                                "bench_shapes": [{"id": "n:1/bf16", "tensors": []}]}]}))):
            with open(os.path.join(self.folder, name), "w", encoding="utf-8") as out:
                out.write(text)
        for name, expected in cases.items():
            with self.subTest(name), self.assertRaises(error) as raised:
                load(os.path.join(self.folder, name))
            self.assertIn(expected, str(raised.exception))


if __name__ == "__main__":
    unittest.main()
