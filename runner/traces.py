"""Writing the trace file: append rows as requests finish, never lose or duplicate a row.

Rows are appended with one `os.write` each to a file opened O_APPEND, so a
killed process leaves complete rows plus at most one torn last line. The last
row for an id is its final row. Reading (final rows, the torn tail) is
`common.traces`, the one reader every stage uses; a torn tail is refused there,
naming file and line, and `seam.py run --move-torn` moves those bytes into
`<out>.torn-<timestamp>` here before continuing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from common import traces as common_traces
from common.errors import UserError
from common.files import make_parent
from common.traces import TornTail

FSYNC_INTERVAL_S = 1.0


def move_torn(path: str | Path, torn: TornTail) -> Path:
    """Move the torn bytes into `<path>.torn-<UTC timestamp>`, then cut them from `path`.

    The copy is made durable before the cut, so a crash in between at worst leaves both.
    """
    path = Path(path)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    aside = path.with_name(f"{path.name}.torn-{stamp}")
    with open(path, "rb") as source:
        source.seek(torn.offset)
        tail = source.read()
    with open(aside, "xb") as f:
        f.write(tail)
        f.flush()
        os.fsync(f.fileno())
    with open(path, "r+b") as f:
        f.truncate(torn.offset)
        f.flush()
        os.fsync(f.fileno())
    return aside


class TraceWriter:
    """Thread-safe appender: each row is one write(2) of its whole line, flushed to the OS at once.

    A killed process therefore loses no finished row. fsync (against power loss)
    runs at most once per `FSYNC_INTERVAL_S` and on close. The writer holds an
    exclusive lock on the file for its lifetime: a second run on the same trace
    would ask every remaining request again and append a duplicate row for each.
    The kernel drops the lock when the process dies, even by SIGKILL.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        make_parent(self.path)
        try:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except IsADirectoryError:
            raise UserError(f"{self.path}: is a directory, expected a trace file (JSON Lines)") from None
        try:
            _lock(self.fd)
        except BlockingIOError:
            os.close(self.fd)
            raise UserError(f"{self.path}: another 'seam.py run' is appending to this trace; let it "
                            "finish (or stop it), then run again") from None
        self.lock = threading.Lock()
        self.last_sync = time.monotonic()

    def append(self, line: str) -> None:
        if not line.endswith("\n") or "\n" in line[:-1]:
            raise ValueError("a trace row must be exactly one line ending in a newline")
        data = line.encode("utf-8")
        with self.lock:
            if self.fd < 0:
                raise RuntimeError(f"{self.path}: trace writer already closed")
            view = memoryview(data)
            while view:
                written = os.write(self.fd, view)
                view = view[written:]
            if time.monotonic() - self.last_sync >= FSYNC_INTERVAL_S:
                os.fsync(self.fd)
                self.last_sync = time.monotonic()

    def close(self) -> None:
        with self.lock:
            if self.fd >= 0:
                os.fsync(self.fd)
                os.close(self.fd)
                self.fd = -1

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _lock(fd: int) -> None:
    """An exclusive, non-blocking advisory lock (BlockingIOError if held); a no-op without fcntl."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        return
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


# --- compatibility: the dict readers scorer/ and validity/ still call -----------------------------------
# The runner's former reader, unchanged (it checks only id and status, as those stages' tests expect) and
# unused by the runner; revert this commit once scorer/ and validity/ read through common.traces (issue 12).

_STATUSES = ("ok", "unusable", "failed")


@dataclass(frozen=True)
class TraceState:
    final: dict  # id -> final row
    lines: dict  # id -> line number of its final row
    rows: int  # complete rows in the file
    torn: TornTail | None


def scan(path: str | Path) -> TraceState:
    """Read a trace file (a missing one is empty): its final rows and any torn tail."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return TraceState(final={}, lines={}, rows=0, torn=None)
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a trace file (JSON Lines)") from None
    end = data.rfind(b"\n") + 1  # bytes after `end` lack their newline
    complete = data[:end].split(b"\n")[:-1]
    torn = TornTail(line=len(complete) + 1, offset=end, size=len(data) - end) if end < len(data) else None
    final, lines = {}, {}
    for index, raw in enumerate(complete):
        number = index + 1
        row = _parse_row(path, number, raw)
        final[row["id"]] = row
        lines[row["id"]] = number
    return TraceState(final=final, lines=lines, rows=len(complete), torn=torn)


def final_rows(path: str | Path) -> dict[str, dict]:
    """One final row (the last one) per request id. A torn tail is a `UserError`.

    Each row has at least: id, cluster, condition, model, status ("ok" |
    "unusable" | "failed"), output, reason, served_model, finish_reason, usage,
    request, attempts, benchmark_sha256 (docs/RUNNER.md lists every field).
    """
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no such trace file")
    state = scan(path)
    if state.torn:
        raise UserError(common_traces.torn_message(path, state.torn))
    return state.final


def _parse_row(path: Path, number: int, raw: bytes) -> dict:
    try:
        row = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}:{number}: expected one JSON trace row per line ({exc}); the file is "
                        "damaged in the middle, not just at its end") from None
    if not isinstance(row, dict):
        raise UserError(f"{path}:{number}: expected a JSON object, found {type(row).__name__}")
    if not isinstance(row.get("id"), str) or row.get("status") not in _STATUSES:
        raise UserError(f"{path}:{number}: expected a trace row with a string 'id' and a 'status' of "
                        f"{', '.join(_STATUSES)}")
    return row
