#!/usr/bin/env python3
"""Where the guard is right and where it errs, on messages whose artifact and remark are known exactly.

    python scripts/guard_selftest.py                      # SEAM's messages and the hand-written dev part
    python scripts/guard_selftest.py --misses             # the hand-written dev cases it gets wrong
    python scripts/guard_selftest.py --held-out --out data/guard/selftest.txt   # the measurement, held-out too

Two sets (docs/GUARD.md):

* **SEAM's own messages**: each cluster under `newline`, `blank` and `native`
  (the remark is the comment, the artifact the cluster's) and `clean` (no
  remark: marking may only cut the artifact). By half of the clusters, as the
  occurrence selftest splits them: the seam finder's rules were tuned looking
  at the `dev` half only, so the `held-out` half measures them.
* **The hand-written set** (data/guard/handset/cases.jsonl): messages with gold
  artifact and remark texts, written for the guard by a writer who never read
  its rules, split in two by the SHA-256 of `seam-guard-handset:<id>`: `dev` may
  be looked at (`--misses`), `held-out` is never looked at and its counts are
  shown only with `--held-out`, once the rules are settled: the measurement.

A verdict per message (`guard.measure.verdict`): right (artifact wholly inside
the markers, remark wholly outside), artifact cut, remark inside, not marked.
The goals on the held-out hand-written part: right on at least 95% of the
positives, artifact cut on at most 3% of the negatives. Pure counting: the same
rules and messages give the same table anywhere.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark import conditions, dataset  # noqa: E402
from common import jsonl  # noqa: E402
from common.errors import UserError  # noqa: E402
from common.files import write_text  # noqa: E402
from common.pipes import run_main  # noqa: E402
from guard.mark import guard  # noqa: E402
from guard.measure import VERDICTS, verdict  # noqa: E402
from occurrence.selftest import half_of  # noqa: E402
from stats.rates import wilson_interval  # noqa: E402

HANDSET = ROOT / "data" / "guard" / "handset" / "cases.jsonl"
KINDS = ("positive", "negative", "no-paste")
HANDSET_HALVES = ("dev", "held-out")
RIGHT_GOAL = 0.95  # of the held-out positives, right
CUT_GOAL = 0.03  # of the held-out negatives, artifact cut


def handset_half(case_id: str) -> str:
    """Which part of the hand-written set a case is in, fixed by its id alone.

    >>> handset_half("g-001"), handset_half("g-002")
    ('held-out', 'dev')
    """
    digest = hashlib.sha256(f"seam-guard-handset:{case_id}".encode()).digest()
    return HANDSET_HALVES[digest[0] & 1]


@dataclass(frozen=True)
class Case:
    id: str
    kind: str  # positive, negative or no-paste
    message: str
    artifact: tuple[int, int] | None
    remark: tuple[int, int] | None


def _span(where: str, message: str, field: str, text, after: int = 0) -> tuple[int, int] | None:
    if text is None:
        return None
    if not isinstance(text, str) or not text or message.count(text) != 1:
        raise UserError(f"{where}: field {field!r}: expected a text that occurs exactly once in the message")
    start = message.index(text)
    if start < after:
        raise UserError(f"{where}: field {field!r}: expected it after the artifact")
    return start, start + len(text)


def read_handset(path: Path) -> list[Case]:
    """The hand-written cases; a malformed one is one line naming file, line and field."""
    cases = []
    for line, row in jsonl.read(path):
        where = f"{path}:{line}"
        for field in ("id", "kind", "message"):
            if not isinstance(row.get(field), str):
                raise UserError(f"{where}: field {field!r}: expected a string")
        if row["kind"] not in KINDS:
            raise UserError(f"{where}: field 'kind' is {row['kind']!r}, expected one of {', '.join(KINDS)}")
        message = row["message"]
        artifact = _span(where, message, "artifact", row.get("artifact"))
        remark = _span(where, message, "remark", row.get("remark"), artifact[1] if artifact else 0)
        expected = {"positive": (True, True), "negative": (True, False), "no-paste": (False, False)}[row["kind"]]
        if (artifact is not None, remark is not None) != expected:
            raise UserError(f"{where}: a {row['kind']} case has {'an' if expected[0] else 'no'} artifact and "
                            f"{'a' if expected[1] else 'no'} remark")
        cases.append(Case(row["id"], row["kind"], message, artifact, remark))
    return cases


@dataclass(frozen=True)
class Row:
    set: str
    part: str
    group: str
    tally: Counter
    n: int
    goal: str = ""

    def share(self, name: str) -> str:
        count = self.tally[name]
        if not self.n:
            return "-"
        interval = wilson_interval(count, self.n)
        low, high = interval.low, interval.high
        return f"{count}/{self.n} {count / self.n:.3f} [{low:.3f}, {high:.3f}]"


def seam_rows() -> list[Row]:
    """Verdicts on SEAM's messages per condition, by half of the clusters and over all."""
    benchmark, builtin = dataset.load(), conditions.builtin()
    tally: dict[tuple[str, str], Counter] = {}
    for cluster in benchmark.clusters:
        start = len(cluster.instruction) + len(conditions.SEPARATOR)
        artifact = (start, start + len(cluster.artifact))
        for name in ("newline", "blank", "native", "clean"):
            condition = builtin.get(name)
            message = condition.message(cluster)
            trailing = condition.trailing(cluster)
            remark = (len(message) - len(trailing.text), len(message)) if trailing else None
            found = verdict(guard(message), artifact, remark, message)
            for part in (half_of(cluster.cluster), "all"):
                tally.setdefault((part, name), Counter())[found] += 1
    return [Row("seam", part, name, tally[(part, name)], sum(tally[(part, name)].values()))
            for part in ("dev", "held-out", "all") for name in ("newline", "blank", "native", "clean")]


