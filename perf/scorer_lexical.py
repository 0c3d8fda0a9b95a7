#!/usr/bin/env python3
"""Lexical rescoring time: `seam.py score` on many full-size trace files, entailment off, against a floor.

Writes --files trace files (default 20), each one synthetic model's replies
(scorer/synthetic.py: fences, preambles, notes, absorbed remarks) to the
committed benchmark's 1,800 requests (36,000 outputs by default). Each run is a
fresh process that times `seam.py score FILES --out-dir DIR --no-nli` (wall time,
and CPU time of the process and of any worker processes it waited for;
interpreter start-up excluded); the medians of --repeat runs are printed.

The floor is what no scorer can do without: in a fresh process of its own,
json-parse every line of every trace file and write the labels files (their
bytes, made by the first checkout's run, each written as the scorer writes it:
to a temporary file, fsynced, renamed). Its runs are interleaved with the
scorer's, so a busy machine slows both alike, and each checkout's medians are
also given as multiples of the floor's.

One more run per checkout, not timed and with one worker where the checkout
has the option (a profile hook counts in its own process only), counts the
calls of `common.normalize.normalize` (a hook on its code object, so a call is
counted however the function was reached). The SHA-256 over all labels files
written shows whether two checkouts give byte-identical labels.

Give --root more than once to measure checkouts side by side: their runs are
interleaved. Each checkout runs in its own process, with that checkout as its
working directory and its only entry on the import path (nothing of the
checkout running this script is imported there), and only long-standing
public names are used (seam.main, scorer.synthetic.traces, benchmark.dataset.load),
so an older commit can be measured too:

    git worktree add --detach /tmp/before HEAD
    python perf/scorer_lexical.py --root /tmp/before --root .
    git worktree remove /tmp/before

    python perf/scorer_lexical.py [--files 20] [--repeat 5] [--root DIR ...] [--serial]

--serial adds, for each checkout whose `seam.py score` has --workers, runs with
`--workers 1` (its default uses one worker per available CPU).
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

# A runner trace row's other fields (docs/RUNNER.md, "Trace rows"), as scorer.synthetic.trace_row fills them;
# older checkouts' synthetic replies lacked them, so they are set here and the files are the same for both.
FILLER = {"served_model": None, "finish_reason": "stop", "usage": None, "response_id": None, "response": None,
          "request": {"model": "synthetic", "provider": "synthetic"}, "previous": [], "message_sha256": None,
          "attempts": [{"error": None, "http_status": 200, "latency_s": 1.0, "retry_after": None,
                        "retry_wait_s": None, "started_at": "2026-01-02T03:04:05.000Z"}],
          "started_at": "2026-01-02T03:04:05.000Z", "finished_at": "2026-01-02T03:04:06.000Z", "runner_version": "1"}


def write_traces(directory: Path, files: int) -> list[Path]:
    """The trace files, written by this checkout (in the parent process): the same input for every checkout."""
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


def _times() -> tuple[float, float]:
    """(wall, CPU of this process and of the children it has waited for), in seconds."""
    cpu = os.times()
    return time.perf_counter(), cpu.user + cpu.system + cpu.children_user + cpu.children_system


def _elapsed(start: tuple[float, float]) -> dict:
    wall, cpu = _times()
    return {"wall": wall - start[0], "cpu": cpu - start[1]}


def _digest(out: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(out.glob("*.jsonl")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def measure(paths: list[Path], out: Path, count: bool, extra: list[str]) -> dict:
    """In a fresh process of the checkout measured: run `seam.py score` once; its times, or its normalize()
    calls when `count`."""
    import seam
    from common import normalize

    target, calls = normalize.normalize.__code__, 0

    def hook(frame, event, arg):
        nonlocal calls
        if event == "call" and frame.f_code is target:
            calls += 1

    if count:
        sys.setprofile(hook)
    start = _times()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = seam.main(["score", *map(str, paths), "--out-dir", str(out), "--no-nli", *extra])
    times = _elapsed(start)
    sys.setprofile(None)
    if code != 0:
        raise SystemExit(f"seam.py score failed ({code}): {err.getvalue()}")
    return {**times, "calls": calls, "labels": _digest(out)}


def floor(paths: list[Path], labels: Path, out: Path) -> dict:
    """In a fresh process: json-parse every trace line and write the labels files (made beforehand) as the
    scorer does; the standard library only."""
    made = {path.name: path.read_bytes() for path in sorted(labels.glob("*.jsonl"))}
    out.mkdir(parents=True, exist_ok=True)
    start = _times()
    for path in paths:
        for line in path.read_bytes().split(b"\n")[:-1]:
            json.loads(line)
    for name, data in made.items():
        temporary = out / f"{name}.tmp"
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, out / name)
    return _elapsed(start)


def run_child(root: Path | None, traces: Path, out: Path, *, count: bool = False, extra: tuple[str, ...] = (),
              labels: Path | None = None) -> dict:
    """One measurement in a fresh process: of checkout `root` (its directory the working directory and the
    import path, this script's own folder not on it: `python -P`), or of the floor (root None)."""
    command = [sys.executable, "-P", str(Path(__file__).resolve()), "--traces", str(traces), "--out", str(out)]
    if root is None:
        command += ["--floor", str(labels)]
        cwd, env = None, {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    else:
        command += ["--child", *(["--count"] if count else []), *(f"--extra={arg}" for arg in extra)]
        cwd, env = root, {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=cwd, env=env)
    if done.returncode != 0:
        raise SystemExit(f"measuring {root or 'the floor'} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def has_workers_option(root: Path) -> bool:
    return (root / "scorer" / "parallel.py").exists()


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def _each(runs: list[dict]) -> str:
    return ", ".join(f"{run['wall']:.2f}" for run in runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20, help="trace files of 1,800 outputs each")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per checkout (medians are printed)")
    parser.add_argument("--root", type=Path, action="append", help="a checkout to measure (repeatable; "
                        "default: this one)")
    parser.add_argument("--serial", action="store_true", help="also time each checkout that has the option "
                        "with --workers 1")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--traces", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--count", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--extra", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # one measurement, in this fresh process, of the checkout in the working directory
        print(json.dumps(measure(sorted(args.traces.glob("*.jsonl")), args.out, args.count, args.extra)))
        return 0
    if args.floor is not None:
        print(json.dumps(floor(sorted(args.traces.glob("*.jsonl")), args.floor, args.out)))
        return 0

    roots = [root.resolve() for root in (args.root or [HERE])]
    variants = [(root, ()) for root in roots]
    if args.serial:
        variants += [(root, ("--workers", "1")) for root in roots if has_workers_option(root)]
    sys.path.insert(0, str(HERE))
    from common import cpus

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "traces").mkdir()
        paths = write_traces(tmp / "traces", args.files)
        outputs = sum(1 for path in paths for _ in path.open(encoding="utf-8"))
        print(f"trace files: {len(paths)}; outputs: {outputs:,}; runs per checkout: {args.repeat} "
              f"(interleaved with the floor's); CPUs available: {cpus.available()}")
        runs: dict[int, list[dict]] = {i: [] for i in range(len(variants))}
        floors: list[dict] = []
        for n in range(args.repeat):
            for i, (root, extra) in enumerate(variants):
                runs[i].append(run_child(root, tmp / "traces", tmp / f"labels-{i}-{n}", extra=extra))
            floors.append(run_child(None, tmp / "traces", tmp / f"floor-{n}", labels=tmp / "labels-0-0"))
        floor_wall, floor_cpu = _median(floors, "wall"), _median(floors, "cpu")
        print(f"\nfloor (json-parse every trace line, write the labels): median {floor_wall:.2f} s wall "
              f"({_each(floors)}), {floor_cpu:.2f} s CPU")
        for i, (root, extra) in enumerate(variants):
            wall, cpu = _median(runs[i], "wall"), _median(runs[i], "cpu")
            digests = sorted({r["labels"] for r in runs[i]})
            print(f"\n{root}{' ' + ' '.join(extra) if extra else ''}")
            print(f"  seam.py score --no-nli: median {wall:.2f} s wall ({_each(runs[i])}), {cpu:.2f} s CPU; "
                  f"{wall / floor_wall:.1f}x the floor's wall time, {cpu / floor_cpu:.1f}x its CPU time")
            if not extra:
                one = ("--workers", "1") if has_workers_option(root) else ()
                calls = run_child(root, tmp / "traces", tmp / f"labels-{i}-count", count=True, extra=one)["calls"]
                print(f"  normalize() calls: {calls:,}{' (one worker)' if one else ''}")
            print(f"  labels sha256 (all files): {', '.join(digests)}"
                  f"{'' if len(digests) == 1 else ' (DIFFER between runs)'}")
        if len(variants) > 1:
            same = len({r["labels"] for rs in runs.values() for r in rs}) == 1
            print(f"\nlabels identical across checkouts: {'yes' if same else 'NO'}")
    return 0


if __name__ == "__main__":
    if "--child" in sys.argv or "--floor" in sys.argv:  # a measurement: nothing of this checkout imported here
        sys.exit(main())
    sys.path.insert(0, str(HERE))
    from common.pipes import run_main

    sys.exit(run_main(main))
