"""A blinded review split into a development half and a held-out half, measured on each: before and after a rescore.

    python scripts/review_halves.py data/review/qwen2.5-coder-1.5b.review.jsonl \
        --drawn data/review/qwen2.5-coder-1.5b.drawn-labels.jsonl --rescored data/labels/qwen2.5-coder-1.5b.jsonl

Rules are developed on one half and measured on the other, so the half a case is in is fixed before anything
is read: case `id` of model `model` is in the development half when the first byte of
SHA-256("seam-review-half:<seed>:<model>:<id>") is even (the seed is the review's own, in its header).
Each half is weighted as a sample of its own: every definite answer of a stratum stands for the stratum's
population (its outputs still usable under the labels measured) over the half's definite answers in it, and
strata the half does not reach are left out (the estimate covers the strata reached). Intervals: Wilson at
Kish's effective n, as `seam.py review report`.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common.pipes import run_main  # noqa: E402
from review import estimate, store  # noqa: E402
from review.unblind import unblind  # noqa: E402

HALVES = ("development", "held-out")


def half_of(seed: int, model: str, request_id: str) -> str:
    """The half a case is in, from the review's seed alone."""
    first = hashlib.sha256(f"seam-review-half:{seed}:{model}:{request_id}".encode()).digest()[0]
    return HALVES[first % 2]


def measures(judged, counts, half: str, seed: int) -> dict:
    mine = [item for item in judged if half_of(seed, item.model, item.id) == half]
    population = {h.key: h.population for h in counts}
    answered: dict = {}
    for item in mine:
        if item.definite:
            answered[item.stratum] = answered.get(item.stratum, 0) + 1
    units = [estimate.Reviewed(population[item.stratum] / answered[item.stratum], item.kit == "absorbed",
                               item.reviewer == "absorbed") for item in mine if item.definite]
    return {"cases": len(mine), "excluded": sum(item.excluded for item in mine),
            "false_positives": sum(item.definite and item.kit == "absorbed" and item.reviewer == "not_absorbed"
                                   for item in mine),
            "misses": sum(item.definite and item.kit == "not_absorbed" and item.reviewer == "absorbed"
                          for item in mine),
            "precision": estimate.precision(units), "recall": estimate.recall(units)}


def shown(result: estimate.Estimate) -> str:
    ci = result.confidence_interval
    return f"{100 * result.statistic:.1f} [{100 * ci.low:.1f}, {100 * ci.high:.1f}] (n = {result.n})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("review")
    parser.add_argument("--drawn", required=True, help="the labels the sample was drawn from")
    parser.add_argument("--rescored", help="later labels of the same outputs, measured on the same answers")
    args = parser.parse_args()
    review = store.read(args.review)
    seed = review.header.seed
    runs = [("drawn", unblind(review, [args.drawn]))]
    if args.rescored:
        runs.append(("rescored", unblind(review, [args.drawn], [args.rescored])))
    print("| half | labels | cases | excluded | false positives | misses | precision [95% CI] | "
          "weighted recall [95% CI] |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for half in HALVES:
        for name, (judged, counts, rescore) in runs:
            versions = ", ".join(rescore.versions) if rescore else ", ".join(sorted({i.label.scorer_version
                                                                                   for i in judged}))
            m = measures(judged, counts, half, seed)
            print(f"| {half} | {name} (scorer_version {versions}) | {m['cases']} | {m['excluded']} | "
                  f"{m['false_positives']} | {m['misses']} | {shown(m['precision'])} | {shown(m['recall'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
