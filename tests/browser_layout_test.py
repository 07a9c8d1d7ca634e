#!/usr/bin/env python3
"""The report and the story in a real browser: headless Chromium renders report.html and
story.html of the recorded H200 runs at 1400 px and the test fails when the document scrolls
horizontally, a table is wider than its column of the page, or anything an SVG chart draws (its
legend among them) lies outside the SVG's box. Each report compares a run with benchmarks slowed
(a synthetic copy, written to OUT) against the original: the slowed ones and the verdict badge must
be in the first screen, and the page must stay under its height budget, as it opens and with every
fold closed. Screenshots of the first screen of each page and of the charts are kept under
OUT for a person to look at.

usage: browser_layout_test.py KGATE DATA_DIR OUT
Exits 77 (skipped) only when no Chromium is installed (scripts/bootstrap.sh installs Debian's).
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

WIDTH, HEIGHT = 1400, 1000
# Page-height budgets at 1400 px for these inputs, as the page opens (the families with a change
# unfolded) and with every fold closed: the H200 whole-suite report of 188 benchmarks in 7 families,
# the H100 one of 329 benchmarks with 180 PyTorch peers, the H100 whole-suite run of f697667 with
# its 245 peers (649 benchmarks), and the decode story. A chart, table or section that grows a page
# past them fails. The H100 budgets are issue 35's; measured when set (as opened / every fold closed):
# 8,935 / 4,460 px, 11,322 / 5,042 px, 11,122 / 5,039 px, and 8,942 px for the story.
HEIGHT_BUDGET = {"report-h200": 20000, "report-h100": 20000, "report-h100-f697667": 20000, "story": 11000}
CLOSED_BUDGET = {"report-h200": 15000, "report-h100": 15000, "report-h100-f697667": 15000}
SLOWED = ["gemv/naive/m:1/n:6144/k:4096/bf16", "gemv/naive/m:2/n:6144/k:4096/bf16",
          "gemv/naive/m:4/n:6144/k:4096/bf16", "gemv/naive/m:8/n:6144/k:4096/bf16"]
# Issue 35's case: the H100 whole-suite run of f697667 against a synthetic copy of itself with three
# benchmarks of three families 6% slower.
SLOWED_F697667 = ["decode_attention/splitk/b:16/hq:32/hkv:8/d:128/l:4096/bf16", "rmsnorm/vectorized/m:256/n:4096/bf16",
                  "gemv/vectorized/m:4/n:6144/k:4096/bf16"]

# Runs in the page after layout and leaves its findings as JSON in a <pre>, which --dump-dom prints.
CHECK = r"""
<script>
window.addEventListener('load', () => {
  const problems = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > window.innerWidth)
    problems.push(`the document scrolls horizontally: ${doc.scrollWidth} px wide in a ${window.innerWidth} px window`);
  document.querySelectorAll('.table-wrap').forEach((wrap) => {
    if (wrap.scrollWidth > wrap.clientWidth + 1) {
      const head = wrap.querySelector('th, td');
      problems.push(`a table is ${wrap.scrollWidth} px wide in ${wrap.clientWidth} px (first cell: ${head ? head.textContent.slice(0, 60) : '?'})`);
    }
  });
  let svgs = 0;
  document.querySelectorAll('svg').forEach((svg) => {
    ++svgs;
    const box = svg.getBoundingClientRect();
    const title = (svg.querySelector('text') || {}).textContent || '(untitled)';
    svg.querySelectorAll('text, rect, circle, line, polyline, polygon, path').forEach((shape) => {
      const r = shape.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) return;
      const slack = 1.5;
      if (r.left < box.left - slack || r.right > box.right + slack || r.top < box.top - slack || r.bottom > box.bottom + slack)
        problems.push(`chart "${title}": a ${shape.tagName} (${(shape.textContent || '').slice(0, 50)}) lies outside the SVG box`);
    });
  });
  (window.kgateFirstScreen || []).forEach((name) => {
    const seen = Array.from(document.querySelectorAll('code')).some((c) => c.textContent === name &&
                                                                     c.getBoundingClientRect().bottom <= window.innerHeight);
    if (!seen) problems.push(`${name} is not in the first screen`);
  });
  if (window.kgateFirstScreen && window.kgateFirstScreen.length) {
    const badge = document.querySelector('.badge');
    if (!badge || badge.getBoundingClientRect().bottom > window.innerHeight) problems.push('the verdict badge is not in the first screen');
  }
  const height = doc.scrollHeight;
  document.querySelectorAll('details').forEach((d) => { d.open = false; });
  const closed = doc.scrollHeight;
  const out = document.createElement('pre');
  out.id = 'kgate-layout-check';
  out.textContent = JSON.stringify({problems, svgs, height, closed});
  document.body.appendChild(out);
});
</script>
"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browser(binary, *args):
    command = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
               f"--window-size={WIDTH},{HEIGHT}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def slowed_copy(source, names, factor, destination):
    """A synthetic copy of a recorded run with every time of `names` multiplied by `factor`."""
    with (gzip.open if source.endswith(".gz") else open)(source, "rt", encoding="utf-8") as f:
        run = json.load(f)
    slowed = 0
    for benchmark in run["benchmarks"]:
        if benchmark["name"] not in names:
            continue
        slowed += 1
        for mode in ("cold", "hot"):
            timing = benchmark.get("kgate", {}).get(mode)
            if not timing:
                continue
            for key, value in timing.items():
                if key.endswith("_s") and isinstance(value, (int, float)):
                    timing[key] = value * factor
                elif key.endswith("_s") and isinstance(value, list):
                    timing[key] = [v * factor for v in value]
            for key, value in timing.get("summary", {}).items():
                if key not in ("count", "rel_stddev") and isinstance(value, (int, float)):
                    timing["summary"][key] = value * factor
    if slowed != len(names):
        raise RuntimeError(f"{source}: found {slowed} of the {len(names)} benchmarks to slow")
    with open(destination, "w", encoding="utf-8") as f:
        json.dump(run, f)


