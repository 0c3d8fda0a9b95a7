#!/usr/bin/env python3
"""`seam.py tables` at the paper's scale: 20 models' labels and the traces they were scored from.

Writes --files trace files of synthetic replies to the committed benchmark's
1,800 requests (perf/scorer_lexical.py's `write_traces`: the same input for
every checkout), scores them once with this checkout (`seam.py score --no-nli`),
then times, in a fresh process of each checkout measured (its folder the working
directory and the only entry on the import path), `seam.py tables LABELS --out
DIR` with `--traces` (the sensitivity analyses that read the outputs) and
without. Runs are interleaved; medians of --repeat runs are printed, with a
SHA-256 over every file written, so that two checkouts can be seen to write the
same tables:

    git worktree add --detach /tmp/before HEAD
    python perf/tables_panel.py --root /tmp/before --root .
    git worktree remove /tmp/before

    python perf/tables_panel.py [--files 20] [--repeat 3] [--root DIR ...]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _digest(out: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(out.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(out).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def measure(labels: Path, traces: Path | None, out: Path) -> dict:
    """In a fresh process of the checkout measured: `seam.py tables` once; its wall and CPU time and digest."""
    import seam

    command = ["tables", str(labels), "--out", str(out), *(["--traces", str(traces)] if traces else [])]
    start, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = seam.main(command)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    if code != 0:
        raise SystemExit(f"seam.py tables failed ({code}): {err.getvalue()}")
    return {"wall": wall, "cpu": cpu, "digest": _digest(out)}


def run_child(root: Path, labels: Path, traces: Path | None, out: Path) -> dict:
    command = [sys.executable, "-P", str(Path(__file__).resolve()), "--child", "--labels", str(labels),
               "--out", str(out), *(["--traces", str(traces)] if traces else [])]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)})
    if done.returncode != 0:
        raise SystemExit(f"measuring {root} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20, help="trace files (models) of 1,800 outputs each")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per checkout and variant (medians)")
    parser.add_argument("--root", type=Path, action="append", help="a checkout to measure (repeatable; "
                        "default: this one)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--labels", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--traces", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # one measurement, in this fresh process, of the checkout in the working directory
        print(json.dumps(measure(args.labels, args.traces, args.out)))
        return 0

    import seam
    from perf.scorer_lexical import write_traces

    roots = [root.resolve() for root in (args.root or [HERE])]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "traces").mkdir()
        paths = write_traces(tmp / "traces", args.files)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            code = seam.main(["score", *map(str, paths), "--out-dir", str(tmp / "labels"), "--no-nli"])
        if code != 0:
            raise SystemExit(f"scoring the synthetic traces failed ({code}): {err.getvalue()}")
        print(f"models: {len(paths)}; runs per checkout and variant: {args.repeat} (interleaved)")
        variants = [(root, traces) for root in roots for traces in (tmp / "traces", None)]
        runs: dict[int, list[dict]] = {i: [] for i in range(len(variants))}
        for n in range(args.repeat):
            for i, (root, traces) in enumerate(variants):
                runs[i].append(run_child(root, tmp / "labels", traces, tmp / f"tables-{i}-{n}"))
        for i, (root, traces) in enumerate(variants):
            wall = statistics.median(run["wall"] for run in runs[i])
            cpu = statistics.median(run["cpu"] for run in runs[i])
            digests = sorted({run["digest"] for run in runs[i]})
            each = ", ".join(f"{run['wall']:.2f}" for run in runs[i])
            print(f"{root}  tables {'--traces' if traces else '(no traces)'}: median {wall:.2f} s wall ({each}), "
                  f"{cpu:.2f} s CPU; output sha256 {', '.join(d[:12] for d in digests)}")
        if len(roots) > 1:
            for traces in (tmp / "traces", None):
                same = {run["digest"] for i, (_, t) in enumerate(variants) if t == traces for run in runs[i]}
                print(f"tables {'--traces' if traces else '(no traces)'} identical across checkouts: "
                      f"{'yes' if len(same) == 1 else 'NO'}")
    return 0


if __name__ == "__main__":
    if "--child" in sys.argv:  # a measurement: nothing of this checkout imported here
        sys.exit(main())
    sys.path.insert(0, str(HERE))
    from common.pipes import run_main

    sys.exit(run_main(main))
