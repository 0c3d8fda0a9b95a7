#!/usr/bin/env python3
"""The HTML report at the paper's scale: how long `seam.py report` takes, and how soon Chromium shows and answers.

Two pages: the released models (3 models, 4,500 cases: data/report.html) and the paper's panel (20 models,
30,000 cases: the released traces and labels copied under 20 names, `make_inputs`). For each checkout
(--root, default this one) each page is built --builds times by `seam.py report` in a fresh process of that
checkout (started in its folder, so it imports its own packages and none of this one's), timed, and its
bytes compared across the builds. Then each page is opened --repeats times in headless Chromium
(tests/support/browser.py: the measuring tool, not the measured code), each time in a fresh tab, the
checkouts interleaved so that a busy machine slows them alike. Medians of:

- load: the load event, ms from navigation start;
- rows: until the first frame after the case browser first holds rows, ms from navigation start;
- DOM: the page's elements then;
- key: typing one character into the search box (Chromium's own input, one character at a time: SEARCH),
  from the input event to the first frame after the page has handled it (the median keystroke; the worst
  in brackets);
- clear: selecting the search and deleting it with Backspace (every case shown again), the same way.

Medians on a shared machine; not a test (tests/test_report_window.py checks what the page does). Run from
the repository's root:

    python perf/report_page.py [--repeats 5] [--builds 3] [--models 3 20] [--root DIR ...]

and to compare with the last commit:

    git worktree add --detach /tmp/base-page HEAD
    python perf/report_page.py --root /tmp/base-page --root .
    git worktree remove /tmp/base-page
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(HERE), str(HERE / "tests")]  # the measuring tools; the checkouts measured run apart

from support.browser import Browser  # noqa: E402

SEARCH = "austen-01"  # typed a character at a time: each keystroke narrows the cases shown
# Installed before the page's own script: the time of the first frame after the case browser holds rows.
PROBE = """new MutationObserver((records, observer) => {
  if (!document.querySelector('#cases tbody tr')) return;
  observer.disconnect();
  requestAnimationFrame(() => setTimeout(() => { window.seamRowsShown = performance.now(); }));
}).observe(document, {childList: true, subtree: true});"""
# Each input event on the page, timed from its dispatch (a capturing listener runs before the page's own)
# until the first frame after the page's handler.
KEYS = """(() => {
  window.seamInputs = [];
  document.addEventListener('input', () => {
    const started = performance.now();
    requestAnimationFrame(() => setTimeout(() => window.seamInputs.push(performance.now() - started)));
  }, true);
})()"""


def make_inputs(source: Path, folder: Path, models: int) -> tuple[Path, Path]:
    """Label and trace folders of `models` models: the released ones as they are, or (more than there are)
    each released model's files copied in turn under a name of its own, "<model>-00" and on."""
    released = sorted((source / "labels").glob("*.jsonl"))
    if models == len(released):
        return source / "labels", source / "traces"
    labels, traces = folder / "labels", folder / "traces"
    labels.mkdir(parents=True)
    traces.mkdir(parents=True)
    for n in range(models):
        original = released[n % len(released)]
        name = f"{original.stem}-{n:02d}"
        for kind, target in (("labels", labels), ("traces", traces)):
            rows = [json.loads(line) for line in (source / kind / original.name).read_text(encoding="utf-8")
                    .split("\n") if line]
            for row in rows:
                row["model"] = name
            (target / f"{name}.jsonl").write_text(
                "".join(json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
                        for row in rows), encoding="utf-8")
    return labels, traces


