"""Reading a trace file: one final `TraceRow` per request id, and a crash's torn tail refused.

The runner appends one row per finished request (runner/traces.py), so a file
holds complete lines plus, after a kill mid-write, at most one torn last line.
The last row for an id is its final row (earlier ones exist only after a
retry). Every stage reads traces through `read_final` here, in one pass that
also keeps each row's "file:line" for messages; a torn tail is never silently
kept or dropped, but refused with the command that repairs it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from common.errors import UserError
from common.records import TraceRow, shown


@dataclass(frozen=True)
class TornTail:
    """Bytes after the file's last newline: a row cut short by a crash mid-write."""

    line: int
    offset: int
    size: int


@dataclass(frozen=True)
class TraceFile:
    path: Path
    final: dict[str, TraceRow]  # id -> final row, in the order of their lines
    where: dict[str, str]  # id -> "file:line" of its final row
    rows: int  # complete rows in the file
    torn: TornTail | None


def scan(path: str | Path) -> TraceFile:
    """Every complete row of a trace file (a missing file is empty), and any torn tail."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return TraceFile(path, {}, {}, 0, None)
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a trace file (JSON Lines)") from None
    end = data.rfind(b"\n") + 1  # bytes after `end` lack their newline
    complete = data[:end].split(b"\n")[:-1]
    torn = TornTail(line=len(complete) + 1, offset=end, size=len(data) - end) if end < len(data) else None
    final: dict[str, TraceRow] = {}
    where: dict[str, str] = {}
    for index, raw in enumerate(complete):
        location = f"{path}:{index + 1}"
        row = _parse(raw, location)
        final.pop(row.id, None)  # a later row replaces it, and takes its place in the order
        final[row.id] = row
        where[row.id] = location
    return TraceFile(path, final, where, len(complete), torn)


def read_final(path: str | Path) -> TraceFile:
    """The final rows of an existing trace file; a torn tail is a `UserError` saying how to repair it."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no such trace file")
    trace = scan(path)
    if trace.torn:
        raise UserError(torn_message(path, trace.torn))
    return trace


def torn_message(path: Path, torn: TornTail) -> str:
    return (f"{path}:{torn.line}: the last line is torn ({torn.size} bytes without a final newline, "
            "left by a crash mid-write); rerun the same 'seam.py run' command with --move-torn to move "
            "those bytes aside and ask that request again")


def _parse(raw: bytes, where: str) -> TraceRow:
    try:
        row = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise UserError(f"{where}: expected one JSON trace row per line ({shown(str(exc))}); the file is "
                        "damaged in the middle, not just at its end") from None
    if not isinstance(row, dict):
        raise UserError(f"{where}: expected a JSON object, found {type(row).__name__}")
    return TraceRow.from_row(row, where)
