"""A few lines summarising the validity tables, for `seam.py validity` (from the tables it just computed) and
./reproduce.sh (from a folder of them, read with `stats.schema.read_table`):

    python -m validity.summary data/tables
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from common.pipes import run_main
from stats.render import Table
from stats.schema import read_tables, records
from validity import specs

SYNTAX = ((specs.SYNTAX, "invalid code"), (specs.SYNTAX_AS_RETURNED, "code invalid as returned"))
SUMMARISED = (specs.SYNTAX, specs.SYNTAX_AS_RETURNED, specs.FUNCTIONAL, specs.PROVENANCE_FLAGS, specs.SENSITIVITY)


def summary_lines(tables: Mapping[str, Table]) -> list[str]:
    """One line per model and check among `tables` (by name; nothing without a validity table)."""
    lines = []
    for spec, what in SYNTAX:
        rows = records(tables[spec.name]) if spec.name in tables else ()
        for model in sorted({r.model for r in rows}):
            cells = [f"{r.condition} {r.invalid}/{r.n}" + (f" ({r.recovered} recovered)" if r.recovered else "")
                     for r in rows if r.model == model and r.source == "all"]
            lines.append(f"validity: {model}: {what} {'; '.join(cells)}")
    functional = records(tables[specs.FUNCTIONAL.name]) if specs.FUNCTIONAL.name in tables else ()
    for model in sorted({r.model for r in functional}):
        cells = [f"{r.condition} {r.passed}/{r.n}" for r in functional if r.model == model]
        lines.append(f"validity: {model}: unit tests passed {'; '.join(cells)}")
    if specs.PROVENANCE_FLAGS.name in tables:
        rows = records(tables[specs.PROVENANCE_FLAGS.name])
        flagged = [r.model for r in rows if r.flagged]
        lines.append(f"validity: provenance flags: {len(flagged)} of {len(rows)} models"
                     + (f" ({', '.join(flagged)})" if flagged else ""))
    if specs.SENSITIVITY.name in tables:
        rows = [r for r in records(tables[specs.SENSITIVITY.name]) if r.survives is not None]
        kept = sum(r.survives for r in rows)
        lines.append(f"validity: flagged models left out: {kept} of {len(rows)} contrast rows keep their direction "
                     "and significance")
    return lines


def folder_lines(folder: Path) -> list[str]:
    """`summary_lines` of the validity tables in `folder`, each read once."""
    return summary_lines(read_tables(folder, SUMMARISED))


def main(argv: list[str]) -> int:
    """`python -m validity.summary TABLES_DIR`: print its summary lines."""
    if len(argv) != 1:
        sys.exit("usage: python -m validity.summary TABLES_DIR")
    print("\n".join(folder_lines(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(lambda: main(sys.argv[1:])))
