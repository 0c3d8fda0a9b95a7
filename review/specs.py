"""The review report's vocabulary: every table `seam.py review report` writes, its columns named, typed and
headed once, as stats/specs.py does for the absorption tables. review/tables.py builds the tables from these
specs, the HTML report reads them with `stats.schema.read_table`, and docs/FORMATS.md lists exactly these
columns (tests/test_table_specs.py keeps the two equal).

    CONFUSION   review_confusion.csv   kit verdict x reviewer verdict, counts of the sample
    ESTIMATES   review_estimates.csv   precision, recall, agreement, kit and true absorption rate
    CONDITIONS  review_conditions.csv  per condition: misses, false positives, miss rate, precision, true rate
    STRATA      review_strata.csv      the design: population, drawn, answered and found per stratum
    CASES       review_cases.csv       every miss, false positive and unsure answer, by id
    REVIEWERS   review_reviewers.csv   (--second) the two reviewers' answers crossed
"""

from __future__ import annotations

from review.records import VERDICTS
from stats.render import Column
from stats.schema import TableSpec

_MODEL, _CONDITION = Column("model", "Model"), Column("condition", "Condition")


def _interval(prefix: str) -> tuple[Column, Column]:
    return Column(f"{prefix}ci_low", "CI low", "proportion"), Column(f"{prefix}ci_high", "CI high", "proportion")


CONFUSION = TableSpec("review_confusion", (
    Column("kit", "Kit verdict"), Column("cases", "Cases", "int"),
    Column("reviewer_absorbed", "Reviewer: absorbed", "int"),
    Column("reviewer_not_absorbed", "Reviewer: not absorbed", "int"),
    Column("reviewer_unsure", "Reviewer: unsure", "int"), Column("unanswered", "Unanswered", "int")))

ESTIMATES = TableSpec("review_estimates", (
    _MODEL, Column("measure", "Measure"), Column("estimate", "Estimate", "proportion"), *_interval(""),
    Column("n", "n", "int"), Column("effective_n", "Effective n", "float"), Column("method", "Method")))

CONDITIONS = TableSpec("review_conditions", (
    _MODEL, _CONDITION, Column("population", "Outputs", "int"), Column("answered", "Answered", "int"),
    Column("misses", "Misses", "int"), Column("false_positives", "False positives", "int"),
    Column("miss_rate", "Miss rate", "proportion"), *_interval("miss_"),
    Column("precision", "Precision", "proportion"), *_interval("precision_"),
    Column("kit_rate", "Kit rate", "proportion"),
    Column("true_rate", "Reviewer rate", "proportion"), *_interval("true_")))

STRATA = TableSpec("review_strata", (
    _MODEL, Column("verdict", "Kit verdict"), Column("genre", "Genre"), _CONDITION,
    Column("population", "Population", "int"), Column("drawn", "Drawn", "int"), Column("answered", "Answered", "int"),
    Column("unsure", "Unsure", "int"), Column("unanswered", "Unanswered", "int"),
    Column("reviewer_absorbed", "Reviewer: absorbed", "int"), Column("weight", "Weight", "float")))

CASES = TableSpec("review_cases", (
    Column("case", "Case", "int"), _MODEL, Column("id", "Id"), Column("finding", "Finding"),
    Column("kit_tier", "Kit tier"), Column("kit_evidence", "Kit evidence"),
    Column("absorption_kind", "Reviewer: how"), Column("note", "Reviewer's note")))

# `first`'s header names the two reviewers ("ada \ bob"), which review/tables.py fills in (`TableSpec.headed`).
REVIEWERS = TableSpec("review_reviewers", (
    Column("first", "First \\ second"), *(Column(v, v.replace("_", " "), "int") for v in VERDICTS)))

TABLES = (CONFUSION, ESTIMATES, CONDITIONS, STRATA, CASES, REVIEWERS)
