#!/usr/bin/env python3
"""kgate's hostile-input suite (issue 34): runs the kgate binary on inputs built to break it and
says, per case, whether it exited as it must.

Every case is generated here, from small real runs in tests/data (a recorded H100 run, its
plain Google Benchmark form, a recorded nvbench run, a recorded workload story), into synthetic
fixtures named as such (synthetic-*): malformed, truncated and empty files; NaN, infinite,
negative, zero, huge and denormal times and impossible counts in each format; wrong types and
deeply nested values; gzip bombs; hostile names; nvbench sample files outside their folder; the
command line misused; concurrent writers. Each case states the exit code it must end with (2 for
refused input, with a message that is not an "internal error"); a crash is a signal or a
sanitizer's report; a lost entry is a baseline entry or history run that concurrent writers did
not keep. The last lines give the counts and "N passed, N failed"; the exit status is 1 when any
case failed.

Usage: tests/hostile_inputs.py KGATE [--jobs N] [--filter REGEX] [--keep DIR] [--list]

Without a sanitizer every case runs under a 1 GiB address-space limit (RLIMIT_AS); a binary built
with AddressSanitizer reserves far more address space than it uses, so there the limit is its
hard_rss_limit_mb instead.
"""
import argparse
import concurrent.futures
import copy
import gzip
import json
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

DATA = Path(__file__).resolve().parent / "data"
MEMORY_LIMIT = 1 << 30
SANITIZER_REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer")
BOMB_BYTES = 1536 << 20  # what a gzip bomb expands to: 1.5 GiB
# Names as an attacker would write them: markup, a code fence on a line of its own, table and link
# punctuation, an SGR and an OSC sequence, BEL, a C1 CSI and a right-to-left override.
HOSTILE = (" `<b>tick</b>` ``` <img src=x onerror=alert(1)>\n```\n# injected\n<script>alert(1)</script>\n"
           " a|b ] ) [x](javascript:alert(1)) \x1b[31mred\x1b]0;title\x07 \u009b2J \u202efed")
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")


@dataclass
class Result:
    code: Optional[int]  # None: killed for running too long
    out: str
    err: str
    seconds: float


@dataclass
class Case:
    name: str
    args: list          # what follows "kgate"
    expected: int       # the exit status the issue demands
    check: Optional[Callable[[Result], Optional[str]]] = None  # a further promise; returns what broke it
    timeout: float = 120


@dataclass
class Outcome:
    case: Case
    result: Result
    problem: str = ""   # empty: passed
    crashed: bool = False
    lost: int = 0


# ---------------------------------------------------------------------------------------------
# Fixtures


class Raw(str):
    """A number written into JSON as this text (1e309, 5e-324), which Python's json would not write."""


def dump(value, path: Path, compress=False):
    raws = []

    def encode(v):
        if isinstance(v, Raw):
            raws.append(str(v))
            return f"__raw_{len(raws) - 1}__"
        if isinstance(v, dict):
            return {k: encode(x) for k, x in v.items()}
        if isinstance(v, list):
            return [encode(x) for x in v]
        return v

    text = json.dumps(encode(value))  # NaN and Infinity as Google Benchmark writes them
    for i, raw in enumerate(raws):
        text = text.replace(f'"__raw_{i}__"', raw)
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return str(path)


