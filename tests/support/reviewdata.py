"""Test support for the review: synthetic requests, traces and the labels the real scorer gives them."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from scorer import synthetic

BENCHMARK_SHA = "5" * 64


@dataclass(frozen=True)
class ReviewInputs:
    requests: Path
    traces: Path
    labels: Path


SCRIPT = "<script>alert('seam')</script>"


def make_inputs(folder: Path, *, per_source: int = 8, seed: int = 1, model: str = "synthetic-model",
                script: bool = False) -> ReviewInputs:
    """Requests, one model's synthetic traces, and their labels as `seam.py score --no-nli` writes them.

    With `script`, every usable output ends in a line holding `SCRIPT` (untrusted text the page must show
    as text). Each trace row keeps the synthetic `behaviour` (the ground truth; readers ignore it).
    """
    import seam

    folder.mkdir(parents=True, exist_ok=True)
    clusters = synthetic.clusters(per_source=per_source, seed=0)
    paths = ReviewInputs(folder / "requests.jsonl", folder / f"{model}.traces.jsonl", folder / f"{model}.jsonl")
    jsonl.write(paths.requests, synthetic.request_rows(clusters, BENCHMARK_SHA))
    rows = synthetic.traces(clusters, model=model, seed=seed, benchmark_sha256=BENCHMARK_SHA)
    if script:
        rows = [{**row, "output": row["output"] + "\n" + SCRIPT} if row["status"] == "ok" else row for row in rows]
    jsonl.write(paths.traces, rows)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = seam.main(["score", str(paths.traces), "--requests", str(paths.requests), "--out", str(paths.labels),
                          "--no-nli", "--no-cache"])
    assert code == 0
    return paths