def build(root: Path, labels: Path, traces: Path, out: Path) -> tuple[float, float]:
    """Run `seam.py report` of checkout `root` in its own process; wall and CPU seconds."""
    data = root / "data"
    argv = [sys.executable, "seam.py", "report", "--labels", str(labels), "--traces", str(traces),
            "--tables", str(data / "tables"), "--review", str(data / "review"), "--out", str(out)]
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONSTARTUP")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{root}: seam.py report exited {done.returncode}:\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def load_once(browser: Browser, page_path: Path) -> dict[str, float]:
    """One fresh load: the load event, the rows shown, the elements, each keystroke of SEARCH, the clearing."""
    page = browser.open("about:blank", width=1400, height=1000)
    try:
        page.send("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
        page.navigate(page_path, timeout=180)
        load = page.wait_for("performance.getEntriesByType('navigation')[0].loadEventEnd", timeout=60)
        rows = page.wait_for("window.seamRowsShown", timeout=60)
        elements = page.evaluate("document.getElementsByTagName('*').length")
        page.evaluate(KEYS)
        page.evaluate("document.getElementById('filter-cluster').focus()")
        for typed, char in enumerate(SEARCH, 1):
            page.send("Input.insertText", {"text": char})
            page.wait_for(f"window.seamInputs.length === {typed}", timeout=60)
        page.evaluate("document.getElementById('filter-cluster').select()")
        for kind in ("rawKeyDown", "keyUp"):
            page.send("Input.dispatchKeyEvent", {"type": kind, "key": "Backspace", "code": "Backspace",
                                                 "windowsVirtualKeyCode": 8})
        page.wait_for(f"window.seamInputs.length === {len(SEARCH) + 1}", timeout=60)
        if page.evaluate("document.getElementById('filter-cluster').value") != "":
            raise SystemExit(f"{page_path}: the search was not cleared")
        times = page.evaluate("window.seamInputs")
        return {"load": load, "rows": rows, "elements": elements, "key": statistics.median(times[:-1]),
                "worst key": max(times[:-1]), "clear": times[-1]}
    finally:
        page.close()


def report(args, roots: list[Path], pages: dict, builds: dict, loads: dict) -> None:
    """One line per page and checkout: the build, the size, the medians of the loads, whether the builds
    agree (and, for the released models, whether the page is that checkout's data/report.html)."""
    print(f"medians of {args.repeats} fresh loads and {args.builds} builds; checkouts: "
          + ", ".join(f"[{r}] {root}" for r, root in enumerate(roots)))
    print(f"{'page':<10} {'':>3} {'build s (CPU)':>14} {'MB':>6} {'load ms':>8} {'rows ms':>8} {'DOM':>8} "
          f"{'key ms (worst)':>15} {'clear ms':>9}  same bytes")
    for (models, r), path in pages.items():
        labels, _, times, digests = builds[(models, r)]
        got = {name: statistics.median(load[name] for load in loads[(models, r)]) for name in loads[(models, r)][0]}
        wall, cpu = statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)
        same = "yes" if len(digests) == 1 else f"NO ({len(digests)} different)"
        released = roots[r] / "data" / "report.html"
        if labels == roots[r] / "data" / "labels" and released.exists():
            same += ", is data/report.html" if released.read_bytes() == path.read_bytes() else ", not data/report.html"
        print(f"{models:>3} models [{r}] {wall:>6.2f} ({cpu:>5.2f}) {path.stat().st_size / 1e6:>6.1f} "
              f"{got['load']:>8,.0f} {got['rows']:>8,.0f} {got['elements']:>8,.0f} "
              f"{got['key']:>7,.0f} ({got['worst key']:>5,.0f}) {got['clear']:>9,.0f}  {same}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh loads of each page (default 5)")
    parser.add_argument("--builds", type=int, default=3, help="builds of each page (default 3; 2 at least "
                                                               "to compare their bytes)")
    parser.add_argument("--models", type=int, nargs="+", default=[3, 20], help="pages of these many models")
    parser.add_argument("--root", type=Path, action="append", help="a checkout to measure (repeatable; "
                                                                  "default this one)")
    args = parser.parse_args()
    if min(args.repeats, args.builds, *args.models) < 1:
        parser.error("--repeats, --builds and --models take numbers of 1 or more")
    roots = [root.resolve() for root in args.root or [HERE]]
    with tempfile.TemporaryDirectory(prefix="seam-report-page-") as tmp:
        pages, builds = {}, {}
        for models in args.models:
            for r, root in enumerate(roots):
                labels, traces = make_inputs(root / "data", Path(tmp) / f"inputs-{r}-{models}", models)
                pages[(models, r)] = Path(tmp) / f"page-{r}-{models}.html"
                builds[(models, r)] = (labels, traces, [], set())
        for number in range(args.builds):  # interleaved, as the loads below
            for (models, r), (labels, traces, times, digests) in builds.items():
                out = pages[(models, r)].with_suffix(f".{number}.html")
                times.append(build(roots[r], labels, traces, out))
                digests.add(hashlib.sha256(out.read_bytes()).hexdigest())
                out.replace(pages[(models, r)])
        loads: dict[tuple[int, int], list[dict]] = {key: [] for key in pages}
        with Browser.launch(timeout=180) as browser:
            for _ in range(args.repeats):
                for key, path in pages.items():
                    loads[key].append(load_once(browser, path))
        report(args, roots, pages, builds, loads)
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
