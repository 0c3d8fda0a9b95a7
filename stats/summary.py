"""A few lines summarising the absorption tables in a folder, for `seam.py tables` and ./reproduce.sh.

    python -m stats.summary data/tables
"""

from __future__ import annotations

import sys
from pathlib import Path

from common.files import read_csv


def percent(value: str) -> str:
    """A proportion written in a CSV cell as a percentage; an empty cell (no data) as n/a."""
    return f"{100 * float(value):.1f}%" if value else "n/a"


def summary_lines(tables: Path) -> list[str]:
    """Models and conditions, then per model its rates and contrasts (nothing when rates.csv is absent)."""
    tables = Path(tables)
    if not (tables / "rates.csv").exists():
        return []
    rates = read_csv(tables / "rates.csv")
    models = sorted({r["model"] for r in rates})
    conditions = list(dict.fromkeys(r["condition"] for r in rates))
    lines = [f"models: {len(models)} ({', '.join(models)}); conditions: {', '.join(conditions)}"]
    for model in models:
        cells = [f"{r['condition']} {percent(r['rate'])} [{percent(r['ci_low'])}, {percent(r['ci_high'])}] "
                 f"n={r['n']}" for r in rates if r["model"] == model]
        lines.append(f"  {model}: " + "; ".join(cells))
    contrasts = tables / "contrasts.csv"
    if contrasts.exists():
        for row in read_csv(contrasts):
            lines.append(f"  {row['model']} {row['contrast']}: b={row['b']} c={row['c']} "
                         f"p_holm={row['p_holm'] or 'n/a'} significant={row['significant']}")
    notes = tables / "notes.md"
    if notes.exists() and "entailment" in notes.read_text(encoding="utf-8").lower():
        lines.append(f"  note: see {notes} for which scorer tiers ran")
    return lines


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m stats.summary TABLES_DIR")
    print("\n".join(summary_lines(Path(sys.argv[1]))))
