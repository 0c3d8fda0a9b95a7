#!/usr/bin/env python3
"""How big the HTML report is and how soon a browser shows it: the released models, and one model more.

For the released labels and traces, and for the same plus a copy of the model with the longest
outputs under another name (a stand-in for one more model of 1,800 rows),
prints the page's size, the time `seam.py report` takes to write it, and, over several fresh loads
in headless Chromium (tests/support/browser.py), the median time to first contentful paint, to the
load event and until the case browser has drawn its rows. Medians on a shared machine; not a test.
Run: python perf/report_page.py [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.browser import Browser  # noqa: E402

import seam  # noqa: E402
from common.argtypes import positive_int  # noqa: E402

SHOWN = "document.querySelectorAll('#cases tbody tr').length > 0 && performance.now()"


def make_inputs(folder: Path, extra_model: bool) -> tuple[Path, Path]:
    labels, traces = folder / "labels", folder / "traces"
    shutil.copytree(ROOT / "data" / "labels", labels)
    shutil.copytree(ROOT / "data" / "traces", traces)
    if extra_model:
        largest = max(traces.glob("*.jsonl"), key=lambda p: p.stat().st_size)
        name = f"{largest.stem}-copy"
        for source, target in ((largest, traces / f"{name}.jsonl"), (labels / largest.name, labels / f"{name}.jsonl")):
            rows = [json.loads(line) for line in source.read_text(encoding="utf-8").split("\n") if line]
            for row in rows:
                row["model"] = name
            target.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
                                      for r in rows), encoding="utf-8")
    return labels, traces


def measure(browser: Browser, page_path: Path, repeats: int) -> dict[str, float]:
    paint, load, shown = [], [], []
    for _ in range(repeats):
        page = browser.open(page_path, width=1400, height=1000, timeout=60)
        paint.append(page.first_contentful_paint_ms())
        load.append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
        shown.append(page.wait_for(SHOWN, timeout=60))
        page.close()
    return {"first paint ms": statistics.median(paint), "load event ms": statistics.median(load),
            "browser drawn ms": statistics.median(shown)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive_int, default=5, help="fresh page loads per page (default 5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Browser.launch() as browser:
        for extra in (False, True):
            folder = Path(tmp) / ("plus-one" if extra else "released")
            labels, traces = make_inputs(folder, extra)
            out = folder / "report.html"
            started = time.perf_counter()
            status = seam.main(["report", "--labels", str(labels), "--traces", str(traces), "--tables",
                                str(ROOT / "data" / "tables"), "--review", str(ROOT / "data" / "review"),
                                "--out", str(out)])
            written = time.perf_counter() - started
            if status:
                return status
            models = len(list(labels.glob("*.jsonl")))
            timings = measure(browser, out, args.repeats)
            cells = ", ".join(f"{k} {v:.0f}" for k, v in timings.items())
            print(f"{models} models: {out.stat().st_size:,} bytes, written in {written:.2f} s; median of "
                  f"{args.repeats} loads: {cells}")
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