def handset_rows(cases: list[Case], held_out: bool) -> list[Row]:
    """Verdicts on the hand-written set per kind, by part (the held-out part carries the goals; without
    `held_out`, the dev part only)."""
    rows = []
    for part in ((*HANDSET_HALVES, "all") if held_out else ("dev",)):
        for kind in KINDS:
            mine = [c for c in cases if c.kind == kind and part in ("all", handset_half(c.id))]
            tally = Counter(verdict(guard(c.message), c.artifact, c.remark, c.message) for c in mine)
            goal = ""
            if part == "held-out" and kind == "positive":
                goal = f"right >= {RIGHT_GOAL:.2f}"
            elif part == "held-out" and kind == "negative":
                goal = f"artifact cut <= {CUT_GOAL:.2f}"
            rows.append(Row("hand-written", part, kind, tally, len(mine), goal))
    return rows


def met(row: Row) -> str:
    if not row.goal or not row.n:
        return ""
    name, bound = ("right", RIGHT_GOAL) if row.goal.startswith("right") else ("artifact cut", CUT_GOAL)
    share = row.tally[name] / row.n
    return "ok" if (share >= bound if name == "right" else share <= bound) else "MISSED"


def table(rows: list[Row]) -> str:
    """An aligned plain-text table: each verdict's count, share and Wilson 95% interval."""
    header = ("set", "part", "group", *VERDICTS, "goal", "")
    lines = [header]
    for row in rows:
        lines.append((row.set, row.part, row.group, *(row.share(v) for v in VERDICTS), row.goal, met(row)))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    padded = ("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) for line in lines)
    return "\n".join(line.rstrip() for line in padded) + "\n"


def misses(cases: list[Case]) -> list[str]:
    """The cases of the dev part the guard does not get right, by id (for tuning: the held-out part is never
    listed)."""
    wrong = []
    for case in cases:
        if handset_half(case.id) != "dev":
            continue
        found = verdict(guard(case.message), case.artifact, case.remark, case.message)
        harmless = found == "right" or (case.kind != "positive" and found == "not marked")
        if not harmless:
            wrong.append(f"{case.id} ({case.kind}): {found}")
    return wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--handset", default=str(HANDSET), help=f"the hand-written cases (default: {HANDSET})")
    parser.add_argument("--out", default=None, help="write the table here (atomically) instead of stdout")
    parser.add_argument("--misses", action="store_true", help="list the hand-written dev cases it gets wrong")
    parser.add_argument("--held-out", action="store_true",
                        help="count the held-out part too: the measurement, once the rules are settled")
    args = parser.parse_args(argv)
    try:
        cases = read_handset(Path(args.handset))
        if args.misses:
            print("\n".join(misses(cases)))
            return 0
        text = table(seam_rows() + handset_rows(cases, args.held_out))
        if args.out is None:
            sys.stdout.write(text)
        else:
            write_text(args.out, text, "the guard's selftest table")
    except UserError as exc:
        print(f"guard_selftest.py: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
