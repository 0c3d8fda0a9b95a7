#!/usr/bin/env python3
"""Peak memory of `seam.py validity`, `score`, `report` and `compare` on a trace holding one very long reply.

    python perf/long_replies.py [--sizes 5,40] [--limit-gb 8] [--commands validity,score,report,compare]

For each size (in MB) a trace is written to a temporary folder: the released
Qwen2.5-Coder-1.5B rows of one code cluster and one prose cluster, renamed to
the model "perf-long" (compare refuses a released model's name), whose newline
replies are replaced by code (a fenced Python block of many small functions) and
prose (many sentences) of that many bytes. A trace of the same rows without the
long replies gives the floor. Each command runs in a child process of its own,
whose peak resident memory (`ru_maxrss`, from os.wait4 of that child alone) is
printed with the growth over the floor as a multiple of the reply's size.
`report` reads the labels `score` wrote (so `score` runs first) with the released
tables (data/tables: the page warns that their models are not the labels'), and
writes a page whose size is printed too; `compare` does all of it in one process
(scoring, tables, validity and the page, beside the released models).

A child runs under an address-space limit (--limit-gb, RLIMIT_AS), so that a
regression ends in that child's MemoryError ("over the limit") rather than in
the machine's memory; the issue that asked for this script (issue 36) measured
2.2 GB for a 5 MB reply and 19.7 GB for 40 MB through `validity` before the fix.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TRACE = ROOT / "data" / "traces" / "qwen2.5-coder-1.5b.jsonl"
CLUSTERS = ("humaneval-001", "wikipedia-001")
LONG_ID = "{cluster}/newline"
MB = 1 << 20
MODEL = "perf-long"
COMMANDS = ("validity", "score", "report", "compare")  # in this order: report reads the labels of score


def code(size: int) -> str:
    """A fenced Python block of about `size` bytes: many small, distinct functions."""
    parts, total, n = ["```python\n"], 0, 0
    while total < size:
        part = f"def f{n}(a, b):\n    x = [a + {n}, b * 2, (a, b)]\n    return {{'k': x[0]}} if a else x\n\n"
        parts.append(part)
        total, n = total + len(part), n + 1
    return "".join(parts) + "```\n"


def prose(size: int) -> str:
    """About `size` bytes of sentences, each a little different."""
    sentence = "The council met on day {} and agreed that the library would open later in the spring. "
    count = size // len(sentence.format(0)) + 1
    return "".join(sentence.format(n) for n in range(count))


def write_trace(path: Path, size: int | None) -> None:
    """The rows of CLUSTERS from the released trace; with `size`, their newline replies made `size` bytes long."""
    rows = []
    with TRACE.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row["cluster"] not in CLUSTERS:
                continue
            row["model"] = MODEL
            if size is not None and row["id"] == LONG_ID.format(cluster=row["cluster"]):
                row["output"] = code(size) if row["cluster"].startswith("humaneval") else prose(size)
                row["response"] = None  # the reply once, as a hand-made trace may hold it
            rows.append(json.dumps(row, ensure_ascii=False) + "\n")
    path.write_text("".join(rows), encoding="utf-8")


def peak_mb(command: list[str], limit_gb: float) -> tuple[float, int]:
    """(peak resident memory of the child in MB, its exit status), the child under an address-space limit."""
    limit = int(limit_gb * (1 << 30))

    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=bounded)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        tail = child.stderr.read().decode("utf-8", "replace").strip().splitlines()[-1:]
        print(f"   exit {child.returncode}: {' '.join(tail)[:200]}", file=sys.stderr)
    child.stderr.close()
    return usage.ru_maxrss / 1024, child.returncode  # ru_maxrss is in KiB on Linux


def commands(trace: Path, out: Path) -> dict[str, list[str]]:
    seam = [sys.executable, str(ROOT / "seam.py")]
    labels = out / "labels.jsonl"
    return {"validity": [*seam, "validity", str(trace), "--out", str(out / "tables")],
            "score": [*seam, "score", str(trace), "--out", str(labels), "--no-nli"],
            "report": [*seam, "report", "--labels", str(labels), "--traces", str(trace),
                       "--tables", str(ROOT / "data" / "tables"), "--out", str(out / "report.html")],
            "compare": [*seam, "compare", str(trace), "--out", str(out / "compare")]}


def page_mb(name: str, out: Path) -> str:
    """The size of the page `name` wrote, in MB ("" for a command that writes none)."""
    page = {"report": out / "report.html", "compare": out / "compare" / "report.html"}.get(name)
    return f"{page.stat().st_size / MB:.1f}" if page is not None and page.exists() else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5,40", help="reply sizes in MB, comma-separated (default 5,40)")
    parser.add_argument("--limit-gb", type=float, default=8.0,
                        help="address-space limit of each child, in GB (default 8)")
    parser.add_argument("--commands", default=",".join(COMMANDS),
                        help=f"the commands to measure, comma-separated (default {','.join(COMMANDS)}; report "
                             "needs score)")
    args = parser.parse_args()
    sizes = [float(size) for size in args.sizes.split(",")]
    chosen = [name.strip() for name in args.commands.split(",") if name.strip()]
    if unknown := [name for name in chosen if name not in COMMANDS]:
        parser.error(f"--commands: unknown {', '.join(unknown)} (choose from {', '.join(COMMANDS)})")
    if "report" in chosen and "score" not in chosen:
        parser.error("--commands: report reads the labels that score writes; add score")
    chosen = [name for name in COMMANDS if name in chosen]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        floor_trace = folder / "floor.jsonl"
        write_trace(floor_trace, None)
        floor = {}
        for name, command in commands(floor_trace, folder / "floor").items():
            if name in chosen:
                floor[name] = peak_mb(command, args.limit_gb)[0]
        print(f"{'command':<10} {'reply MB':>9} {'peak MB':>9} {'over floor':>11} {'x reply':>8} {'page MB':>8}")
        for name, value in floor.items():
            print(f"{name:<10} {'-':>9} {value:>9.0f} {'':>11} {'':>8} {page_mb(name, folder / 'floor'):>8}")
        for size in sizes:
            trace = folder / f"long-{size:g}.jsonl"
            write_trace(trace, int(size * MB))
            out = folder / f"out-{size:g}"
            for name, command in commands(trace, out).items():
                if name not in chosen:
                    continue
                peak, status = peak_mb(command, args.limit_gb)
                growth = peak - floor[name]
                note = "  (over the limit)" if status and peak >= args.limit_gb * 1024 * 0.9 else (
                    f"  (exit {status})" if status else "")
                print(f"{name:<10} {size:>9g} {peak:>9.0f} {growth:>11.0f} {growth / size:>8.1f} "
                      f"{page_mb(name, out):>8}{note}")
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