def check_page(binary, html_path, screenshot, first_screen=()):
    """The findings of CHECK on a copy of the page, and a screenshot of its first screen."""
    with open(html_path, encoding="utf-8") as f:
        page = f.read()
    with tempfile.NamedTemporaryFile("w", suffix=".html", dir=os.path.dirname(html_path), delete=False,
                                     encoding="utf-8") as f:
        expected = "<script>window.kgateFirstScreen = " + json.dumps(list(first_screen)) + ";</script>"
        f.write(page.replace("</body>", expected + CHECK + "</body>"))
        probe = f.name
    try:
        result = browser(binary, "--virtual-time-budget=5000", "--dump-dom", "file://" + probe)
    finally:
        os.unlink(probe)
    found = re.search(r'<pre id="kgate-layout-check">(.*?)</pre>', result.stdout, re.S)
    if not found:
        raise RuntimeError(f"{html_path}: the check did not run in Chromium:\n{result.stderr[-2000:]}")
    shot = browser(binary, f"--screenshot={screenshot}", "file://" + os.path.abspath(html_path))
    if not os.path.exists(screenshot):
        raise RuntimeError(f"{html_path}: no screenshot:\n{shot.stderr[-2000:]}")
    text = found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    return json.loads(text)


def screenshot_svg(binary, svg_path, png_path):
    """A chart on its own, at its own size (read from its width and height)."""
    with open(svg_path, encoding="utf-8") as f:
        head = f.read(400)
    width = int(float(re.search(r'width="([0-9.]+)"', head).group(1)))
    height = int(float(re.search(r'height="([0-9.]+)"', head).group(1)))
    subprocess.run([binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                    f"--window-size={width},{height}", f"--screenshot={png_path}", "file://" + os.path.abspath(svg_path)],
                   capture_output=True, text=True, timeout=120)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    kgate, data, out = sys.argv[1:]
    binary = chromium()
    if not binary:
        print("skipped: no Chromium (install Debian's chromium package; scripts/bootstrap.sh does)")
        return 77
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    report_dir, story_dir = os.path.join(out, "report"), os.path.join(out, "story")
    h100_dir = os.path.join(out, "report-h100")
    slowed = os.path.join(out, "synthetic-h200-run-b-4-gemv-slower.json")
    slowed_copy(os.path.join(data, "recorded-h200-run-b.json.gz"), SLOWED, 1.2, slowed)
    subprocess.run([kgate, "report", slowed, "--baseline", os.path.join(data, "recorded-h200-run-a.json.gz"), "--out", report_dir],
                   check=True)
    # The H100 run with its PyTorch peers (skipped peers carry long error messages) against run A.
    slowed_h100 = os.path.join(out, "synthetic-h100-main-4-gemv-slower.json")
    slowed_copy(os.path.join(data, "recorded-h100-main.json.gz"), SLOWED, 1.2, slowed_h100)
    subprocess.run([kgate, "report", slowed_h100, "--baseline", os.path.join(data, "recorded-h100-run-a.json.gz"), "--out",
                    h100_dir], check=True)
    f697667_dir = os.path.join(out, "report-h100-f697667")
    original = os.path.join(data, "recorded-h100-f697667-peers.json.gz")
    slowed_f697667 = os.path.join(out, "synthetic-h100-f697667-3-slower-6pct.json")
    slowed_copy(original, SLOWED_F697667, 1.06, slowed_f697667)
    subprocess.run([kgate, "report", slowed_f697667, "--baseline", original, "--out", f697667_dir], check=True)
    subprocess.run([kgate, "story", "decode", "--batch", "1", "--context", "4096", "--from",
                    os.path.join(data, "recorded-h200-story-decode.json"), "--out", story_dir], check=True,
                   stdout=subprocess.DEVNULL)

    failures = []
    for name, page, first_screen in (("report-h200", os.path.join(report_dir, "report.html"), SLOWED),
                                     ("report-h100", os.path.join(h100_dir, "report.html"), SLOWED),
                                     ("report-h100-f697667", os.path.join(f697667_dir, "report.html"), SLOWED_F697667),
                                     ("story", os.path.join(story_dir, "story.html"), ())):
        screenshot = os.path.join(out, f"{name}-first-screen.png")
        findings = check_page(binary, page, screenshot, first_screen)
        print(f"{page}: {findings['svgs']} charts, {findings['height']} px tall, {findings['closed']} px with every fold "
              f"closed; screenshot {screenshot}")
        if findings["svgs"] == 0:
            failures.append(f"{page}: no chart rendered")
        if findings["height"] > HEIGHT_BUDGET[name]:
            failures.append(f"{page}: {findings['height']} px tall, over its budget of {HEIGHT_BUDGET[name]} px")
        if name in CLOSED_BUDGET and findings["closed"] > CLOSED_BUDGET[name]:
            failures.append(f"{page}: {findings['closed']} px tall with every fold closed, over {CLOSED_BUDGET[name]} px")
        failures += [f"{page}: {problem}" for problem in findings["problems"]]
    # Each chart kind once (the H200 report and the story draw every kind), and the drill-down's strip
    # plots of issue 35's case: a Chromium start per chart is most of this test's time.
    for directory, prefix in ((report_dir, ""), (story_dir, ""), (f697667_dir, "strip-")):
        for svg in sorted(f for f in os.listdir(directory) if f.endswith(".svg") and f.startswith(prefix)):
            png = os.path.join(out, os.path.basename(directory) + "-" + svg[:-4] + ".png")
            screenshot_svg(binary, os.path.join(directory, svg), png)
            print(f"screenshot {png}")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
