"""A few lines summarising the validity tables in a folder, for `seam.py validity` and ./reproduce.sh.

    python -m validity.summary data/tables
"""

from __future__ import annotations

import sys
from pathlib import Path

from common.files import read_csv
from common.pipes import run_main


def summary_lines(tables: Path) -> list[str]:
    """One line per check found in `tables` (nothing when no validity table is there)."""
    tables = Path(tables)
    lines = []
    syntax_tables = (("validity_syntax", "invalid code"), ("validity_syntax_as_returned", "code invalid as returned"))
    for name, what in syntax_tables:
        syntax = tables / f"{name}.csv"
        if syntax.exists():
            rows = read_csv(syntax)
            for model in sorted({r["model"] for r in rows}):
                cells = [f"{r['condition']} {r['invalid']}/{r['n']}" + (f" ({r['recovered']} recovered)"
                                                                        if r["recovered"] not in ("", "0") else "")
                         for r in rows if r["model"] == model and r["source"] == "all"]
                lines.append(f"validity: {model}: {what} {'; '.join(cells)}")
    functional = tables / "validity_functional.csv"
    if functional.exists():
        for model in sorted({r["model"] for r in read_csv(functional)}):
            cells = [f"{r['condition']} {r['passed']}/{r['n']}" for r in read_csv(functional) if r["model"] == model]
            lines.append(f"validity: {model}: unit tests passed {'; '.join(cells)}")
    flags = tables / "validity_provenance_flags.csv"
    if flags.exists():
        rows = read_csv(flags)
        flagged = [r["model"] for r in rows if r["flagged"] == "true"]
        lines.append(f"validity: provenance flags: {len(flagged)} of {len(rows)} models"
                     + (f" ({', '.join(flagged)})" if flagged else ""))
    sensitivity = tables / "validity_sensitivity.csv"
    if sensitivity.exists():
        rows = [r for r in read_csv(sensitivity) if r["survives"]]
        kept = sum(r["survives"] == "true" for r in rows)
        lines.append(f"validity: flagged models left out: {kept} of {len(rows)} contrast rows keep their direction "
                     "and significance")
    return lines


def main(argv: list[str]) -> int:
    """`python -m validity.summary TABLES_DIR`: print its summary lines."""
    if len(argv) != 1:
        sys.exit("usage: python -m validity.summary TABLES_DIR")
    print("\n".join(summary_lines(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(lambda: main(sys.argv[1:])))
