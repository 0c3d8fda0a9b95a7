#!/usr/bin/env python3
"""Lexical-tier scoring throughput on a synthetic full-size trace set (1,800 outputs).

Takes the committed benchmark's 1,800 request rows (or, when data/benchmark is
absent, 300 synthetic clusters) and one model's synthetic replies to them
(scorer/synthetic.py: fences, preambles, notes, absorbed remarks), then times
`scorer.score.score` with the entailment tier off: pairing, extraction, witness
and content tiers, label rows. Prints the
median of several runs. Not a test: nothing is asserted about speed.

    python perf/scorer_lexical.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scorer import extract, synthetic, tiers  # noqa: E402
from scorer.inputs import read_requests, read_traces  # noqa: E402
from scorer.score import labels_bytes, score  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        print(f"inputs: {synthetic.write_full_set(tmp / 'req.jsonl', tmp / 'tr.jsonl')}")
        read_times, score_times, digests = [], [], set()
        for _ in range(args.repeat):
            tiers._unit_words.cache_clear()  # each run starts cold, as a fresh process would
            extract._artifact_words.cache_clear()
            start = time.perf_counter()
            requests = read_requests(tmp / "req.jsonl")
            traces = read_traces(tmp / "tr.jsonl")
            middle = time.perf_counter()
            result = score(traces, requests, None)
            end = time.perf_counter()
            read_times.append(middle - start)
            score_times.append(end - middle)
            digests.add(labels_bytes(result.labels))
        outputs = len(traces.rows)
        read_s, score_s = statistics.median(read_times), statistics.median(score_times)
        print(f"trace outputs: {outputs}; label rows: {len(result.labels)}; runs: {args.repeat}")
        print(f"read inputs: median {read_s * 1000:.1f} ms")
        print(f"score (lexical tiers): median {score_s * 1000:.1f} ms = {outputs / score_s:,.0f} outputs/s")
        print(f"read + score: {outputs / (read_s + score_s):,.0f} outputs/s")
        print(f"labels identical across runs: {len(digests) == 1}")
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
