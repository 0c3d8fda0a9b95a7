"""`seam.py occurrence selftest`: how much of the shape the screen finds, on messages whose seam is known.

The screen is a retrieval rule; what it misses never reaches the judge or the
human check, so its recall has to be measured where the answer is known:

* **SEAM's own messages.** Each cluster rendered under the built-in conditions
  is a message whose remark is known exactly (or, under `clean`, absent). A
  message counts as found when the screen makes it a candidate *and* its remark
  span is the comment itself; a `clean` message that becomes a candidate at all
  is a false candidate. The clusters are split into two halves by the SHA-256 of
  `seam-selftest:<cluster>`: the rules were developed looking at the `dev` half
  only, and the `held-out` half measures them.
* **Hand-written conversations** (`occurrence/selftest/*.jsonl`), written for
  these tests and never drawn from a corpus, each by a writer who never saw the
  rules: `dev.jsonl` to `dev-4.jsonl` were used to develop them (each measured once
  before it was looked at), `heldout.jsonl` was never looked at. Each case gives the message and the exact
  remark (or null: nothing of the user's follows the paste).

The goals (docs/OCCURRENCE.md): recall at least 0.90 under newline, blank and
native; at most 0.05 of clean messages flagged; on the hand-written sets recall
at least 0.90 and at most 0.10 of the negatives flagged. Pure counting: the same
rules and messages give the same numbers anywhere.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.seams.segment import find_seam
from occurrence import DEVELOPMENT, HAND_WRITTEN  # noqa: F401 (DEVELOPMENT: the CLI and tests read it here)
from stats.rates import proportion

CASES_DIR = Path(__file__).resolve().parent / "selftest"
HALVES = ("dev", "held-out")
RECALL_GOAL = 0.90  # under newline, blank and native, and on the hand-written positives
RECALL_CONDITIONS = ("newline", "blank", "native")
FLAGGED_GOAL = 0.05  # clean messages flagged
FALSE_GOAL = 0.10  # hand-written negatives flagged


def half_of(cluster: str) -> str:
    """Which half of the clusters a cluster is in: fixed by its id alone, so the split regenerates.

    >>> half_of("humaneval-001"), half_of("humaneval-002")
    ('dev', 'held-out')
    """
    digest = hashlib.sha256(f"seam-selftest:{cluster}".encode()).digest()
    return HALVES[digest[0] & 1]


def found_remark(message: str, remark: str | None) -> bool:
    """Whether the screen makes the message a candidate, and, when the remark is known, cuts exactly it.

    >>> found_remark("Fix this:\\ndef f(x):\\n    return x\\nbtw it's for class", "btw it's for class")
    True
    >>> found_remark("Fix this:\\ndef f(x):\\n    return x", None)
    False
    """
    seam = find_seam(message)
    if seam is None:
        return False
    return remark is None or message[seam.remark_start:seam.remark_end].strip() == remark.strip()


@dataclass(frozen=True)
class Row:
    """One line of the selftest's table: `count` of `n` messages of a set found (positives) or flagged
    (negatives: clean messages, hand-written cases without a remark)."""

    set: str  # "seam" or "hand-written"
    part: str  # a half (dev, held-out, all) or a hand-written file (dev, heldout)
    group: str  # a condition, or "positives" / "negatives"
    measure: str  # "recall" or "flagged"
    count: int
    n: int
    goal: str  # e.g. ">= 0.90", or "" where none is set

    @property
    def share(self) -> float:
        return proportion(self.count, self.n).statistic if self.n else float("nan")

    @property
    def met(self) -> bool | None:
        if not self.goal or not self.n:
            return None
        bound = float(self.goal.split()[1])
        return self.share >= bound if self.goal.startswith(">=") else self.share <= bound


def seam_rows(requests) -> list[Row]:
    """Recall per condition (and clean's flagged share), per half of the clusters and over all of them."""
    tally: dict[tuple[str, str], list[int]] = {}
    order: list[str] = []
    for request in requests:
        if request.condition not in order:
            order.append(request.condition)
        hit = found_remark(request.message, request.comment)
        for part in (half_of(request.cluster), "all"):
            counts = tally.setdefault((part, request.condition), [0, 0])
            counts[0] += hit
            counts[1] += 1
    rows = []
    for part in (*HALVES, "all"):
        for condition in order:
            count, n = tally.get((part, condition), (0, 0))
            if condition == "clean":
                rows.append(Row("seam", part, condition, "flagged", count, n, f"<= {FLAGGED_GOAL:.2f}"))
            else:
                goal = f">= {RECALL_GOAL:.2f}" if condition in RECALL_CONDITIONS else ""
                rows.append(Row("seam", part, condition, "recall", count, n, goal))
    return rows


@dataclass(frozen=True)
class Case:
    id: str
    note: str
    message: str
    remark: str | None


def read_cases(path: Path) -> list[Case]:
    """The hand-written cases of one file; a malformed one is an error naming file, line and field."""
    cases = []
    for line, row in jsonl.read(path):
        where = f"{path}:{line}"
        for field in ("id", "note", "message"):
            if not isinstance(row.get(field), str):
                raise UserError(f"{where}: field {field!r}: expected a string")
        remark = row.get("remark")
        if remark is not None and (not isinstance(remark, str) or not row["message"].rstrip().endswith(remark)):
            raise UserError(f"{where}: field 'remark': expected null or the text the message ends with")
        cases.append(Case(row["id"], row["note"], row["message"], remark))
    return cases


def case_rows(name: str, cases: list[Case]) -> list[Row]:
    """Recall on the cases with a remark, and the share of the others the screen flags."""
    positives = [case for case in cases if case.remark is not None]
    negatives = [case for case in cases if case.remark is None]
    return [Row("hand-written", name, "positives", "recall",
                sum(found_remark(case.message, case.remark) for case in positives), len(positives),
                f">= {RECALL_GOAL:.2f}"),
            Row("hand-written", name, "negatives", "flagged",
                sum(found_remark(case.message, None) for case in negatives), len(negatives),
                f"<= {FALSE_GOAL:.2f}")]


def misses(cases: list[Case]) -> list[str]:
    """One line per hand-written case the screen gets wrong (id, note, what went wrong): for tuning on the dev
    file only."""
    wrong = []
    for case in cases:
        if found_remark(case.message, case.remark) != (case.remark is not None):
            seam = find_seam(case.message)
            what = "missed" if case.remark is not None and seam is None else \
                "wrong seam" if case.remark is not None else "flagged"
            wrong.append(f"{case.id} ({case.note}): {what}")
    return wrong


def selftest(requests, case_files: dict[str, Path]) -> list[Row]:
    """Every row of the selftest: SEAM's messages, then each hand-written file."""
    rows = seam_rows(requests)
    for name, path in case_files.items():
        rows.extend(case_rows(name, read_cases(path)))
    return rows


def table(rows: list[Row]) -> str:
    """The rows as an aligned plain-text table, with the goal and whether it is met."""
    header = ("set", "part", "group", "measure", "found", "share", "goal", "")
    lines = [header]
    for row in rows:
        met = {None: "", True: "ok", False: "MISSED"}[row.met]
        lines.append((row.set, row.part, row.group, row.measure, f"{row.count}/{row.n}",
                      f"{row.share:.3f}" if row.n else "-", row.goal, met))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    padded = ("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) for line in lines)
    return "\n".join(line.rstrip() for line in padded)
