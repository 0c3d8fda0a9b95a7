"""How a JSON row is checked field by field and written back: the one mechanism of every row format.

The kit's vocabulary (`common.records`: clusters, requests, traces, labels), the
answer files (`common.answerfile`), the review's rows (`review.records`) and the
occurrence audit's (`occurrence.records`) all read their fields through these
checks, so that a malformed row is the same one-line `UserError` wherever it is
read: "file:line: field 'x' is …, expected …" (`where` is the "file:line" the
caller names). And they all write through `Record.to_row`, so that
`to_row(from_row(row)) == row` and a file read and written back keeps its bytes.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, ClassVar

from common.errors import UserError

SHA256_HEX = re.compile(r"[0-9a-f]{64}")  # a SHA-256 as the kit writes it
_SHOWN = 60  # characters of an offending value quoted in a message


def shown(value: Any) -> str:
    """A value for an error message, cut so that a huge field never floods the terminal.

    >>> shown("x" * 100)[-20:]
    'xx… (102 characters)'
    """
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"… ({len(text):,} characters)"


def field(row: dict, name: str, kinds: tuple, where: str, expected: str) -> Any:
    """row[name] if it is one of `kinds` (a bool is never taken for a number); else a UserError naming
    where, the field and what was expected. Every check below goes through it.

    >>> field({"n": True}, "n", (int,), "f.jsonl:3", "a whole number")
    Traceback (most recent call last):
    ...
    common.errors.UserError: f.jsonl:3: field 'n' is True, expected a whole number
    """
    if name not in row:
        raise UserError(f"{where}: field {name!r} is missing, expected {expected}")
    value = row[name]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise UserError(f"{where}: field {name!r} is {shown(value)}, expected {expected}")
    return value


def items(row: dict, name: str, kind: type, where: str, expected: str) -> tuple:
    """row[name], a list whose every element is a `kind`, as a tuple (rows are frozen)."""
    value = field(row, name, (list,), where, expected)
    if not all(isinstance(item, kind) for item in value):
        raise UserError(f"{where}: field {name!r} is {shown(value)}, expected {expected}")
    return tuple(value)


def text(row: dict, name: str, where: str) -> str:
    """row[name], a non-empty string: a name, an id, a time (an empty one would name nothing).

    >>> text({"model": ""}, "model", "f.jsonl:2")
    Traceback (most recent call last):
    ...
    common.errors.UserError: f.jsonl:2: field 'model' is '', expected a non-empty string
    """
    value = field(row, name, (str,), where, "a non-empty string")
    if not value:
        raise UserError(f"{where}: field {name!r} is '', expected a non-empty string")
    return value


def count(row: dict, name: str, where: str, minimum: int = 0) -> int:
    """row[name], a whole number of at least `minimum` (a count, a case number, an offset).

    >>> count({"case": 0}, "case", "f.jsonl:2", 1)
    Traceback (most recent call last):
    ...
    common.errors.UserError: f.jsonl:2: field 'case' is 0, expected a whole number of at least 1
    """
    value = field(row, name, (int,), where, f"a whole number of at least {minimum}")
    if value < minimum:
        raise UserError(f"{where}: field {name!r} is {value}, expected a whole number of at least {minimum}")
    return value


def one_of(row: dict, name: str, allowed: tuple[str, ...], where: str, *, optional: bool = False) -> str | None:
    """row[name], one of the `allowed` words (or null, when `optional`).

    >>> one_of({"verdict": "maybe"}, "verdict", ("yes", "no"), "f.jsonl:4")
    Traceback (most recent call last):
    ...
    common.errors.UserError: f.jsonl:4: field 'verdict' is 'maybe', expected one of yes, no
    """
    expected = "one of " + ", ".join(allowed) + (" or null" if optional else "")
    value = field(row, name, (str, type(None)) if optional else (str,), where, expected)
    if value is not None and value not in allowed:
        raise UserError(f"{where}: field {name!r} is {shown(value)}, expected {expected}")
    return value


def sha256(row: dict, name: str, where: str, *, optional: bool = False) -> str | None:
    """row[name], a SHA-256 as 64 lowercase hex digits (or null, when `optional`): checksums are compared and
    printed, so one that is not a checksum is refused where it is read, not where it fails to match.

    >>> sha256({"sha256": "abc"}, "sha256", "f.jsonl:1")
    Traceback (most recent call last):
    ...
    common.errors.UserError: f.jsonl:1: field 'sha256' is 'abc', expected a SHA-256 (64 lowercase hex digits)
    """
    expected = "a SHA-256 (64 lowercase hex digits)" + (" or null" if optional else "")
    value = field(row, name, (str, type(None)) if optional else (str,), where, expected)
    if value is not None and not SHA256_HEX.fullmatch(value):
        raise UserError(f"{where}: field {name!r} is {shown(value)}, expected {expected}")
    return value


def exact_fields(row: dict, kind: type, where: str, *, allowed: tuple[str, ...] | None = None) -> None:
    """Refuse a row with fields its dataclass `kind` does not have (or, given `allowed`, other fields than
    those): a typo must not pass for an absent field, and in a file that must hold no message text, no field
    can carry text in unnoticed.

    >>> @dataclasses.dataclass
    ... class Point:
    ...     kind: str
    ...     x: int
    >>> exact_fields({"kind": "point", "x": 1, "text": "hello"}, Point, "f.jsonl:5")
    Traceback (most recent call last):
    ...
    common.errors.UserError: f.jsonl:5: unknown field(s) 'text' in a point row
    """
    names = {item.name for item in dataclasses.fields(kind)} if allowed is None else set(allowed)
    extra = sorted(set(row) - names)
    if extra:
        raise UserError(f"{where}: unknown field(s) {', '.join(map(repr, extra))} in a {row.get('kind')} row")


class Record:
    """Base of a frozen dataclass written as one JSON row: `to_row` gives the object it was read from,
    nested records and tuples of them included. Public, so that every row format writes the same way."""

    NESTED: ClassVar[dict[str, type]] = {}
    # Fields written only when set: added to a record after rows without them were released, they are
    # left out when null so that those rows still read and write back to the same bytes.
    WHEN_SET: ClassVar[frozenset[str]] = frozenset()

    def to_row(self) -> dict:
        row = {}
        for item in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, item.name)
            if value is None and item.name in self.WHEN_SET:
                continue
            if isinstance(value, Record):
                value = value.to_row()
            elif isinstance(value, tuple):
                value = [v.to_row() if isinstance(v, Record) else v for v in value]
            row[item.name] = value
        return row
