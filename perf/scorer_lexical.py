#!/usr/bin/env python3
"""Lexical rescoring time: `seam.py score` on many full-size trace files, entailment off.

Writes --files trace files (default 20), each one synthetic model's replies
(scorer/synthetic.py: fences, preambles, notes, absorbed remarks) to the
committed benchmark's 1,800 requests (36,000 outputs by default), then runs
`seam.py score FILES --out-dir DIR --no-nli` in this process --repeat times
(clearing every memo cache of common/ and scorer/ before each run, as a fresh
process would start) and prints the median wall time. One more run, not timed,
counts the calls of `common.normalize.normalize` (through a profile hook on its
code object, so a call is counted however the function was reached). The
SHA-256 over all labels files written lets two checkouts be compared: equal
digests mean byte-identical labels.

Only public, long-standing names are used (seam.main, scorer.synthetic.traces,
benchmark.dataset.load), so the same script measures an older commit side by
side:  git worktree add /tmp/before <commit> && python perf/scorer_lexical.py --root /tmp/before

    python perf/scorer_lexical.py [--files 20] [--repeat 5] [--root DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import statistics
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


def clear_caches() -> None:
    """Empty every functools cache in common/ and scorer/, so each run starts cold."""
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("common", "scorer"):
            for value in vars(module).values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def score(paths: list[Path], out: Path) -> None:
    import seam

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = seam.main(["score", *map(str, paths), "--out-dir", str(out), "--no-nli"])
    if code != 0:
        raise SystemExit(f"seam.py score failed ({code}): {err.getvalue()}")


def count_normalize(paths: list[Path], out: Path) -> int:
    from common import normalize

    target, calls = normalize.normalize.__code__, 0

    def hook(frame, event, arg):
        nonlocal calls
        if event == "call" and frame.f_code is target:
            calls += 1

    clear_caches()
    sys.setprofile(hook)
    try:
        score(paths, out)
    finally:
        sys.setprofile(None)
    return calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20, help="trace files of 1,800 outputs each")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs (the median is printed)")
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "traces").mkdir()
        paths = write_traces(tmp / "traces", args.files)
        outputs = sum(1 for path in paths for _ in path.open(encoding="utf-8"))
        times, digests = [], set()
        for run in range(args.repeat):
            out = tmp / f"labels-{run}"
            clear_caches()
            start = time.perf_counter()
            score(paths, out)
            times.append(time.perf_counter() - start)
            digest = hashlib.sha256()
            for path in sorted(out.glob("*.jsonl")):
                digest.update(path.read_bytes())
            digests.add(digest.hexdigest())
        calls = count_normalize(paths, tmp / "labels-count")
        print(f"checkout: {args.root.resolve()}")
        print(f"trace files: {len(paths)}; outputs: {outputs:,}; runs: {args.repeat}")
        print(f"seam.py score --no-nli: median {statistics.median(times):.2f} s "
              f"(runs: {', '.join(f'{t:.2f}' for t in times)})")
        print(f"normalize() calls in one run: {calls:,}")
        print(f"labels sha256 (all files): {', '.join(sorted(digests))}"
              f"{'' if len(digests) == 1 else ' (DIFFER between runs)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