class Fixtures:
    """The small real runs every case starts from, and the files made from them."""

    def __init__(self, work: Path, wanted: re.Pattern):
        self.work = work
        self.wanted = wanted
        run_a = json.load(gzip.open(DATA / "recorded-h100-run-a.json.gz"))
        run_b = json.load(gzip.open(DATA / "recorded-h100-run-b.json.gz"))
        self.run = self.small(run_a)
        self.base = self.small(run_b, [b["name"] for b in self.run["benchmarks"]])
        self.run_path = dump(self.run, work / "synthetic-small-run.json")
        self.base_path = dump(self.base, work / "synthetic-small-base.json")
        self.gbench = self.plain_google_benchmark(self.run)
        self.gbench_path = dump(self.gbench, work / "synthetic-gbench.json")
        with tarfile.open(DATA / "recorded-nvbench.tar.gz") as tar:
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python 3.12's default, where it exists
            tar.extractall(work / "nvbench", **safe)
        self.nvbench_dir = work / "nvbench"
        self.story_path = str(DATA / "recorded-h200-story-decode.json")

    @staticmethod
    def small(run, names=None):
        """Two benchmarks of each kernel family (or the named ones): quick to read, still every table and chart."""
        run = copy.deepcopy(run)
        per_family, kept = {}, []
        for b in run["benchmarks"]:
            family = b["name"].split("/")[0]
            wanted = b["name"] in names if names is not None else family != "workload" and per_family.get(family, 0) < 2
            if wanted and b["kgate"]["status"] == "ok":
                per_family[family] = per_family.get(family, 0) + 1
                kept.append(b)
        run["benchmarks"] = kept
        return run

    @staticmethod
    def plain_google_benchmark(run):
        plain = copy.deepcopy(run)
        del plain["context"]["kgate"]
        for b in plain["benchmarks"]:
            del b["kgate"]
        return plain

    def file(self, name: str, value, compress=False) -> str:
        return dump(value, self.work / f"synthetic-{name}.json{'.gz' if compress else ''}", compress)

    def folder(self, name: str) -> Path:
        path = self.work / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def nvbench_copy(self, name: str, mutate) -> str:
        """The recorded nvbench run with its sample files, in a folder of its own, changed by mutate(json, folder)."""
        folder = self.folder(f"synthetic-nvbench-{name}")
        source = self.nvbench_dir / "recorded-nvbench-run-a.json"
        for bins in ("recorded-nvbench-run-a.json-bin", "recorded-nvbench-run-a.json-freqs-bin"):
            shutil.copytree(self.nvbench_dir / bins, folder / bins, dirs_exist_ok=True)
        doc = json.loads(source.read_text())
        mutate(doc, folder)
        return dump(doc, folder / "recorded-nvbench-run-a.json")

    def bomb(self, name: str, head: bytes, filler: bytes, tail: bytes) -> str:
        """A .json.gz of a few MB that expands to BOMB_BYTES."""
        path = self.work / f"synthetic-{name}.json.gz"
        deflate = zlib.compressobj(1, zlib.DEFLATED, 31)
        chunk = filler * ((64 << 20) // len(filler))
        with open(path, "wb") as f:
            f.write(deflate.compress(head))
            for _ in range(BOMB_BYTES // len(chunk)):
                f.write(deflate.compress(chunk))
            f.write(deflate.compress(tail) + deflate.flush())
        return str(path)


def mutated(value, edit):
    value = copy.deepcopy(value)
    edit(value)
    return value


def nested(depth: int):
    return Raw("[" * depth + "]" * depth)


# ---------------------------------------------------------------------------------------------
# Checks beyond the exit status


def nothing_in(folder: Path) -> Callable[[Result], Optional[str]]:
    def check(_: Result):
        written = [p.name for p in folder.rglob("*") if p.is_file()] if folder.exists() else []
        return f"wrote {', '.join(written)}" if written else None
    return check


def visible(*texts_of) -> Callable[[Result], Optional[str]]:
    """No control character from a name reaches a terminal or a file: each is shown as an escape."""
    def check(result: Result):
        for text in [result.out, result.err] + [Path(p).read_text(errors="replace") for p in texts_of if Path(p).exists()]:
            if m := HIDDEN.search(text):
                return f"a raw {m.group(0)!r} in the output"
        return None
    return check


def markdown_has_no_raw_html(*paths) -> Callable[[Result], Optional[str]]:
    """Rendered by GitHub's own Markdown library when it is installed (pip install cmarkgfm): no
    element a name could have brought; without it, no line of the file opens an HTML block but kgate's own."""
    def check(_: Result):
        try:
            import cmarkgfm
            from cmarkgfm.cmark import Options
        except ImportError:
            cmarkgfm = None
        for path in paths:
            if not Path(path).is_file():
                return f"{Path(path).name} was not written"
            text = Path(path).read_text(errors="replace")
            if cmarkgfm:
                html = cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)
                # kgate's own: its charts as images beside the file, links to anchors, to files beside
                # it and to anchors in them, a folded section's bold title.
                for tag in re.findall(r"<(?:img|script|b|a)\b[^>]*>", html):
                    own = re.fullmatch(r'<img src="[A-Za-z0-9_-][A-Za-z0-9._-]*\.svg" alt="[^"<>]*" />', tag) or \
                        re.fullmatch(r'<a (href="(#[a-z0-9_-]+|[A-Za-z0-9_-][A-Za-z0-9._-]*(#[a-z0-9_-]+)?)"|id="[a-z0-9-]+")>',
                                     tag) or tag == "<b>"
                    if not own:
                        return f"{Path(path).name} renders {tag[:100]}"
            elif line := raw_html_line(text):
                return f"{Path(path).name} has a raw HTML line: {line[:120]}"
        return None
    return check


# The HTML lines kgate writes into Markdown itself: folded tables and explicit anchors.
KGATE_HTML_LINE = re.compile(r'<details><summary>[^<>]*</summary>|</details>|<a id="[a-z0-9-]+"></a>|'
                             r'<details( open)?( id="[a-z0-9-]+")?><summary><b>[^<>]*</b>( — [^<>]*)?</summary>')


def raw_html_line(markdown: str) -> str:
    """The first line outside fenced code that starts an HTML block other than kgate's own, or ""."""
    fence = 0
    for line in markdown.splitlines():
        opening = re.match(r" {0,3}(`{3,})[^`]*$", line)
        if fence:
            closing = re.match(r" {0,3}(`{3,}) *$", line)
            fence = 0 if closing and len(closing.group(1)) >= fence else fence
        elif opening:
            fence = len(opening.group(1))
        elif re.match(r" {0,3}<[A-Za-z/!?]", line) and not re.fullmatch(KGATE_HTML_LINE, line):
            return line
    return ""


def html_has_no_element_from_a_name(path) -> Callable[[Result], Optional[str]]:
    def check(_: Result):
        if not Path(path).is_file():
            return f"{Path(path).name} was not written"
        html = Path(path).read_text(errors="replace")
        if "<img" in html or html.count("<script") > 1:
            return f"{Path(path).name} holds an element from a name"
        return None
    return check


def all_of(*checks):
    def check(result: Result):
        for c in checks:
            if problem := c(result):
                return problem
        return None
    return check


# ---------------------------------------------------------------------------------------------
# The cases


def malformed_cases(fx: Fixtures):
    text = Path(fx.run_path).read_bytes()
    files = {
        "empty": b"",
        "open-brace": b"{",
        "truncated": text[: len(text) // 2],
        "not-json": b"hello, kgate",
        "top-level-array": b"[]",
        "null": b"null",
        "garbage": bytes(range(256)) * 8,
    }
    paths = {}
    for name, data in files.items():
        paths[name] = str(fx.work / f"synthetic-malformed-{name}.json")
        Path(paths[name]).write_bytes(data)
    paths["truncated-gz"] = str(fx.work / "synthetic-malformed-truncated.json.gz")
    Path(paths["truncated-gz"]).write_bytes(gzip.compress(text)[:4000])
    paths["gzip-of-garbage"] = str(fx.work / "synthetic-malformed-gzip-of-garbage.json.gz")
    Path(paths["gzip-of-garbage"]).write_bytes(gzip.compress(files["garbage"]))
    paths["directory"] = str(fx.folder("synthetic-malformed-directory.json"))
    paths["missing"] = str(fx.work / "synthetic-malformed-missing.json")
    for name, path in paths.items():
        yield from reading_cases(fx, f"malformed-{name}", path)


def reading_cases(fx: Fixtures, name: str, path: str, commands=("compare", "report", "baseline", "history", "merge")):
    """The file through every command that reads results: each must refuse it (exit 2) and write nothing."""
    if "compare" in commands:
        yield Case(f"{name}/compare", ["compare", fx.base_path, path], 2)
    if "report" in commands:
        out = fx.work / f"out-{name}-report"
        yield Case(f"{name}/report", ["report", path, "--out", str(out)], 2, nothing_in(out))
    if "baseline" in commands:
        out = fx.work / f"out-{name}-baselines"
        yield Case(f"{name}/baseline-update", ["baseline", "update", path, "--baseline-dir", str(out)], 2, nothing_in(out))
    if "history" in commands:
        db = fx.work / f"out-{name}-history" / "h.sqlite"
        db.parent.mkdir(parents=True, exist_ok=True)
        yield Case(f"{name}/history-add", ["history", "add", "--db", str(db), path], 2, nothing_in(db.parent))
    if "merge" in commands:
        out = fx.work / f"out-{name}-merge"
        yield Case(f"{name}/merge", ["merge", fx.run_path, path, "-o", str(out / "merged.json")], 2, nothing_in(out))


def kgate_value_cases(fx: Fixtures):
    """One rule for times and counts: finite, positive, within what kgate can write back."""
    def sample(value):
        return lambda run: run["benchmarks"][1]["kgate"]["cold"]["samples_s"].__setitem__(3, value)
    times = {"negative": -1.0, "zero": 0.0, "nan": float("nan"), "infinite": Raw("1e309"), "huge": Raw("1e300"),
             "denormal": Raw("5e-324"), "string": "fast"}
    for name, value in times.items():
        yield from reading_cases(fx, f"kgate-time-{name}", fx.file(f"kgate-time-{name}", mutated(fx.run, sample(value))))

    def kernel(key, value):
        return lambda run: run["benchmarks"][0]["kgate"]["kernels"][0].__setitem__(key, value)
    counts = {"launches-fraction": kernel("launches", 1.5), "launches-negative": kernel("launches", -1),
              "launches-huge": kernel("launches", Raw("1e30")), "grid-huge": kernel("grid", [Raw("1e30"), 1, 1]),
              "registers-negative": kernel("registers_per_thread", -5)}
    for name, edit in counts.items():
        yield from reading_cases(fx, f"kgate-count-{name}", fx.file(f"kgate-count-{name}", mutated(fx.run, edit)),
                                 ("compare", "baseline"))


def gbench_value_cases(fx: Fixtures):
    def row(key, value):
        return lambda run: run["benchmarks"][0].__setitem__(key, value)
    values = {"time-negative": row("real_time", -1.0), "time-zero": row("real_time", 0.0), "time-nan": row("real_time", float("nan")),
              "time-infinite": row("real_time", float("inf")), "time-huge": row("real_time", Raw("1e300")),
              "time-denormal": row("real_time", Raw("5e-324")), "iterations-fraction": row("iterations", 1.5),
              "iterations-negative": row("iterations", -1), "iterations-huge": row("iterations", Raw("1e30"))}
    for name, edit in values.items():
        path = fx.file(f"gbench-{name}", mutated(fx.gbench, edit))
        yield Case(f"gbench-{name}/compare", ["compare", fx.gbench_path, path], 2)
        out = fx.work / f"out-gbench-{name}-baselines"
        yield Case(f"gbench-{name}/baseline-update", ["baseline", "update", path, "--gpu", "H100", "--baseline-dir", str(out)], 2,
                   nothing_in(out))


def nvbench_cases(fx: Fixtures):
    summaries = json.loads((fx.nvbench_dir / "recorded-nvbench-summaries.json").read_text())
    summaries_path = str(fx.nvbench_dir / "recorded-nvbench-summaries.json")

    def summary(tag, value):
        def edit(doc):
            for s in doc["benchmarks"][0]["states"][0]["summaries"]:
                if s["tag"] == tag:
                    s["data"][0]["value"] = value
        return edit
    medians = {"nan": "nan", "negative": "-1", "zero": "0", "infinite": "inf", "huge": "1e300", "denormal": "5e-324"}
    for name, value in medians.items():
        path = fx.file(f"nvbench-median-{name}", mutated(summaries, summary("nv/cold/time/gpu/median", value)))
        yield Case(f"nvbench-median-{name}/compare", ["compare", summaries_path, path], 2)
        out = fx.work / f"out-nvbench-median-{name}-baselines"
        yield Case(f"nvbench-median-{name}/baseline-update", ["baseline", "update", path, "--baseline-dir", str(out)], 2,
                   nothing_in(out))
    for name, value in {"huge": "1e30", "nan": "nan", "negative": "-5", "fraction": "2.5"}.items():
        path = fx.file(f"nvbench-sample-size-{name}", mutated(summaries, summary("nv/cold/sample_size", value)))
        yield Case(f"nvbench-sample-size-{name}/compare", ["compare", summaries_path, path], 2)
    version = fx.file("nvbench-version-number", mutated(summaries, lambda d: d["meta"].__setitem__("version", 3)))
    yield Case("nvbench-version-number/compare", ["compare", summaries_path, version], 2)

    def sample_file(edit):
        def mutate(doc, folder):
            for s in doc["benchmarks"][0]["states"][0]["summaries"]:
                if s["tag"] == "nv/json/bin:nv/cold/sample_times":
                    edit({d["name"]: d for d in s["data"]}, folder)
        return mutate

    def point_to(target):
        return sample_file(lambda data, folder: data["filename"].__setitem__("value", target(folder)))

    def outside(folder):
        shutil.copy(folder / "recorded-nvbench-run-a.json-bin" / "0.bin", folder.parent / "synthetic-outside.bin")
        return "../synthetic-outside.bin"

    def samples(values):
        def write(data, folder):
            (folder / "synthetic-samples.bin").write_bytes(struct.pack(f"<{len(values)}f", *values))
            data["filename"]["value"] = "synthetic-samples.bin"
            data["size"]["value"] = str(len(values))
        return sample_file(write)
    files = {
        "dev-zero": point_to(lambda folder: "/dev/zero"),
        "absolute": point_to(lambda folder: str(folder / "recorded-nvbench-run-a.json-bin" / "0.bin")),
        "parent": point_to(outside),
        "directory": point_to(lambda folder: "recorded-nvbench-run-a.json-bin"),
        "size-huge": sample_file(lambda data, folder: data["size"].__setitem__("value", "1e30")),
        "size-larger-than-file": sample_file(lambda data, folder: data["size"].__setitem__("value", "999999")),
        "samples-nan": samples([1e-5, float("nan")] * 20),
        "samples-negative": samples([1e-5, -1e-5] * 20),
        "samples-zero": samples([1e-5, 0.0] * 20),
        "samples-infinite": samples([1e-5, float("inf")] * 20),
    }
    base = str(fx.nvbench_dir / "recorded-nvbench-run-b.json")
    for name, mutate in files.items():
        path = fx.nvbench_copy(name, mutate)
        yield Case(f"nvbench-bin-{name}/compare", ["compare", base, path], 2)


def wrong_type_cases(fx: Fixtures):
    def at(*keys_and_value):
        *keys, value = keys_and_value

        def edit(run):
            node = run
            for k in keys[:-1]:
                node = node[k]
            node[keys[-1]] = value
        return edit
    edits = {
        "name-number": at("benchmarks", 0, "name", 5),
        "samples-string": at("benchmarks", 0, "kgate", "cold", "samples_s", "fast"),
        "samples-object": at("benchmarks", 0, "kgate", "cold", "samples_s", {"a": 1}),
        "benchmarks-object": at("benchmarks", {"a": 1}),
        "gpu-name-number": at("context", "kgate", "gpu", "name", 90),
        "kgate-block-array": at("benchmarks", 0, "kgate", [1, 2]),
        "deep-samples": at("benchmarks", 0, "kgate", "cold", "samples_s", nested(100000)),
        "deep-extra": at("context", "kgate", "extra", "deep", nested(100000)),
        "deep-name": at("benchmarks", 0, "name", nested(100000)),
    }
    for name, edit in edits.items():
        commands = ("compare", "report", "baseline", "history", "merge") if name.startswith("deep") else ("compare",)
        yield from reading_cases(fx, f"type-{name}", fx.file(f"type-{name}", mutated(fx.run, edit)), commands)
    deep = fx.work / "synthetic-deep-document.json"
    deep.write_text("[" * 1000000 + "]" * 1000000)
    yield from reading_cases(fx, "type-deep-document", str(deep))
    thresholds = fx.file("deep-thresholds", {"schema_version": 1, "families": {"rmsnorm": nested(100000)}})
    yield Case("type-deep-thresholds/compare", ["compare", "--thresholds", thresholds, fx.base_path, fx.run_path], 2)


def bomb_cases(fx: Fixtures):
    if not fx.wanted.search("gzip-bomb-"):
        return  # making a bomb takes seconds: not for a run that filters them out
    spaces = fx.bomb("gzip-bomb-spaces", b'{"benchmarks": [', b" ", b"]}")
    string = fx.bomb("gzip-bomb-string", b'{"benchmarks": [{"name": "', b"a", b'"}]}')
    for name, path in (("spaces", spaces), ("string", string)):
        yield Case(f"gzip-bomb-{name}/compare", ["compare", fx.base_path, path], 2)
        db = fx.folder(f"out-gzip-bomb-{name}-history") / "h.sqlite"
        yield Case(f"gzip-bomb-{name}/history-add", ["history", "add", "--db", str(db), path], 2, nothing_in(db.parent))


def hostile_name_cases(fx: Fixtures):
    def rename(run):
        for i, b in enumerate(run["benchmarks"]):
            k = b["kgate"]
            k["family"] += HOSTILE
            k["variant"] += HOSTILE
            k["shape"] += HOSTILE
            b["name"] = b["run_name"] = f'{k["family"]}/{k["variant"]}/{k["shape"]}'
            k["name"] = b["name"]
            for kernel in k.get("kernels", []):
                kernel["name"] += HOSTILE
                kernel["demangled"] += HOSTILE
        g = run["context"]["kgate"]
        g["gpu"]["name"] += HOSTILE
        run["context"]["host_name"] += HOSTILE
        g.setdefault("extra", {})["hostile" + HOSTILE] = HOSTILE
    hostile = fx.file("hostile-names", mutated(fx.run, rename))
    out = fx.folder("out-hostile")
    yield Case("hostile-names/compare", ["compare", hostile, hostile, "--all", "--markdown", str(out / "compare.md"),
                                         "--junit", str(out / "compare.xml")], 0,
               all_of(visible(out / "compare.md", out / "compare.xml"), markdown_has_no_raw_html(out / "compare.md")))
    report = out / "report"
    yield Case("hostile-names/report", ["report", hostile, "--baseline", hostile, "--out", str(report)], 0,
               all_of(visible(report / "report.md", report / "summary.md", report / "report.html"),
                      markdown_has_no_raw_html(report / "report.md", report / "summary.md"),
                      html_has_no_element_from_a_name(report / "report.html")))
    yield Case("hostile-names/report-text", ["report", hostile, "--format", "text", "--out", str(out / "text")], 0, visible())

    def story_names(run):
        for b in run["benchmarks"]:
            w = b["kgate"]["workload"]
            w["model"]["display_name"] += HOSTILE
            for step in w["steps"]:
                step["label"] += HOSTILE
            for k in w["timeline"]:
                k["demangled"] += HOSTILE
        run["context"]["kgate"]["gpu"]["name"] += HOSTILE
    story = fx.file("hostile-story", mutated(json.loads(Path(fx.story_path).read_text()), story_names))
    yield Case("hostile-names/story", ["story", "decode", "--from", story, "--out", str(out / "story")], 0,
               all_of(visible(out / "story" / "story.md", out / "story" / "story.html"),
                      markdown_has_no_raw_html(out / "story" / "story.md"),
                      html_has_no_element_from_a_name(out / "story" / "story.html")))
    db = str(out / "history.sqlite")
    yield Case("hostile-names/history-add", ["history", "add", "--db", db, hostile], 0, visible())
    baselines = str(out / "baselines")
    yield Case("hostile-names/baseline-update", ["baseline", "update", hostile, "--baseline-dir", baselines], 0, visible())
    missing = str(out / "missing\x1b[31m\x07.json")
    yield Case("hostile-names/error-naming-a-file", ["compare", hostile, missing], 2, visible())


def hostile_name_followers(fx: Fixtures):
    """Cases that read what the hostile-name cases wrote."""
    out = fx.work / "out-hostile"
    hostile = str(fx.work / "synthetic-hostile-names.json")
    yield Case("hostile-names/history-show", ["history", "show", "--db", str(out / "history.sqlite"), "."], 0, visible())
    yield Case("hostile-names/baseline-show", ["baseline", "show", "--baseline-dir", str(out / "baselines")], 0, visible())
    yield Case("hostile-names/compare-baseline-dir", ["compare", "--baseline-dir", str(out / "baselines"), hostile], 0, visible())


def misuse_cases(fx: Fixtures):
    run, base = fx.run_path, fx.base_path
    hang = fx.work / "synthetic-hanging-bench.sh"
    hang.write_text("#!/bin/sh\nexec sleep 600\n")
    hang.chmod(0o755)
    db = str(fx.folder("out-misuse") / "h.sqlite")
    misuse = {
        "no-command": [],
        "unknown-command": ["frobnicate"],
        "compare-nothing": ["compare"],
        "compare-one-file": ["compare", run],
        "compare-three-files": ["compare", base, run, run],
        "compare-unknown-option": ["compare", "--frobnicate", base, run],
        "compare-threshold-not-a-number": ["compare", "--threshold", "abc", base, run],
        "compare-threshold-negative": ["compare", "--threshold", "-1", base, run],
        "compare-threshold-without-value": ["compare", base, run, "--threshold"],
        "compare-baseline-dir-and-two-files": ["compare", "--baseline-dir", str(fx.work), base, run],
        "compare-missing-files": ["compare", str(fx.work / "nope-a.json"), str(fx.work / "nope-b.json")],
        "baseline-nothing": ["baseline"],
        "baseline-unknown-subcommand": ["baseline", "frobnicate"],
        "baseline-update-nothing": ["baseline", "update"],
        "baseline-show-two-slugs": ["baseline", "show", "a", "b"],
        "merge-nothing": ["merge"],
        "merge-without-output": ["merge", run, base],
        "report-nothing": ["report"],
        "report-without-out": ["report", run],
        "report-unknown-format": ["report", run, "--out", str(fx.work / "out-misuse-report"), "--format", "pdf"],
        "history-nothing": ["history"],
        "history-unknown-subcommand": ["history", "frobnicate"],
        "history-show-without-regex": ["history", "show", "--db", db],
        "history-show-bad-regex": ["history", "show", "--db", db, "("],
        "history-changes-bad-alpha": ["history", "changes", "--db", db, "--alpha", "2"],
        "ab-nothing": ["ab"],
        "ab-zero-rounds": ["ab", "--base", str(hang), "--head", str(hang), "--rounds", "0"],
        "ab-missing-binaries": ["ab", "--base", str(fx.work / "nope"), "--head", str(fx.work / "nope")],
        "bisect-nothing": ["bisect"],
        "story-unknown-workload": ["story", "frobnicate", "--from", fx.story_path, "--format", "text"],
        "story-negative-batch": ["story", "decode", "--batch", "-1", "--from", fx.story_path, "--format", "text"],
        "pr-gate-nothing": ["pr-gate"],
        "shard-run-nothing": ["shard-run"],
        "nightly-nothing": ["nightly"],
    }
    for name, args in misuse.items():
        yield Case(f"misuse/{name}", args, 2)
    # A benchmark binary that hangs: kgate ab ends it after --process-timeout and exits 2.
    yield Case("misuse/ab-hanging-bench", ["ab", "--base", str(hang), "--head", str(hang), "--process-timeout", "2"], 2, timeout=60)


def run_kgate(kgate: str, args, timeout: float, sanitized: bool) -> Result:
    env = dict(os.environ, NO_COLOR="1")
    if sanitized:
        # A sanitizer's report ends the process with its own code; the RSS limit stands in for RLIMIT_AS.
        env["ASAN_OPTIONS"] = "exitcode=86:hard_rss_limit_mb=2048:allocator_may_return_null=1:detect_leaks=1"
        env["UBSAN_OPTIONS"] = "exitcode=86:print_stacktrace=1:halt_on_error=1"

    def limit_memory():
        os.setsid()
        if not sanitized:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    started = time.monotonic()
    process = subprocess.Popen([kgate, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                               preexec_fn=limit_memory, stdin=subprocess.DEVNULL)
    try:
        out, err = process.communicate(timeout=timeout)
        code = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        out, err = process.communicate()
        code = None
    return Result(code, out.decode(errors="replace"), err.decode(errors="replace"), time.monotonic() - started)


def judge(case: Case, result: Result) -> Outcome:
    outcome = Outcome(case, result)
    report = SANITIZER_REPORT.search(result.err)
    if result.code is None:
        outcome.problem = f"still running after {case.timeout:.0f} s"
    elif (result.code < 0 and result.code != -9) or report or result.code == 86:
        outcome.crashed = True
        outcome.problem = f"crashed: {'signal ' + str(-result.code) if result.code < 0 else report.group(0) if report else 'exit 86'}"
    elif result.code != case.expected:
        outcome.problem = f"exit {result.code}, expected {case.expected}"
    elif case.expected == 2 and ("internal error" in result.err or not result.err.strip()):
        outcome.problem = "exit 2 without a message saying what is wrong" if not result.err.strip() else "an internal error"
    elif case.check:
        try:
            outcome.problem = case.check(result) or ""
        except (OSError, ValueError) as e:  # an output that is not there, or not what it should be
            outcome.problem = f"its output could not be checked: {e}"
    return outcome


# ---------------------------------------------------------------------------------------------
# Concurrent writers: entries lost


def split_run(fx: Fixtures, run, parts: int, name: str):
    files = []
    for i in range(parts):
        part = copy.deepcopy(run)
        part["benchmarks"] = run["benchmarks"][i::parts]
        files.append(fx.file(f"{name}-part-{i + 1}-of-{parts}", part))
    return files


def concurrent_cases(fx: Fixtures, kgate: str, sanitized: bool, trials=3):
    """Four baseline updates of disjoint quarters of a run into one existing baseline, and four
    history adds into a new database, each at once, three times: every entry kept, none stale."""
    outcomes = []
    parts = split_run(fx, fx.run, 4, "concurrent")
    expected_names = {b["name"] for b in fx.run["benchmarks"]}
    date = fx.run["context"]["kgate"]["provenance"]["date"]
    for trial in range(1, trials + 1):
        folder = fx.folder(f"out-concurrent-baselines-{trial}")
        seed = run_kgate(kgate, ["baseline", "update", fx.base_path, "--baseline-dir", str(folder)], 120, sanitized)
        case = Case(f"concurrent/baseline-update-trial-{trial}", ["baseline", "update", "(4 quarters at once)"], 0)
        if seed.code != 0:
            outcomes.append(Outcome(case, seed, f"seeding the baseline: exit {seed.code}: {seed.err.strip()[:200]}"))
            continue
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda p: run_kgate(kgate, ["baseline", "update", p, "--baseline-dir", str(folder)], 120, sanitized),
                                    parts))
        outcome = next((o for o in (judge(case, r) for r in results) if o.problem), Outcome(case, results[0]))
        try:
            stored = [json.loads(p.read_text()) for p in folder.rglob("*.json")]
        except ValueError as e:
            stored, outcome.problem = [], f"the baseline is not JSON: {e}"
        entries = {b["name"]: b for doc in stored for b in doc.get("benchmarks", [])}
        stale = [n for n in expected_names if n in entries and entries[n]["kgate"].get("provenance", {}).get("date") != date]
        outcome.lost = len(expected_names - entries.keys()) + len(stale)
        if outcome.lost and not outcome.problem:
            outcome.problem = f"{len(expected_names - entries.keys())} entries lost, {len(stale)} stale"
        outcomes.append(outcome)

    runs = []
    for i in range(4):
        run = copy.deepcopy(fx.run)
        run["context"]["kgate"]["provenance"].update(git_commit=f"{i + 1:040x}", date=f"2026-01-0{i + 1}T00:00:00Z")
        runs.append(fx.file(f"concurrent-history-{i + 1}", run))
    for trial in range(1, trials + 1):
        db = fx.folder(f"out-concurrent-history-{trial}") / "h.sqlite"
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda p: run_kgate(kgate, ["history", "add", "--db", str(db), p], 120, sanitized), runs))
        case = Case(f"concurrent/history-add-trial-{trial}", ["history", "add", "(4 runs at once into a new database)"], 0)
        outcome = next((o for o in (judge(case, r) for r in results) if o.problem), Outcome(case, results[0]))
        name = re.escape(fx.run["benchmarks"][0]["name"])
        show = run_kgate(kgate, ["history", "show", "--db", str(db), f"^{name}$"], 120, sanitized)
        counts = [int(n) for n in re.findall(r", (\d+) runs\)", show.out)]
        outcome.lost = 4 - max(counts, default=0)
        if outcome.lost and not outcome.problem:
            outcome.problem = f"{outcome.lost} of 4 runs lost"
        outcomes.append(outcome)
    return outcomes


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kgate", help="the kgate binary under test")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--filter", default="", help="run only the cases whose name matches this regular expression")
    parser.add_argument("--keep", help="build the fixtures in this folder and keep them")
    parser.add_argument("--list", action="store_true", help="list the cases and their expected exit codes")
    options = parser.parse_args()
    kgate = str(Path(options.kgate).resolve())
    with open(kgate, "rb") as binary:
        sanitized = b"__asan_init" in binary.read()
    work = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="kgate-hostile-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        wanted = re.compile(options.filter)
        fx = Fixtures(work, wanted)
        generators = (malformed_cases, kgate_value_cases, gbench_value_cases, nvbench_cases, wrong_type_cases, bomb_cases,
                      hostile_name_cases, misuse_cases)
        cases = [c for g in generators for c in g(fx) if wanted.search(c.name)]
        followers = [c for c in hostile_name_followers(fx) if wanted.search(c.name)]
        if options.list:
            for c in cases + followers:
                print(f"{c.expected}  {c.name}")
            return 0
        # The bombs first: the longest cases, so the others fill the remaining workers around them.
        cases.sort(key=lambda c: not c.name.startswith("gzip-bomb"))
        with concurrent.futures.ThreadPoolExecutor(max(1, options.jobs)) as pool:
            outcomes = list(pool.map(lambda c: judge(c, run_kgate(kgate, c.args, c.timeout, sanitized)), cases))
            outcomes += list(pool.map(lambda c: judge(c, run_kgate(kgate, c.args, c.timeout, sanitized)), followers))
        if wanted.search("concurrent/"):
            outcomes += concurrent_cases(fx, kgate, sanitized)
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    failed = [o for o in outcomes if o.problem]
    for o in failed:
        first_line = (o.result.err.strip().splitlines() or [""])[0][:200]
        print(f"FAIL {o.case.name}: {o.problem}" + (f" | {first_line}" if first_line else ""))
    crashes = sum(o.crashed for o in outcomes)
    wrong = sum(bool(o.problem) and not o.crashed and not o.lost for o in outcomes)
    lost = sum(o.lost for o in outcomes)
    build = "AddressSanitizer+UBSan" if sanitized else f"release, {MEMORY_LIMIT >> 20} MiB address space"
    print(f"hostile inputs: {len(outcomes)} cases ({build}, {time.monotonic() - started:.0f} s): {crashes} crashes, "
          f"{wrong} wrong exit codes or messages, {lost} lost entries")
    print(f"hostile-inputs: {len(outcomes) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
