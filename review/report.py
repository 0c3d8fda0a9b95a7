"""`seam.py review report`: unblind a review and measure the kit against it.

The cases are unblinded by review/unblind.py (the kit's verdicts joined from the labels the review's
header names, or with `--rescored` from a rescore of the same outputs, every table then saying so), the
tables built by review/tables.py from their specs (review/specs.py), and this module puts the two together
with the provenance and writes them, as CSV and Markdown (`stats.render`), with review_provenance.json:

    review_confusion       kit verdict x reviewer verdict, counts of the sample
    review_estimates       precision, recall, agreement, kit and true absorption rate, with intervals
    review_conditions      per condition: misses, false positives, miss rate, precision, true rate
    review_strata          the design: population, drawn, answered and found per stratum
    review_cases           every miss, false positive and unsure answer, by id
    review_reviewers       (with --second) the two reviewers' answers crossed, agreement and Cohen's kappa

The estimators and their intervals are described in `review.estimate`. Same
files in, same bytes out: nothing depends on the clock or the machine.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from review import estimate, store
from review.store import ReviewFile
from review.tables import (
    STRATA_RESCORED_NOTE,
    cases_table,
    conditions_table,
    confusion_table,
    estimates_table,
    reviewers_table,
    shown_estimate,
    strata_table,
)
from review.unblind import unblind, units_of
from stats.render import Table, write_report


@dataclass(frozen=True)
class ReviewReport:
    tables: tuple[Table, ...]
    provenance: dict
    summary: tuple[str, ...]


def _same_sample(first: ReviewFile, second: ReviewFile) -> None:
    if first.header != second.header or first.cases != second.cases:
        raise UserError(f"--second {second.path}: not a copy of the same sample as {first.path} (header or cases "
                        "differ); give the second reviewer a copy of the file before any answer, or draw it again "
                        "with the same command and seed")
    if first.reviewer is not None and first.reviewer == second.reviewer:
        raise UserError(f"--second {second.path}: answered by the same reviewer ({first.reviewer!r}) as {first.path}")


def build(review_path, label_paths, second_path=None, rescored_paths=None) -> ReviewReport:
    """Every table of the report, provenance, and the summary lines printed on the terminal.

    `rescored_paths`: labels whose verdicts to measure instead of those drawn from (`--rescored`).
    """
    review = store.read(review_path)
    judged, counts, rescore = unblind(review, label_paths, rescored_paths)
    units = units_of(judged, counts)
    models = sorted({h.key[0] for h in counts})
    groups = [("all", lambda m: True)] + ([(m, lambda x, m=m: x == m) for m in models] if len(models) > 1 else [])
    estimates = estimates_table(units, counts, groups)
    tables = [confusion_table(judged), estimates, conditions_table(units, judged, counts),
              strata_table(judged, counts, review), cases_table(judged)]
    agreement = None
    if second_path is not None:
        second = store.read(second_path)
        _same_sample(review, second)
        table, agreement = reviewers_table(review, second)
        tables.append(table)
    if rescore is not None:
        note = rescore.note()
        tables = [dataclasses.replace(table, notes=table.notes + (note,)
                                      + ((STRATA_RESCORED_NOTE,) if table.name == "review_strata" else ()))
                  for table in tables]
    answered = sum(item.answer is not None and not item.excluded for item in judged)
    by_measure = {row[1]: row for row in estimates.rows if row[0] == "all"}
    provenance = {
        "review_sha256": hashlib.sha256(Path(review_path).read_bytes()).hexdigest(),
        "reviewer": review.reviewer,
        "cases": len(judged), "answered": answered,
        "unsure": sum(item.reviewer == "unsure" and not item.excluded for item in judged),
        "seed": review.header.seed, "confidence": estimate.CONFIDENCE,
        "labels": [ref.to_row() for ref in review.header.labels],
        "method_weighted": estimate.METHOD,
        "method_sample": "sample proportion, Wilson score interval",
        "precision": _record(by_measure["precision"]), "recall": _record(by_measure["recall"]),
        "second": None if second_path is None else {
            "review_sha256": hashlib.sha256(Path(second_path).read_bytes()).hexdigest(), **agreement},
    }
    if rescore is not None:  # only then: a report of the labels drawn from keeps its bytes
        provenance["rescored"] = rescore.to_row()
    summary = [f"review: {len(judged)} cases, {answered} answered by {review.reviewer or 'nobody yet'} "
               f"({provenance['unsure']} unsure)"]
    if rescore is not None:
        summary.append(f"verdicts from rescored labels ({', '.join(ref.path for ref in rescore.refs)}, "
                       f"scorer_version {', '.join(rescore.versions)}); {len(rescore.changed)} case(s) changed "
                       "verdict since the draw"
                       + (f", {len(rescore.excluded)} excluded (unusable in the rescore)" if rescore.excluded else ""))
    summary.extend(f"{name}: {shown_estimate(by_measure[name])} % (n = {by_measure[name][5]})"
                   for name in ("precision", "recall"))
    if agreement is not None:
        summary.append(tables[-1].notes[0])
    return ReviewReport(tuple(tables), provenance, tuple(summary))


def _record(row: tuple) -> dict:
    return {"estimate": jsonl.number(row[2]), "ci": [jsonl.number(row[3]), jsonl.number(row[4])], "n": row[5],
            "effective_n": jsonl.number(row[6])}


def write(report: ReviewReport, out: Path) -> list[Path]:
    """Write each table as CSV and Markdown, and review_provenance.json, all or nothing."""
    return write_report(out, report.tables, ("review_provenance.json", jsonl.dumps(report.provenance)),
                        "review report files")
