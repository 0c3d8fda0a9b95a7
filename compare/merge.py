"""Tables of two origins in one: an `origin` column first, the released rows, then the user's.

Every table of `seam.py tables` and `seam.py validity` is built once per family (`build`) and merged
here, so that a released row is exactly the row the release has, and a user's row exactly what the same
code gives for their models alone; in one family (`--family panel`) there is a single table, and the
origin is read off each row's model.
"""

from __future__ import annotations

from stats.render import Column, Table
from stats.specs import ORIGIN  # first in every table here; the report reads it (stats.schema.origin_of)

RELEASED, YOURS, PANEL = "released", "yours", "panel"


def with_origin(table: Table, origin_of, fixed: str) -> Table:
    """The table with an `origin` column first: each row's model's origin (`origin_of`), or `fixed` for a
    table without a model column (pooled over a family's models).

    >>> t = Table("t", "T", (Column("model", "Model"), Column("n", "n", "int")), (("a", 1), ("b", 2)))
    >>> with_origin(t, {"a": "released", "b": "yours"}.get, "yours").rows
    (('released', 'a', 1), ('yours', 'b', 2))
    """
    keys = [column.key for column in table.columns]
    position = keys.index("model") if "model" in keys else None

    def origin(row) -> str:
        return fixed if position is None else origin_of(row[position]) or fixed

    display = None
    if table.display is not None:
        shown = [column.key for column in table.display.columns]
        at = shown.index("model") if "model" in shown else None
        display = Table(table.display.name, table.display.title, (ORIGIN, *table.display.columns),
                        tuple((fixed if at is None else origin_of(row[at]) or fixed, *row)
                              for row in table.display.rows), table.display.notes)
    return Table(table.name, table.title, (ORIGIN, *table.columns), tuple((origin(row), *row) for row in table.rows),
                 table.notes, display)


def merged(name: str, released: Table | None, yours: Table | None, family_note: str) -> Table:
    """One table of the released rows then the user's (each with its origin), their notes once each, and the
    note saying which Holm family was used.

    >>> a = Table("t", "T", (Column("model", "Model"),), (("x",),), ("n1",))
    >>> b = Table("t", "T", (Column("model", "Model"),), (("y",),), ("n1", "n2"))
    >>> table = merged("t", a, b, "family")
    >>> table.rows, table.notes
    ((('released', 'x'), ('yours', 'y')), ('family', 'n1', 'n2'))
    >>> wide = Table("t", "T", (Column("model", "Model"), Column("blank", "blank", "int")), (("z", 3),))
    >>> merged("t", wide, b, "family").rows  # yours ran without `blank`: its cell is empty
    (('released', 'z', 3), ('yours', 'y', None))
    """
    parts = [with_origin(table, lambda _: None, origin) for table, origin in ((released, RELEASED), (yours, YOURS))
             if table is not None]
    notes = tuple(dict.fromkeys((family_note, *(note for part in parts for note in part.notes))))
    display = None
    if all(part.display is not None for part in parts):
        display = _stacked([part.display for part in parts])
    stacked = _stacked(parts)  # a family without a condition (traces run with --only) leaves its cells empty
    return Table(name, stacked.title, stacked.columns, stacked.rows, notes, display)


def _stacked(tables: list[Table]) -> Table:
    """Tables one above the other, their columns united (a wide table's columns are a family's sources or
    conditions, which may differ): a cell a family has no column for is absent (an empty CSV cell, the
    missing mark on display)."""
    columns: dict[str, Column] = {}
    for table in tables:
        for column in table.columns:
            columns.setdefault(column.key, column)
    rows = []
    for table in tables:
        keys = [column.key for column in table.columns]
        for row in table.rows:
            cells = dict(zip(keys, row, strict=True))
            rows.append(tuple(cells.get(key) for key in columns))  # None: shown as the missing mark
    first = tables[0]
    return Table(first.name, first.title, tuple(columns.values()), tuple(rows), first.notes)


def in_one_family(table: Table, origins: dict[str, str], family_note: str) -> Table:
    """A table of one family (`--family panel`): the origin of each row's model, `panel` for pooled rows.

    >>> t = Table("t", "T", (Column("model", "Model"),), (("x",), ("y",)))
    >>> in_one_family(t, {"x": "released", "y": "yours"}, "note").rows
    (('released', 'x'), ('yours', 'y'))
    """
    table = with_origin(table, origins.get, PANEL)
    return Table(table.name, table.title, table.columns, table.rows, (family_note, *table.notes), table.display)
