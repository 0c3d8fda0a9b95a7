#!/usr/bin/env python3
"""How many entailment calls the clean-diff rule, lexical-first order and the cache avoid.

Counts (premise, hypothesis) pairs on the usable prose rows of a trace set:
  every sentence    each sentence of the treatment's edited text (no clean-diff rule)
  clean-diff        only sentences absent from the clean edited text, on every row
  + lexical first   the same, only on rows the witness and content tiers left undecided
  + distinct        distinct pairs among those (what is sent to the cache)
  computed, run 1   pairs the model actually ran with an empty cache
  computed, run 2   pairs the model ran when rescoring with that cache
Runs the real code path with the tiny fixture model (tests/fixtures/tiny-deberta)
unless --model-dir names another. By default on synthetic replies to the
committed benchmark's 1,800 requests (scorer/synthetic.py); pass --traces and
--requests for real traces.

    python perf/scorer_calls.py [--traces T.jsonl --requests R.jsonl] [--model-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scorer import synthetic  # noqa: E402
from scorer.entailment import ModelEntailer  # noqa: E402
from scorer.inputs import read_items, read_traces  # noqa: E402
from scorer.nli_cache import NliCache  # noqa: E402
from scorer.score import labels_bytes, score  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path)
    parser.add_argument("--requests", type=Path)
    parser.add_argument("--model-dir", type=Path, default=ROOT / "tests" / "fixtures" / "tiny-deberta")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.traces is None:
            print(f"inputs: {synthetic.write_full_set(tmp / 'req.jsonl', tmp / 'tr.jsonl')}")
            args.traces, args.requests = tmp / "tr.jsonl", tmp / "req.jsonl"
        items = read_items(args.requests)
        traces = read_traces(args.traces)
        runs = []
        for _ in range(2):
            entailer = ModelEntailer(args.model_dir, NliCache(tmp / "cache.sqlite"), threads=2)
            start = time.perf_counter()
            result = score(traces, items, entailer)
            runs.append((entailer, result, time.perf_counter() - start))
        s = result.stats
        prose = sum(1 for label in result.labels if label.genre == "prose" and label.usable)
        print(f"{args.traces}: {len(result.labels)} treatment rows, {prose} usable prose rows")
        print(f"  every sentence    {s.sentences:6d} pairs")
        print(f"  clean-diff        {s.premises_all:6d} pairs  (avoids {s.sentences - s.premises_all})")
        print(f"  + lexical first   {s.premises_needed:6d} pairs  (avoids {s.premises_all - s.premises_needed} more)")
        print(f"  + distinct        {s.unique_pairs:6d} pairs  (avoids {s.premises_needed - s.unique_pairs} more)")
        for n, (entailer, _, seconds) in enumerate(runs, 1):
            opened = "opened" if entailer.session is not None else "never opened"
            print(f"  computed, run {n}   {entailer.computed:6d} pairs  ({entailer.cache_hits} from the cache; "
                  f"model {opened}; scoring took {seconds:.2f} s with the tiny model)")
        print(f"  labels identical between the runs: {labels_bytes(runs[0][1].labels) == labels_bytes(result.labels)}")
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
