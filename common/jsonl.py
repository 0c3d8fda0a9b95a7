"""JSON Lines reading and writing with the same bytes on every machine.

Every file seam writes (benchmark rows, traces, labels) goes through `dumps`,
so that the same content always gives the same bytes: keys sorted, UTF-8 kept
as is, no spaces after separators, one row per line ending in "\n".
Reading reports the file and line of anything malformed.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from common import files
from common.errors import UserError
from common.reading import SMALL_FILE_BYTES, read_file, unreadable

# A surrogate code point in a str is always a lone one (a pair is one code point): JSON can spell it
# ("\\ud800"), UTF-8 cannot carry it. Defined once, here, the lowest module every reader of text imports.
LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


# `json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))` is this encoder's `encode`; made
# once, not once per row (the labels of a panel of models are tens of thousands of rows).
_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def canonical(value: Any, *, keep_surrogates: bool = False) -> str:
    r"""Canonical JSON text: keys sorted, non-ASCII kept, no spaces after separators.

    A lone surrogate (read from a JSON escape such as "\udc80", which JSON allows) is written as that
    escape again: valid JSON that reads back to the same string, where the raw code point could not be
    written as UTF-8 at all. Every other character is kept as is, so text without one keeps its bytes.
    `keep_surrogates` leaves them raw, for a writer that replaces them itself once encoding fails
    (the runner records U+FFFD and says so in the row).
    """
    text = _CANONICAL.encode(value)
    if keep_surrogates or LONE_SURROGATE.search(text) is None:
        return text
    return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)  # only ever inside a JSON string


class BadJson(ValueError):
    """A JSON text `parse` refused: `reason` in a few words, and the line where `json` knows it."""

    def __init__(self, reason: str, lineno: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.lineno = lineno


def parse(raw: bytes | str) -> Any:
    """`json.loads` of UTF-8 bytes (or text); whatever it cannot take is a `BadJson` saying what.

    Besides malformed JSON, that is invalid UTF-8, nesting deeper than Python's recursion limit
    (a `RecursionError` in `json`) and an integer beyond the interpreter's digit limit (a bare
    `ValueError`): every reader parses through here, so no input ends in a traceback.
    """
    try:
        return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except UnicodeDecodeError as exc:
        raise BadJson(f"not UTF-8 (byte 0x{exc.object[exc.start]:02X} at column {exc.start + 1})") from None
    except json.JSONDecodeError as exc:
        raise BadJson(f"not JSON: {exc.msg} at column {exc.colno}", exc.lineno) from None
    except RecursionError:
        raise BadJson("JSON nested too deeply to read") from None
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
        if "integer string conversion" not in str(exc):
            raise
        raise BadJson(f"a number of more than {sys.get_int_max_str_digits():,} digits") from None


def kind(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages ("found an array")."""
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def load_file(path: str | Path, what: str = "a JSON object") -> dict:
    """A file holding one JSON object (MANIFEST.json, a model's labels.json); anything else is a one-line
    `UserError` naming the file (and the line, where the JSON is malformed) and `what` was expected."""
    path = Path(path)
    data = read_file(path, what, limit=SMALL_FILE_BYTES)
    try:
        value = parse(data)
    except BadJson as exc:
        where = f"{path}:{exc.lineno}" if exc.lineno else str(path)
        raise UserError(f"{where}: {exc.reason}; expected {what}") from None
    if not isinstance(value, dict):
        raise UserError(f"{path}: found {kind(value)}, expected {what}")
    return value


def number(value: float | None) -> float | None:
    """A float as a provenance file holds it: rounded to 6 places, None for a missing or NaN value (which JSON
    cannot hold).

    >>> number(0.1234567), number(float("nan")), number(None)
    (0.123457, None, None)
    """
    return None if value is None or value != value else round(value, 6)


def dumps(row: Any, *, keep_surrogates: bool = False) -> str:
    """One canonical JSON line, newline included."""
    return canonical(row, keep_surrogates=keep_surrogates) + "\n"


def lines_bytes(rows: Iterable[Any]) -> bytes:
    """The UTF-8 bytes of `dumps(row)` for every row, one after another.

    Text holding no lone surrogate (nearly all) is encoded once, whole, without looking for one in each
    row first: UTF-8 cannot carry a surrogate, so the encoding succeeds exactly when there is none. Only
    when it fails are the rows written again through `dumps`, which escapes them.
    """
    rows = list(rows)
    try:
        return "".join([_CANONICAL.encode(row) + "\n" for row in rows]).encode("utf-8")
    except UnicodeEncodeError:
        return "".join([dumps(row) for row in rows]).encode("utf-8")


