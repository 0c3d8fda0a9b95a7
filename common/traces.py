"""Reading a trace file: one final `TraceRow` per request id, and a crash's torn tail refused.

The runner appends one row per finished request (runner/traces.py), so a file
holds complete lines plus, after a kill mid-write, at most one torn last line.
The last row for an id is its final row (earlier ones exist only after a
retry). Every stage reads traces through `read_final` here, in one pass that
also keeps each row's "file:line" for messages; a torn tail is never silently
kept or dropped, but refused with the command that repairs it.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.records import TraceRow, shown

_CONTROL = re.compile(rb"[\x00-\x1f]")  # bytes JSON always escapes inside a string, and a row holds no raw one


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
    """Every complete row of a trace file (a missing file is empty), and any torn tail.

    Bytes after the last newline are a torn tail only in a trace file: the complete lines are trace
    rows and the tail is the start of one (it opens with "{", as every row the runner writes). A
    file whose first line is not a JSON object (binary data, another format) is refused as not a
    trace file at all, and a tail that cannot be the start of a row as damage, never as torn.
    """
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
        row = _parse(raw, location, first=index == 0)
        final.pop(row.id, None)  # a later row replaces it, and takes its place in the order
        final[row.id] = row
        where[row.id] = location
    if torn is not None:
        _check_tail(path, data[end:], torn, first=not complete)
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


def model_of(trace: TraceFile) -> str | None:
    """The model every final row of a trace file names (None for a file without rows).

    A trace file is one model's run (`seam.py run` writes one per config), and every stage pairs a
    file with its model (labels are named after it, provenance is per model): a row of another model
    is refused at its file:line rather than mixed in.
    """
    model = None
    for rid, row in trace.final.items():
        if model is None:
            model = row.model
        elif row.model != model:
            raise UserError(f"{trace.where[rid]}: model {shown(row.model)}, but earlier rows are {shown(model)}; "
                            "a trace file holds one model's rows (one file per model)")
    return model


def torn_message(path: Path, torn: TornTail) -> str:
    return (f"{path}:{torn.line}: the last line is torn ({torn.size} bytes without a final newline, "
            "left by a crash mid-write); rerun the same 'seam.py run' command with --move-torn to move "
            "those bytes aside and ask that request again")


def _parse(raw: bytes, where: str, *, first: bool) -> TraceRow:
    try:
        row = jsonl.parse(raw)
    except jsonl.BadJson as exc:
        if first:
            raise UserError(f"{where}: not a trace file (JSON Lines): {exc.reason}") from None
        raise UserError(f"{where}: expected one JSON trace row per line ({exc.reason}); the file is "
                        "damaged in the middle, not just at its end") from None
    if not isinstance(row, dict):
        if first:
            raise UserError(f"{where}: not a trace file (JSON Lines): the first line is {jsonl.kind(row)}, "
                            "expected a JSON object")
        raise UserError(f"{where}: expected a JSON object, found {jsonl.kind(row)}")
    return TraceRow.from_row(row, where)


def _check_tail(path: Path, tail: bytes, torn: TornTail, *, first: bool) -> None:
    """Refuse a tail that cannot be a row cut short: one that does not open with "{", or holds bytes
    the runner never writes (a control character, which JSON escapes, or invalid UTF-8; a tail cut
    inside a multi-byte character is fine)."""
    reason = None
    if not tail.startswith(b"{"):
        reason = f"it begins with {shown(tail[:12])}, not with '{{'"
    elif _CONTROL.search(tail):
        reason = "it holds a control character"
    else:
        try:
            codecs.getincrementaldecoder("utf-8")().decode(tail, final=False)
        except UnicodeDecodeError as exc:
            reason = f"it is not UTF-8 (byte 0x{tail[exc.start]:02X} at column {exc.start + 1})"
    if reason is None:
        return
    where = f"{path}:{torn.line}"
    if first:
        raise UserError(f"{where}: not a trace file (JSON Lines): {reason}")
    raise UserError(f"{where}: the last line ({torn.size} bytes without a final newline) is not the start of a "
                    f"trace row: {reason}; the file is damaged, not torn by a crash")
