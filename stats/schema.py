"""Tables with a schema: a table's columns are defined once, as a `TableSpec` (stats/specs.py for the absorption
tables, validity/specs.py, review/specs.py and occurrence/specs.py for theirs), and read back by one reader,
`read_table`.

A CSV table is an interface between stages (the report, the summaries, a reader's own analysis), so it gets
what `common.records` gives the JSON Lines rows: the builders make their tables from the spec, and
`read_table` checks a file's header against it and gives typed rows (ints, floats, true/false, text; None
for an empty cell, "not computed"), with a one-line error naming file, line and what was expected. The
rows it gives are the values the CSV holds at its precision, so that `to_csv` of a table read is the file's
bytes again, and a summary made from them is the summary made from the tables in memory (`records`).
notes.md, the tables' other text file, is written and read here too (`notes_text`, `read_notes`).
"""

from __future__ import annotations

import collections
import csv
import functools
import io
import math
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from common.errors import UserError
from common.reading import SMALL_FILE_BYTES, read_file
from common.records import shown
from stats.render import FORMULA_START, Column, Table, csv_cell

# `seam.py compare` puts this column first in every table (released or yours); any table may carry it, so
# that the report, which stands below compare, reads a compare folder's tables like the release's.
ORIGIN = Column("origin", "Origin")
EXPECTED = {"text": "text", "int": "a whole number", "proportion": "a number", "pvalue": "a number",
            "flag": "true or false", "float": "a number"}
_INT = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_FLAGS = {"true": True, "false": False}


@dataclass(frozen=True)
class Repeated:
    """Columns that stand once per value the data decides (the clusters table: a pair per condition). Each
    key and header holds `{}` where the value goes; `what` names the value in docs/FORMATS.md (`<condition>`)."""

    what: str
    columns: tuple[Column, ...]

    def __post_init__(self):
        for column in self.columns:
            if column.key.count("{}") != 1:
                raise ValueError(f"repeated column {column.key!r}: expected one {{}} where the {self.what} goes")

    def of(self, value: str) -> tuple[Column, ...]:
        return tuple(replace(c, key=c.key.format(value), header=c.header.format(value)) for c in self.columns)

    def value_of(self, key: str) -> tuple[str, int] | None:
        """(value, which column) when `key` is one of these columns for some value, else None."""
        for index, column in enumerate(self.columns):
            before, after = column.key.split("{}")
            if len(key) > len(before) + len(after) and key.startswith(before) and key.endswith(after):
                return key[len(before):len(key) - len(after)], index
        return None


@dataclass(frozen=True)
class TableSpec:
    """One table's name and columns (key, header, kind), in CSV order; `Repeated` parts stand for columns
    that depend on the data."""

    name: str
    parts: tuple[Column | Repeated, ...]

    @property
    def columns(self) -> tuple[Column, ...]:
        """The columns of a table without repeated parts."""
        if any(isinstance(part, Repeated) for part in self.parts):
            raise ValueError(f"table {self.name}: its columns depend on the data; use columns_for")
        return self.parts

    def columns_for(self, values: Iterable[str]) -> tuple[Column, ...]:
        """The columns with each repeated part written out for each of `values`, in their order."""
        values = tuple(values)
        return tuple(column for part in self.parts
                     for column in ((part,) if isinstance(part, Column) else
                                    tuple(c for value in values for c in part.of(value))))

    def headed(self, **headers: str) -> tuple[Column, ...]:
        """The columns, some with the header their builder words (resolution: the paper's n and K)."""
        unknown = set(headers) - {c.key for c in self.columns}
        if unknown:
            raise ValueError(f"table {self.name}: no column {', '.join(sorted(unknown))}")
        return tuple(replace(c, header=headers.get(c.key, c.header)) for c in self.columns)

    def table(self, title: str, rows, notes=(), display: Table | None = None, *, columns=None) -> Table:
        """A table of this spec (its columns, or `columns` as `columns_for` or `headed` gave them)."""
        return Table(self.name, title, self.columns if columns is None else tuple(columns), tuple(rows),
                     tuple(notes), display)

    def documented(self) -> list[str]:
        """The column names as docs/FORMATS.md lists them: each key, `<condition>_absorbed` for a repeated one."""
        return [column.key if isinstance(part, Column) else column.key.format(f"<{part.what}>")
                for part in self.parts for column in ((part,) if isinstance(part, Column) else part.columns)]

    def match(self, header: list[str], where: str) -> tuple[Column, ...]:
        """The columns of a file with this header (an `origin` first allowed), in the header's order (a
        repeated part's columns may stand after the others: compare appends the conditions only the user's
        model has), or a UserError saying what was expected."""
        expected = f"expected the {self.name} table's columns: {', '.join(self.documented())}"
        lead = (ORIGIN,) if header[:1] == [ORIGIN.key] and self.parts[:1] != (ORIGIN,) else ()
        fixed = {part.key: part for part in self.parts if isinstance(part, Column)}
        repeated = [part for part in self.parts if isinstance(part, Repeated)]
        columns: list[Column] = []
        groups: dict[tuple[int, str], Repeated] = {}
        for position, name in enumerate(header[len(lead):], start=len(lead) + 1):
            found = next(((part, hit) for part in repeated if (hit := part.value_of(name))), None)
            if name in fixed:
                columns.append(fixed[name])
            elif found is not None:
                part, (value, index) = found
                groups[(repeated.index(part), value)] = part
                columns.append(part.of(value)[index])
            else:
                raise UserError(f"{where}: column {position} is {shown(name)}, {expected}")
        keys = [column.key for column in columns]
        twice = sorted({key for key in keys if keys.count(key) > 1})
        wanted = [key for (_, value), part in groups.items() for key in (c.key for c in part.of(value))]
        missing = [key for key in (*fixed, *wanted) if key not in keys]
        if twice or missing:
            problem = (f"column {shown(twice[0])} stands twice" if twice
                       else f"no column {', '.join(map(repr, missing))}")
            raise UserError(f"{where}: {problem}, {expected}")
        if [key for key in keys if key in fixed] != list(fixed):
            raise UserError(f"{where}: the columns are out of order, {expected}")
        return (*lead, *columns)


