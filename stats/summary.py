"""A few lines summarising the absorption tables, for `seam.py tables` (from the tables it just computed) and
./reproduce.sh (from a folder of them, read with `stats.schema.read_table`):

    python -m stats.summary data/tables

Both read the same typed rows (`stats.schema.records`) and print each number as its CSV cell has it, so the
lines are the same whether the tables come from memory or from their files.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from common.pipes import run_main
from stats.render import Table, csv_cell
from stats.schema import read_notes, read_tables, records
from stats.specs import CONTRASTS, RATES, RECOVERED, SENSITIVITY, SUMMARY


def percent_of(value: float | None) -> str:
    """A proportion as a percentage of its CSV cell (six decimals); absent (no data) as n/a.

    >>> percent_of(0.1234564), percent_of(None), percent_of(float("nan"))
    ('12.3%', 'n/a', 'n/a')
    """
    cell = csv_cell(value, "proportion")
    return f"{100 * float(cell):.1f}%" if cell else "n/a"


def summary_lines(tables: Mapping[str, Table], notes: Sequence[str] = (), notes_path: Path | None = None
                  ) -> list[str]:
    """Models and conditions, then per model its rates and contrasts (nothing without the rates table);
    `tables` by name, `notes` the data notes (of `notes_path`, which the last line points to).

    >>> from stats.labels import label_set_of
    >>> from stats.synthetic import label_row
    >>> from stats.tables import build_report
    >>> rows = [label_row("m", f"c{i}", condition, i < 3) for i in range(8) for condition in ("newline", "blank")]
    >>> for line in summary_lines({table.name: table for table in build_report(label_set_of(rows)).tables}):
    ...     print(line)
    models: 1 (m); conditions: newline, blank
      m: newline 37.5% [13.7%, 69.4%] n=8; blank 37.5% [13.7%, 69.4%] n=8
      m newline vs blank: b=0 c=0 p_holm=1 significant=false direction=none
      Compared with a bare line break, a blank line gives no significant reduction of absorption in any model ...
      sensitivity: 1 of 1 alternative rows keep the reference's direction and significance
    """
    if RATES.name not in tables:
        return []
    rates = records(tables[RATES.name])
    models = sorted({r.model for r in rates})
    conditions = list(dict.fromkeys(r.condition for r in rates))
    lines = [f"models: {len(models)} ({', '.join(models)}); conditions: {', '.join(conditions)}"]
    for model in models:
        cells = [f"{r.condition} {percent_of(r.rate)} [{percent_of(r.ci_low)}, {percent_of(r.ci_high)}] "
                 f"n={csv_cell(r.n, 'int')}" for r in rates if r.model == model]
        lines.append(f"  {model}: " + "; ".join(cells))
    for row in records(tables[CONTRASTS.name]) if CONTRASTS.name in tables else ():
        lines.append(f"  {row.model} {row.contrast}: b={row.b} c={row.c} "
                     f"p_holm={csv_cell(row.p_holm, 'pvalue') or 'n/a'} "
                     f"significant={csv_cell(row.significant, 'flag')} direction={_direction(row)}")
    lines += [f"  {row.statement}" for row in records(tables[SUMMARY.name])] if SUMMARY.name in tables else []
    for row in records(tables[RECOVERED.name]) if RECOVERED.name in tables else ():
        points = f"{_points(row.reduction)} of {_points(row.oracle_reduction)} points, n={row.n}"
        lines.append(f"  {row.model} {row.recovered}: " + (
            f"recovers {percent_of(row.share)} [{percent_of(row.ci_low)}, {percent_of(row.ci_high)}] of the "
            f"oracle's reduction ({points})" if row.bounded else
            f"no share estimable: the oracle's reduction is not distinguishable from 0 ({points})"))
    if SENSITIVITY.name in tables:
        rows = [row for row in records(tables[SENSITIVITY.name]) if row.survives is not None]
        kept = sum(row.survives for row in rows)
        lines.append(f"  sensitivity: {kept} of {len(rows)} alternative rows keep the reference's direction and "
                     "significance")
    if notes_path is not None and any("entailment" in note.lower() for note in notes):
        lines.append(f"  note: see {notes_path} for which scorer tiers ran")
    return lines


def _points(value: float | None) -> str:
    """A difference of rates in percentage points, from its CSV cell; n/a when absent.

    >>> _points(0.202020), _points(None)
    ('20.2', 'n/a')
    """
    cell = csv_cell(value, "proportion")
    return f"{100 * float(cell):.1f}" if cell else "n/a"


def _direction(row) -> str:
    """The observed direction, said to be only that when the difference is not significant: "raises" alone
    would read as a finding.

    >>> from collections import namedtuple
    >>> Row = namedtuple("Row", "direction significant")
    >>> _direction(Row("raises", True)), _direction(Row("raises", False)), _direction(Row("none", False))
    ('raises', 'raises (observed, not significant)', 'none')
    """
    if not row.direction:
        return "n/a"
    if row.significant or row.direction == "none":
        return row.direction
    return f"{row.direction} (observed, not significant)"


def folder_lines(folder: Path) -> list[str]:
    """`summary_lines` of the tables in `folder` (each read once) and its notes.md.

    >>> folder_lines(Path("no-such-folder"))
    []
    """
    folder = Path(folder)
    notes = folder / "notes.md"
    return summary_lines(read_tables(folder, (RATES, CONTRASTS, SUMMARY, RECOVERED, SENSITIVITY)),
                         read_notes(notes) if notes.is_file() else (), notes)


def main(argv: list[str]) -> int:
    """`python -m stats.summary TABLES_DIR`: print its summary lines (a blank line for a folder without tables).

    >>> main(["no-such-folder"])
    <BLANKLINE>
    0
    """
    if len(argv) != 1:
        sys.exit("usage: python -m stats.summary TABLES_DIR")
    print("\n".join(folder_lines(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(lambda: main(sys.argv[1:])))
