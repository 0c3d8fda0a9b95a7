"""`seam.py guard` on files: JSON Lines of messages in, the guard's answer for each out, or one plain message.

Rows are read and written one at a time, so a file of any length streams in
memory of one message. Each input row is checked (a JSON object with a string
or integer `id` and a string `message`); anything else is one line naming the
file, the line and what was expected, and with `--out` nothing is written (the
output is written atomically, whole or not at all).
"""

from __future__ import annotations

import sys
import unicodedata
from dataclasses import dataclass

from common import jsonl, reading
from common.errors import UserError
from common.files import Spool, write_bytes
from guard.mark import BEGIN, END, MITIGATION, Guarded, guard

MAX_LINE_CHARS = 300  # a marker line or a sentence: one short line
MAX_LINE_BYTES = 64 << 20  # an input row: a message far longer than the guard reads (1,000,000 characters)


@dataclass(frozen=True)
class Options:
    open: str
    close: str
    sentence: str | None

    def apply(self, message: str) -> Guarded:
        return guard(message, open=self.open, close=self.close, sentence=self.sentence)


def options(*, open_line: str | None, close_line: str | None, sentence: str | None, mitigation: bool) -> Options:
    """The guard's markers and sentence from the command line, each checked to be one short line of text."""
    chosen = Options(BEGIN if open_line is None else open_line, END if close_line is None else close_line,
                     MITIGATION if mitigation else sentence)
    for option, value in (("--open", chosen.open), ("--close", chosen.close), ("--sentence", chosen.sentence)):
        if value is None:
            continue
        if (not value.strip() or value != value.strip() or len(value) > MAX_LINE_CHARS
                or any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in value)):
            raise UserError(f"{option} is {value[:40]!r}: expected one line of text, not blank, without white space "
                            f"at either end nor control characters, at most {MAX_LINE_CHARS} characters")
    if chosen.open == chosen.close:
        raise UserError(f"--open and --close are both {chosen.open!r}: expected two different lines")
    return chosen


def _name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return reading.read_bytes(path, "one message as UTF-8 text")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a file") from None


def guard_text(path: str, out: str | None, chosen: Options) -> int:
    """One plain message (UTF-8) in; the message to send out, byte for byte; what was done on stderr."""
    data = _read_bytes(path)
    try:
        message = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{_name(path)}: not UTF-8 (byte 0x{data[exc.start]:02X} at offset {exc.start}); "
                        "expected one message as UTF-8 text") from None
    result = chosen.apply(message)
    encoded = result.message.encode("utf-8")
    if out is None:
        sys.stdout.buffer.write(encoded)
        sys.stdout.buffer.flush()
    else:
        write_bytes(out, encoded, "the guarded message")
    said = (f"marked: the paste is characters {result.artifact_start} to {result.artifact_end} of the message"
            if result.marked else f"not marked ({result.reason}): the message is passed unchanged")
    print(f"guard: {said}", file=sys.stderr)
    return 0


def _rows(path: str):
    """(where, row) for each line of a JSON Lines input, streamed."""
    return jsonl.stream(path, "one JSON object per line, each a message of at most a few MB",
                        max_line_bytes=MAX_LINE_BYTES, blank_lines="refuse")


def checked(where: str, row) -> tuple[str | int, str]:
    """The id and message of one input row, or a one-line `UserError`."""
    if not isinstance(row, dict):
        raise UserError(f"{where}: found {jsonl.kind(row)}, expected an object {{\"id\": ..., \"message\": ...}}")
    for key in ("id", "message"):
        if key not in row:
            raise UserError(f"{where}: '{key}' is missing; expected an object {{\"id\": ..., \"message\": ...}}")
    ident, message = row["id"], row["message"]
    if isinstance(ident, bool) or not isinstance(ident, (str, int)):
        raise UserError(f"{where}: 'id' is {jsonl.kind(ident)}, expected a string or a whole number")
    if not isinstance(message, str):
        raise UserError(f"{where}: 'message' is {jsonl.kind(message)}, expected a string")
    return ident, message


def answer(ident: str | int, result: Guarded) -> dict:
    """The output row for one message."""
    return {"id": ident, "marked": result.marked, "artifact_start": result.artifact_start,
            "artifact_end": result.artifact_end, "message": result.message}


def guard_lines(path: str, out: str | None, chosen: Options) -> int:
    """JSON Lines in, JSON Lines out, a row for a row; a count of what was marked on stderr."""
    spool = Spool(out, "the guarded messages") if out is not None else None
    rows = marked = 0
    try:
        for where, row in _rows(path):
            ident, message = checked(where, row)
            result = chosen.apply(message)
            line = jsonl.dumps(answer(ident, result)).encode("utf-8")
            if spool is None:
                sys.stdout.buffer.write(line)
            else:
                spool.add(line)
            rows += 1
            marked += result.marked
    except BaseException:
        if spool is not None:
            spool.discard()
        raise
    if spool is None:
        sys.stdout.buffer.flush()
    else:
        spool.commit(b"")
    print(f"guard: {marked:,} of {rows:,} messages marked", file=sys.stderr)
    return 0