def parse_cell(cell: str, column: Column, where: str):
    """A CSV cell as the value `csv_cell` wrote it from: None when empty, else by the column's kind (a text
    cell without the apostrophe `spreadsheet_safe` put before a formula-like start).

    >>> parse_cell("0.250000", Column("rate", "Rate", "proportion"), "x:2"), parse_cell("", Column("n", "n", "int"), "")
    (0.25, None)
    >>> parse_cell("yes", Column("significant", "Sig.", "flag"), "x.csv:3")
    Traceback (most recent call last):
    common.errors.UserError: x.csv:3: column 'significant' is 'yes', expected true or false
    """
    if cell == "":
        return None
    kind = column.kind
    if kind == "text":
        return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_START) else cell
    if kind == "int" and _INT.fullmatch(cell):
        try:
            return int(cell)
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits(), 4,300 by default)
            raise UserError(f"{where}: column {column.key!r} is a whole number of {len(cell.lstrip('-')):,} digits, "
                            f"more than can be read; expected {EXPECTED[kind]} of at most "
                            f"{sys.get_int_max_str_digits():,} digits") from None
    if kind in ("proportion", "pvalue", "float") and _NUMBER.fullmatch(cell) and math.isfinite(float(cell)):
        return float(cell)
    if kind == "flag" and cell in _FLAGS:
        return _FLAGS[cell]
    raise UserError(f"{where}: column {column.key!r} is {shown(cell)}, expected {EXPECTED[kind]}")


@functools.cache
def _record_type(keys: tuple[str, ...]) -> type:
    # rename: a key that is no Python name (a condition's `xml-tags_absorbed`) gets a positional one
    return collections.namedtuple("Row", keys, rename=True)


def records(table: Table) -> tuple:
    """The rows as named tuples (`row.rate`), by the table's column keys: a table read by `read_table` has
    them already, one built in memory gets them here, so a summary reads the two alike.

    >>> records(Table("t", "T", (Column("model", "Model"), Column("n", "n", "int")), (("a", 1),)))[0].n
    1
    """
    kind = _record_type(tuple(column.key for column in table.columns))
    return tuple(row if isinstance(row, kind) else kind(*row) for row in table.rows)


def origin_of(row) -> str | None:
    """The row's `origin` in a table of `seam.py compare`; None in any other.

    >>> model = Column("model", "Model")
    >>> [origin_of(records(Table("t", "T", columns, (row,)))[0])
    ...  for columns, row in (((ORIGIN, model), ("yours", "m")), ((model,), ("m",)))]
    ['yours', None]
    """
    return getattr(row, ORIGIN.key, None)


def read_table(path: str | Path, spec: TableSpec) -> Table:
    """The table in a CSV file, its header checked against `spec` and each cell parsed by its column's kind;
    anything else is one UserError naming the file, the line and what was expected.

    >>> import tempfile
    >>> from stats.specs import RATES
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "rates.csv").write_text("model,condition,n,absorbed,rate,ci_low,ci_high,entailment_not_run\\n"
    ...                                          "m,newline,8,3,0.375000,0.136830,0.694313,0\\n")
    ...     (row,) = read_table(Path(tmp, "rates.csv"), RATES).rows
    >>> row.model, row.n, row.rate
    ('m', 8, 0.375)
    """
    path = Path(path)
    try:
        text = read_file(path, f"the {spec.name} table (CSV)", limit=SMALL_FILE_BYTES).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: byte {exc.start} is not UTF-8, expected the {spec.name} table (CSV)") from None
    return parse_table(text, spec, str(path))


