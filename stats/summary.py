"""A few lines summarising the absorption tables in a folder, for `seam.py tables` and ./reproduce.sh.

    python -m stats.summary data/tables
"""

from __future__ import annotations

import sys
from pathlib import Path

from common.files import read_csv
from common.pipes import run_main


def percent_of_cell(value: str) -> str:
    """A proportion written in a CSV cell as a percentage; an empty cell (no data) as n/a.

    >>> percent_of_cell("0.123456"), percent_of_cell("")
    ('12.3%', 'n/a')
    """
    return f"{100 * float(value):.1f}%" if value else "n/a"


def summary_lines(tables: Path) -> list[str]:
    """Models and conditions, then per model its rates and contrasts (nothing when rates.csv is absent).

    >>> import tempfile
    >>> from stats.labels import label_set_of
    >>> from stats.render import write_table
    >>> from stats.synthetic import label_row
    >>> from stats.tables import build_report
    >>> rows = [label_row("m", f"c{i}", condition, i < 3) for i in range(8) for condition in ("newline", "blank")]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for table in build_report(label_set_of(rows)).tables:
    ...         _ = write_table(Path(tmp), table, command="python seam.py tables")
    ...     for line in summary_lines(Path(tmp)):
    ...         print(line)
    models: 1 (m); conditions: newline, blank
      m: newline 37.5% [13.7%, 69.4%] n=8; blank 37.5% [13.7%, 69.4%] n=8
      m newline vs blank: b=0 c=0 p_holm=1 significant=false direction=none
      Compared with a bare line break, a blank line gives no significant reduction of absorption in any model ...
      sensitivity: 1 of 1 alternative rows keep the reference's direction and significance
    """
    tables = Path(tables)
    if not (tables / "rates.csv").exists():
        return []
    rates = read_csv(tables / "rates.csv")
    models = sorted({r["model"] for r in rates})
    conditions = list(dict.fromkeys(r["condition"] for r in rates))
    lines = [f"models: {len(models)} ({', '.join(models)}); conditions: {', '.join(conditions)}"]
    for model in models:
        cells = [f"{r['condition']} {percent_of_cell(r['rate'])} "
                 f"[{percent_of_cell(r['ci_low'])}, {percent_of_cell(r['ci_high'])}] n={r['n']}"
                 for r in rates if r["model"] == model]
        lines.append(f"  {model}: " + "; ".join(cells))
    contrasts = tables / "contrasts.csv"
    if contrasts.exists():
        for row in read_csv(contrasts):
            lines.append(f"  {row['model']} {row['contrast']}: b={row['b']} c={row['c']} "
                         f"p_holm={row['p_holm'] or 'n/a'} significant={row['significant']} "
                         f"direction={row.get('direction') or 'n/a'}")
    headline = tables / "summary.csv"
    if headline.exists():
        lines += [f"  {row['statement']}" for row in read_csv(headline)]
    sensitivity = tables / "sensitivity.csv"
    if sensitivity.exists():
        rows = [row for row in read_csv(sensitivity) if row["survives"]]
        kept = sum(row["survives"] == "true" for row in rows)
        lines.append(f"  sensitivity: {kept} of {len(rows)} alternative rows keep the reference's direction and "
                     "significance")
    notes = tables / "notes.md"
    if notes.exists() and "entailment" in notes.read_text(encoding="utf-8").lower():
        lines.append(f"  note: see {notes} for which scorer tiers ran")
    return lines


def main(argv: list[str]) -> int:
    """`python -m stats.summary TABLES_DIR`: print its summary lines (a blank line for a folder without tables).

    >>> main(["no-such-folder"])
    <BLANKLINE>
    0
    """
    if len(argv) != 1:
        sys.exit("usage: python -m stats.summary TABLES_DIR")
    print("\n".join(summary_lines(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(lambda: main(sys.argv[1:])))