def write(path: str | Path, rows: Iterable[Any], what: str | None = None) -> None:
    """Write rows to `path` atomically: a crash or a full disk leaves the old file or the new one
    (`files.write_files`; `what` names the rows in its message)."""
    files.write_bytes(path, lines_bytes(rows), what)


def read(path: str | Path, *, allow_torn_tail: bool = False) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each row of a JSON Lines file.

    A line that is not a JSON object is a `UserError` naming file and line.
    With `allow_torn_tail`, a last line without its final newline that does not
    parse is the caller's to handle (a crash mid-write): it is yielded as
    (line number, None) instead of raising.
    """
    path = Path(path)
    data = read_file(path, "a JSON Lines file")
    lines = data.split(b"\n")
    last = len(lines) - 1  # index of the text after the final "\n" ("" if the file ends cleanly)
    for index, raw in enumerate(lines):
        if index == last and raw == b"":
            break
        number = index + 1
        try:
            row = parse(raw)
        except BadJson as exc:
            if allow_torn_tail and index == last:
                yield number, None
                return
            raise UserError(f"{path}:{number}: expected one JSON object per line ({exc.reason})") from None
        if not isinstance(row, dict):
            raise UserError(f"{path}:{number}: expected a JSON object, found {kind(row)}")
        yield number, row


def stream(path: str | Path, what: str, *, max_line_bytes: int,
           blank_lines: str = "skip") -> Iterator[tuple[str, Any]]:
    """("file:line", value) for each line of a JSON Lines file read a line at a time, or of standard input for "-".

    For inputs that may be far larger than memory (a harness's log, a guard's stream of messages), or endless (a
    pipe, /dev/zero): no line longer than `max_line_bytes` is ever read whole, and that is a one-line `UserError`,
    as is a file that cannot be opened or a line that is not JSON, each naming the file and line and `what` it
    was expected to be ("a Batch API file"); a last line that is not JSON and has no line end is said to be cut
    short (a writer stopped mid-line). A blank line is passed over (`blank_lines="skip"`) or refused
    (`"refuse"`). The value is any JSON: its shape is the caller's to check.
    """
    if blank_lines not in ("skip", "refuse"):
        raise ValueError(f"blank_lines={blank_lines!r}: expected 'skip' or 'refuse'")
    name = "<stdin>" if str(path) == "-" else str(path)
    if str(path) == "-":
        source, close = sys.stdin.buffer, False
    else:
        try:
            source, close = open(path, "rb"), True  # noqa: SIM115 (closed below)
        except OSError as exc:
            raise unreadable(name, exc, what) from None
    try:
        number = 0
        while raw := source.readline(max_line_bytes + 1):
            number += 1
            where = f"{name}:{number}"
            if len(raw) > max_line_bytes:  # /dev/zero has no line end: never read more than this of one line
                raise UserError(f"{where}: a line of more than {max_line_bytes:,} bytes; expected {what}")
            if not raw.strip():
                if blank_lines == "refuse":
                    raise UserError(f"{where}: empty line; expected one JSON object per line ({what})")
                continue
            try:
                value = parse(raw)
            except BadJson as exc:
                if not raw.endswith(b"\n"):  # only the last line can end without one: its writer stopped mid-line
                    raise UserError(f"{where}: the last line is cut short ({exc.reason}); the file is incomplete "
                                    f"(its writer stopped while writing it, or it was copied in part); expected "
                                    f"{what}") from None
                raise UserError(f"{where}: expected one JSON object per line ({exc.reason}) ({what})") from None
            yield where, value
    finally:
        if close:
            source.close()


def parse_lines(path: str | Path, data: bytes) -> Iterator[tuple[str, dict]]:
    """("file:line", object) for each line of a JSON Lines file's bytes; a line that is not a JSON object is a
    UserError. For readers that check the bytes first (a benchmark partition's checksum, a torn last line).

    Lines end at "\\n" only (as `common.jsonl` writes them), never at the other
    characters `str.splitlines` would split on (U+2028 may sit inside a string).
    """
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        where = f"{path}:{number}"
        try:
            row = parse(raw)
        except BadJson as exc:
            raise UserError(f"{where}: expected one JSON object per line ({exc.reason})") from None
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected a JSON object, found {kind(row)}")
        yield where, row


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
