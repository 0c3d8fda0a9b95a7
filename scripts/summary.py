#!/usr/bin/env python3
"""Print a short summary of a tables folder: models, conditions, headline rates and contrasts.

    python scripts/summary.py data/tables
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def percent(value: str) -> str:
    return f"{100 * float(value):.1f}%" if value else "n/a"


def summary(tables: Path) -> list[str]:
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
        lines.append("  note: see data/tables/notes.md for which scorer tiers ran")
    return lines


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/summary.py TABLES_DIR")
    print("\n".join(summary(Path(sys.argv[1]))))
