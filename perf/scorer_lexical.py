#!/usr/bin/env python3
"""Lexical rescoring time: `seam.py score` on many full-size trace files, entailment off.

Writes --files trace files (default 20), each one synthetic model's replies
(scorer/synthetic.py: fences, preambles, notes, absorbed remarks) to the
committed benchmark's 1,800 requests (36,000 outputs by default). Each run is a
fresh process that times `seam.py score FILES --out-dir DIR --no-nli` (wall and
CPU time of the command itself, interpreter start-up excluded); the medians of
--repeat runs are printed. One more run, not timed, counts the calls of
`common.normalize.normalize` (a profile hook on its code object, so a call is
counted however the function was reached). The SHA-256 over all labels files
written shows whether two checkouts give byte-identical labels.

Give --root more than once to measure checkouts side by side: their runs are
interleaved, so a busy machine slows them alike. Only long-standing public names
are used (seam.main, scorer.synthetic.traces, benchmark.dataset.load), so an
older commit can be measured too:

    git worktree add --detach /tmp/before 88040bd
    python perf/scorer_lexical.py --root /tmp/before --root .
    git worktree remove /tmp/before

    python perf/scorer_lexical.py [--files 20] [--repeat 5] [--root DIR ...]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

# A runner trace row's other fields (docs/RUNNER.md, "Trace rows"), as scorer.synthetic.trace_row fills them;
# older checkouts' synthetic replies lacked them, so they are set here and the files are the same for both.
FILLER = {"served_model": None, "finish_reason": "stop", "usage": None, "response_id": None, "response": None,
          "request": {"model": "synthetic", "provider": "synthetic"}, "previous": [], "message_sha256": None,
          "attempts": [{"error": None, "http_status": 200, "latency_s": 1.0, "retry_after": None,
                        "retry_wait_s": None, "started_at": "2026-01-02T03:04:05.000Z"}],
          "started_at": "2026-01-02T03:04:05.000Z", "finished_at": "2026-01-02T03:04:06.000Z", "runner_version": "1"}


def write_traces(directory: Path, files: int) -> list[Path]:
    from benchmark import dataset
    from common import jsonl
    from scorer import synthetic

    benchmark = dataset.load()
    source = {cluster.cluster: cluster.source for cluster in benchmark.clusters}
    paths = []
    for n in range(files):
        model = f"synthetic-{n:02d}"
        try:
            rows = synthetic.traces(list(benchmark.clusters), model=model, seed=n + 1)
        except TypeError:  # before synthetic.py took records.Cluster: cluster dicts
            rows = synthetic.traces([cluster.to_row() for cluster in benchmark.clusters], model=model, seed=n + 1)
        rows = [{**row, **FILLER, "source": source[row["cluster"]], "benchmark_sha256": benchmark.sha256}
                for row in rows]
        path = directory / f"{model}.jsonl"
        jsonl.write(path, rows)
        paths.append(path)
    return paths


def measure(paths: list[Path], out: Path, count: bool) -> dict:
    """In a fresh process: run `seam.py score` once; its times, or its normalize() calls when `count`."""
    import seam
    from common import normalize

    target, calls = normalize.normalize.__code__, 0

    def hook(frame, event, arg):
        nonlocal calls
        if event == "call" and frame.f_code is target:
            calls += 1

    if count:
        sys.setprofile(hook)
    wall, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = seam.main(["score", *map(str, paths), "--out-dir", str(out), "--no-nli"])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    sys.setprofile(None)
    if code != 0:
        raise SystemExit(f"seam.py score failed ({code}): {err.getvalue()}")
    digest = hashlib.sha256()
    for path in sorted(out.glob("*.jsonl")):
        digest.update(path.read_bytes())
    return {"wall": wall, "cpu": cpu, "calls": calls, "labels": digest.hexdigest()}


def run_child(root: Path, traces: Path, out: Path, count: bool) -> dict:
    command = [sys.executable, __file__, "--child", str(root), "--traces", str(traces), "--out", str(out)]
    done = subprocess.run([*command, *(["--count"] if count else [])], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measuring {root} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20, help="trace files of 1,800 outputs each")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per checkout (medians are printed)")
    parser.add_argument("--root", type=Path, action="append", help="a checkout to measure (repeatable; "
                        "default: this one)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--traces", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--count", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:  # one measurement, in this fresh process, of the checkout named
        sys.path.insert(0, str(args.child))
        print(json.dumps(measure(sorted(args.traces.glob("*.jsonl")), args.out, args.count)))
        return 0

    roots = [root.resolve() for root in (args.root or [HERE])]
    sys.path.insert(0, str(HERE))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "traces").mkdir()
        paths = write_traces(tmp / "traces", args.files)
        outputs = sum(1 for path in paths for _ in path.open(encoding="utf-8"))
        print(f"trace files: {len(paths)}; outputs: {outputs:,}; runs per checkout: {args.repeat} (interleaved)")
        runs: dict[Path, list[dict]] = {root: [] for root in roots}
        for n in range(args.repeat):
            for i, root in enumerate(roots):
                runs[root].append(run_child(root, tmp / "traces", tmp / f"labels-{i}-{n}", count=False))
        for i, root in enumerate(roots):
            calls = run_child(root, tmp / "traces", tmp / f"labels-{i}-count", count=True)["calls"]
            wall = [r["wall"] for r in runs[root]]
            cpu = [r["cpu"] for r in runs[root]]
            digests = sorted({r["labels"] for r in runs[root]})
            print(f"\n{root}")
            print(f"  seam.py score --no-nli: median {statistics.median(wall):.2f} s wall "
                  f"({', '.join(f'{t:.2f}' for t in wall)}), {statistics.median(cpu):.2f} s CPU")
            print(f"  normalize() calls: {calls:,}")
            print(f"  labels sha256 (all files): {', '.join(digests)}"
                  f"{'' if len(digests) == 1 else ' (DIFFER between runs)'}")
        if len(roots) > 1:
            same = len({r["labels"] for rs in runs.values() for r in rs}) == 1
            print(f"\nlabels identical across checkouts: {'yes' if same else 'NO'}")
    return 0


if __name__ == "__main__":
    if "--child" in sys.argv:  # the measured checkout's packages only: nothing of this one is imported first
        sys.exit(main())
    sys.path.insert(0, str(HERE))
    from common.pipes import run_main

    sys.exit(run_main(main))
