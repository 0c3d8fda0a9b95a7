"""JSON Lines reading and writing with the same bytes on every machine.

Every file seam writes (benchmark rows, traces, labels) goes through `dumps`,
so that the same content always gives the same bytes: keys sorted, UTF-8 kept
as is, no spaces after separators, one row per line ending in "\n".
Reading reports the file and line of anything malformed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from common import files
from common.errors import UserError


def canonical(value: Any) -> str:
    """Canonical JSON text: keys sorted, non-ASCII kept, no spaces after separators."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def dumps(row: Any) -> str:
    """One canonical JSON line, newline included."""
    return canonical(row) + "\n"


def write(path: str | Path, rows: Iterable[Any]) -> None:
    """Write rows to `path` atomically: a crash leaves the old file or the new one."""
    files.write_text(path, "".join(dumps(row) for row in rows))


def read(path: str | Path, *, allow_torn_tail: bool = False) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each row of a JSON Lines file.

    A line that is not a JSON object is a `UserError` naming file and line.
    With `allow_torn_tail`, a last line without its final newline that does not
    parse is the caller's to handle (a crash mid-write): it is yielded as
    (line number, None) instead of raising.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a JSON Lines file") from None
    lines = data.split(b"\n")
    last = len(lines) - 1  # index of the text after the final "\n" ("" if the file ends cleanly)
    for index, raw in enumerate(lines):
        if index == last and raw == b"":
            break
        number = index + 1
        try:
            row = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            if allow_torn_tail and index == last:
                yield number, None
                return
            raise UserError(f"{path}:{number}: expected one JSON object per line ({exc})") from None
        if not isinstance(row, dict):
            raise UserError(f"{path}:{number}: expected a JSON object, found {type(row).__name__}")
        yield number, row


def files_named(paths, what: str) -> list[Path]:
    """The JSON Lines files named, a directory standing for its `*.jsonl` files (sorted).

    `what` names the kind of file in messages ("label", "trace").
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            inside = sorted(path.glob("*.jsonl"))
            if not inside:
                raise UserError(f"{path}: directory has no *.jsonl {what} files")
            found.extend(inside)
        elif path.exists():
            found.append(path)
        else:
            raise UserError(f"{path}: no such file or directory")
    if not found:
        raise UserError(f"no {what} files given")
    return found
