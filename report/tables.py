"""The tables the page is made of, each read once (`stats.schema.read_table`, against the vocabularies of
stats/specs.py and validity/specs.py), so that the page never reads a column by a name no spec defines and a
malformed table is one line naming the file, the line and what was expected.

A folder of `seam.py tables` and `seam.py validity` (or of `seam.py compare`, whose tables have an `origin`
column first) is read whole by `read_folder`; a CSV file no spec names is left out of the page and listed in
`unknown`, for the command to warn about. The review reports' tables (`--review`) are read as written: their
columns are defined where review/report.py builds them, not yet in a vocabulary of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stats import specs as absorption_specs
from stats.render import Table
from stats.schema import TableSpec, read_notes, read_table
from validity import specs as validity_specs

ABSORPTION = {spec.name: spec for spec in absorption_specs.TABLES}
VALIDITY = {spec.name: spec for spec in validity_specs.TABLES}


@dataclass(frozen=True)
class Folder:
    """A folder of tables as read: by name, in file-name order."""

    path: Path
    absorption: dict[str, Table]  # the tables of `seam.py tables` it holds
    validity: dict[str, Table]  # those of `seam.py validity`
    notes: tuple[str, ...] | None  # notes.md's notes; None without one
    unknown: tuple[Path, ...] = ()  # CSV files no spec names

    @property
    def rates(self) -> Table | None:
        return self.absorption.get(absorption_specs.RATES.name)


def read_folder(path: Path) -> Folder:
    """Every table in `path` that a vocabulary defines, and its notes, each file read once."""
    path = Path(path)
    absorption, validity, unknown = {}, {}, []
    for file in sorted(path.glob("*.csv")):
        if file.stem in ABSORPTION:
            absorption[file.stem] = read_table(file, ABSORPTION[file.stem])
        elif file.stem in VALIDITY:
            validity[file.stem] = read_table(file, VALIDITY[file.stem])
        else:
            unknown.append(file)
    notes = read_notes(path / "notes.md") if (path / "notes.md").is_file() else None
    return Folder(path, absorption, validity, notes, tuple(unknown))


def read_reviews(path: Path | None) -> list[tuple[str, list[tuple[str, Table]]]]:
    """Each review report in `path` (a subfolder with review_estimates.csv) by name, with its review_*.csv
    tables by file name, read as written."""
    if path is None:
        return []
    reports = sorted(found.parent for found in Path(path).glob("*/review_estimates.csv"))
    return [(folder.name, [(file.name, read_table(file, TableSpec.as_written(file.stem)))
                           for file in sorted(folder.glob("review_*.csv"))]) for folder in reports]
