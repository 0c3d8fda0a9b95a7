#!/usr/bin/env python3
"""How long the statistics take at full scale: 20 models x 300 clusters of synthetic labels.

Prints the median of several runs for each stage (reading the labels, the
paired tests, 2,000 comment-pool resamples, all tables with the figure, writing
them), and, side by side, the vectorised resampling against a plain Python loop
over the same draws, per resample. Run: python perf/stats_speed.py [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import jsonl  # noqa: E402
from common.argtypes import positive_int  # noqa: E402
from stats.holm import holm_adjust  # noqa: E402
from stats.labels import load_labels  # noqa: E402
from stats.paired import mcnemar_exact  # noqa: E402
from stats.render import write_tables  # noqa: E402
from stats.resample import comment_pool_resampling  # noqa: E402
from stats.settings import TableSettings  # noqa: E402
from stats.synthetic import synthetic_labels  # noqa: E402
from stats.tables import absorption_contrast_rows, build_report  # noqa: E402

MODELS, CLUSTERS, COMMENTS, RESAMPLES = 20, 300, 30, 2000


def timed(function, repeats):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def plain_loop_resampling(labels, resamples, seed):
    """The obvious implementation: rebuild each resample's clusters and test model by model."""
    import numpy as np

    comments = sorted({c.casual_comment for c in labels.clusters.values() if c.casual_comment})
    members = {c: [k for k, info in labels.clusters.items() if info.casual_comment == c] for c in comments}
    rng = np.random.Generator(np.random.PCG64(seed))
    draws = rng.integers(0, len(comments), size=(resamples, len(comments)))
    for row in draws:
        clusters = [k for g in row for k in members[comments[g]]]
        pvalues = []
        for model in labels.models:
            one, two = labels.outcome(model, "newline"), labels.outcome(model, "boundary")
            b = sum(1 for k in clusters if one.get(k) is True and two.get(k) is False)
            c = sum(1 for k in clusters if one.get(k) is False and two.get(k) is True)
            pvalues.append(mcnemar_exact(b, c).pvalue)
        holm_adjust(pvalues)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=positive_int, default=5)
    args = parser.parse_args()
    rows = synthetic_labels(MODELS, CLUSTERS, comments=COMMENTS, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "labels"
        for model in sorted({r["model"] for r in rows}):
            jsonl.write(directory / f"{model}.jsonl", [r for r in rows if r["model"] == model])
        settings = TableSettings(resamples=RESAMPLES)
        load_s, (labels, digest) = timed(lambda: load_labels([directory]), args.repeats)
        tests_s, contrasts = timed(lambda: absorption_contrast_rows(labels, settings), args.repeats)
        resample_s, _ = timed(lambda: comment_pool_resampling(labels, resamples=RESAMPLES), args.repeats)
        report_s, report = timed(lambda: build_report(labels, settings, labels_sha256=digest), args.repeats)

        def write():
            write_tables(Path(tmp) / "tables", report.tables, command="python perf/stats_speed.py",
                         extra={"rates.svg": report.figure, "contrasts.svg": report.contrasts_figure}, what="tables")

        write_s, _ = timed(write, args.repeats)
        loop_n = 20
        loop_s, _ = timed(lambda: plain_loop_resampling(labels, loop_n, 1), max(1, args.repeats // 2))
    print(f"synthetic labels: {MODELS} models x {CLUSTERS} clusters x 5 conditions = {len(rows)} rows, "
          f"{COMMENTS} casual comments; median of {args.repeats} runs")
    lines = [
        ("read and check labels", load_s),
        (f"paired tests ({len(contrasts)} model x contrast)", tests_s),
        (f"comment-pool resampling x{RESAMPLES}", resample_s),
        ("all tables + figure (tests and resampling included)", report_s),
        ("write CSV, Markdown, LaTeX, SVG", write_s),
        ("end to end: read + tables + write", load_s + report_s + write_s),
    ]
    for name, seconds in lines:
        print(f"  {name:<52} {seconds:7.3f} s")
    vectorised = resample_s / RESAMPLES
    plain = loop_s / loop_n
    print(f"  per resample: vectorised {1e3 * vectorised:.3f} ms vs plain loop {1e3 * plain:.3f} ms "
          f"(ratio {plain / vectorised:.0f}x)")
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
