"""Attempts sent whose answer a kill may lose: `<trace>.sent`, one JSON line per attempt, written before it is sent.

A trace row is written when its request finishes, so a run killed (or stopped by Ctrl+C or SIGTERM) while
a request is in flight leaves no record that it was sent: the next run asks it again, and a provider that
answered the first time is paid twice. So just before each attempt goes out the runner appends a note here,
`{"id": ..., "sent_at": ...}` (one write(2) to a file opened O_APPEND, which outlives the process however it
dies; not fsync'd, so a power loss may lose the last notes, as it may lose the last rows).

The next run on the trace reads the notes. A note that no row of its id accounts for is an attempt whose
answer was lost: a row accounts for the notes made while it was asked (from its `started_at` to its
`finished_at`) and for those it records as lost attempts (below). When such an id is asked again, its new
row's `attempts` start with one attempt per lost note: its `started_at` the note's time, `latency_s` and
`http_status` null, and `error` starting with LOST. So the trace says the request was sent, and
`seam.py usage` counts the attempt as a request sent whose cost is unknown (`stats.usage`), never as nothing.

An attempt that found no server at all (a connection refused before any answer came: runner.ask) sent
nothing, and its note is withdrawn. At the end of a run, the notes of ids that got a row, or that a row
accounts for, are dropped, and the file is removed when none is left. A torn last line (a kill mid-write) is
ignored (and cut off before the next note is appended); a damaged line is an error naming file and line. A
note that cannot be written (a full disk) stops the run in one line, as a row that cannot be. The file holds
ids and times only, never a key.
Only the runner holding the trace's lock reads or writes it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from common import files, jsonl
from common.errors import UserError
from common.reading import SMALL_FILE_BYTES, read_bytes
from common.records import Attempt, TraceRow, shown
from common.traces import TraceFile
from runner.transport import utc_now

SUFFIX = ".sent"
LOST = ("sent, but the run was stopped before its answer was recorded (killed, Ctrl+C or SIGTERM while it "
        "was in flight); the server may have answered it, and charged for it")


@dataclass(frozen=True)
class Note:
    """An attempt for request `id` went out at `sent_at` (UTC, ISO 8601 with milliseconds)."""

    id: str
    sent_at: str

    def to_row(self) -> dict:
        return {"id": self.id, "sent_at": self.sent_at}


def path_for(out: str | Path) -> Path:
    out = Path(out)
    return out.with_name(out.name + SUFFIX)


def is_lost(attempt: Any) -> bool:
    """Whether an attempt (a row's, as an `Attempt` or its JSON) is one whose answer a stopped run lost."""
    get = attempt.get if isinstance(attempt, dict) else lambda name: getattr(attempt, name, None)
    error = get("error")
    return (isinstance(error, str) and error.startswith(LOST) and get("http_status") is None
            and get("latency_s") is None and get("batch_id") is None)


def lost_attempt(note: Note) -> Attempt:
    return Attempt(started_at=note.sent_at, latency_s=None, http_status=None, error=LOST, retry_after=None,
                   retry_wait_s=None)


def read(path: Path) -> list[Note]:
    """Every complete note in `path` (none if it does not exist); a torn last line is ignored."""
    try:
        data = read_bytes(path, "the runner's notes of requests sent", limit=SMALL_FILE_BYTES)
    except FileNotFoundError:
        return []
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected the runner's notes of requests sent") from None
    notes = []
    for number, raw in enumerate(data[:data.rfind(b"\n") + 1].split(b"\n")[:-1], 1):
        try:
            row = json.loads(raw.decode("utf-8"))
            note = Note(id=row["id"], sent_at=row["sent_at"])
            if not isinstance(note.id, str) or _moment(note.sent_at) is None:
                raise TypeError("id")
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise UserError(f"{path}:{number}: expected a note of a request sent (id, sent_at), found "
                            f"{shown(raw.decode('utf-8', 'replace'))}; the runner writes this file before each "
                            "request it sends: delete it to forget which requests a stopped run had in flight "
                            "(seam.py usage then does not count them)") from None
        notes.append(note)
    return notes


def _moment(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def accounted(note: Note, row: TraceRow | None) -> bool:
    """Whether the final row of the note's id, or one of the earlier rows it keeps, accounts for the note."""
    if row is None:
        return False
    sent = _moment(note.sent_at)
    for earlier in (row.to_row(), *row.previous):
        if not isinstance(earlier, dict):
            continue
        start, end = _moment(earlier.get("started_at")), _moment(earlier.get("finished_at"))
        if start is not None and end is not None and start <= sent <= end:
            return True
        attempts = earlier.get("attempts") if isinstance(earlier.get("attempts"), list) else []
        if any(is_lost(attempt) and attempt.get("started_at") == note.sent_at for attempt in attempts
               if isinstance(attempt, dict)):
            return True
    return False


class SentNotes:
    """The notes of one trace: read at the start of a run, appended to before each attempt, tidied at its end."""

    def __init__(self, out: str | Path, trace: TraceFile):
        self.path = path_for(out)
        self.read = read(self.path)
        self.unaccounted = [note for note in self.read if not accounted(note, trace.final.get(note.id))]
        self.made: list[Note] = []  # this run's notes, less those withdrawn
        self.written = 0  # notes appended this run
        self.lock = threading.Lock()
        self.fd: int | None = None

    def lost(self, request_id: str) -> tuple[Attempt, ...]:
        """The attempts of `request_id` that earlier runs sent and lost the answer of, oldest first."""
        return tuple(lost_attempt(note) for note in self.unaccounted if note.id == request_id)

    def note(self, request_id: str) -> Callable[[], None]:
        """Note, before it is sent, that an attempt of `request_id` goes out now; returns what withdraws the note
        (nothing was sent after all)."""
        note = Note(request_id, utc_now())
        line = jsonl.dumps(note.to_row()).encode("utf-8", "replace")
        with self.lock:
            try:
                if self.fd is None:
                    self.fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
                    _cut_torn(self.fd)
                view = memoryview(line)
                while view:
                    view = view[os.write(self.fd, view):]
            except OSError as exc:  # a full disk, a file-size limit: the trace's next row would fail too
                raise UserError(f"could not append to {self.path}: {exc.strerror or exc}; rows written so far are "
                                "kept; rerun to continue") from None
            self.made.append(note)
            self.written += 1

        def withdraw() -> None:
            with self.lock:
                if note in self.made:
                    self.made.remove(note)

        return withdraw

    def tidy(self, answered: set[str]) -> None:
        """Keep only the notes no row accounts for, of ids that got no row this run; remove the file when none
        is left."""
        with self.lock:
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None
            keep = [note for note in (*self.unaccounted, *self.made) if note.id not in answered]
            if (keep == self.read and not self.written) or (not keep and not self.path.exists()):
                return
            try:
                if keep:
                    files.write_text(self.path, "".join(jsonl.dumps(note.to_row()) for note in keep))
                else:
                    self.path.unlink(missing_ok=True)
            except (OSError, UserError):  # left as it is: the next run finds which notes its rows account for
                return
            self.read, self.unaccounted, self.made, self.written = keep, keep, [], 0


def _cut_torn(fd: int) -> None:
    """Cut a torn last line (a write cut short) off the notes, so that the next note starts a line of its own."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    tail = os.pread(fd, min(size, 4096), max(0, size - 4096))
    if tail.endswith(b"\n"):
        return
    start = max(0, size - 4096)
    while True:
        cut = tail.rfind(b"\n")
        if cut >= 0 or start == 0:
            os.ftruncate(fd, start + cut + 1)
            return
        start = max(0, start - 4096)
        tail = os.pread(fd, min(4096, size - start), start)