def parse_table(text: str, spec: TableSpec, path: str) -> Table:
    """`read_table` of a CSV text (named `path` in messages): a table as a reader of its file will see it, at
    the file's precision, e.g. to draw a figure from exactly the numbers written beside it.

    >>> from stats.specs import RATES
    >>> parse_table("model,condition,n,absorbed,rate,ci_low,ci_high,entailment_not_run\\n"
    ...             "m,newline,8,3,0.375000,,,0\\n", RATES, "rates.csv").rows[0].ci_low is None
    True
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None:
            raise UserError(f"{path}:1: no header, expected the {spec.name} table's columns: "
                            f"{', '.join(spec.documented())}")
        columns = spec.match(header, f"{path}:1")
        kind = _record_type(tuple(column.key for column in columns))
        rows, start = [], reader.line_num + 1
        for cells in reader:
            where, start = f"{path}:{start}", reader.line_num + 1
            if len(cells) != len(columns):
                raise UserError(f"{where}: {len(cells)} cells, expected {len(columns)} (the columns of the header)")
            rows.append(kind(*(parse_cell(cell, column, where) for cell, column in zip(cells, columns, strict=True))))
    except csv.Error as exc:
        raise UserError(f"{path}:{reader.line_num}: {exc}, expected a CSV table") from None
    return Table(spec.name, "", columns, tuple(rows))


def as_written(table: Table) -> Table:
    """`table` as a reader of its CSV file sees it (`read_table`): each cell at the precision it is written with
    (`csv_cell`) and read back by its column's kind, so that what is drawn from it is drawn from the file's numbers.

    >>> from stats.specs import RATES
    >>> rates = RATES.table("", [("m", "newline", 3, 1, 1 / 3, 0.06, 0.79, 0)])
    >>> as_written(rates).rows[0].rate
    0.333333
    """
    kind = _record_type(tuple(column.key for column in table.columns))
    where = f"{table.name} (as written)"
    rows = tuple(kind(*(parse_cell(csv_cell(value, column.kind), column, where)
                        for value, column in zip(row, table.columns, strict=True))) for row in table.rows)
    return Table(table.name, "", table.columns, rows)


def read_tables(folder: str | Path, specs: Iterable[TableSpec]) -> dict[str, Table]:
    """Each table of `specs` that `folder` holds (`<name>.csv`), read once, by name.

    >>> from stats.specs import RATES, SUMMARY
    >>> read_tables("no-such-folder", (RATES, SUMMARY))
    {}
    """
    folder = Path(folder)
    return {spec.name: read_table(folder / f"{spec.name}.csv", spec) for spec in specs
            if (folder / f"{spec.name}.csv").is_file()}


NOTES_HEADING = "# Notes on the tables"
NO_NOTES = "No data notes."


def notes_text(notes: Iterable[str]) -> str:
    """notes.md: a heading, then each note as a list item ("No data notes." when there are none).

    >>> print(notes_text(["A note.", "Another."]), end="")
    # Notes on the tables
    <BLANKLINE>
    - A note.
    - Another.
    """
    return f"{NOTES_HEADING}\n\n" + "\n".join(f"- {note}" for note in (tuple(notes) or (NO_NOTES,))) + "\n"


def read_notes(path: str | Path) -> tuple[str, ...]:
    """The notes of a notes.md that `notes_text` wrote (a line that starts no item continues the one before).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "notes.md").write_text(notes_text(["One.", "Two\\nlines."]))
    ...     read_notes(Path(tmp, "notes.md"))
    ('One.', 'Two\\nlines.')
    """
    path = Path(path)
    try:
        lines = read_file(path, "the notes on the tables", limit=SMALL_FILE_BYTES).decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: byte {exc.start} is not UTF-8, expected the notes on the tables") from None
    if lines[:2] != [NOTES_HEADING, ""]:
        raise UserError(f"{path}:1: expected the heading {NOTES_HEADING!r} and a blank line (notes.md of "
                        "'seam.py tables')")
    notes: list[str] = []
    for number, line in enumerate(lines[2:], start=3):
        if line.startswith("- "):
            notes.append(line[2:])
        elif notes and not (line == "" and number == len(lines)):
            notes[-1] += "\n" + line
        elif not notes and line:
            raise UserError(f"{path}:{number}: expected a note ('- ' and its text), got {shown(line)}")
    return tuple(notes)
