"""Writing the trace file: append rows as requests finish, never lose or duplicate a row.

Rows are appended with one `os.write` each to a file opened O_APPEND, so a
killed process leaves complete rows plus at most one torn last line. The last
row for an id is its final row. Reading (final rows, the torn tail) is
`common.traces`, the one reader every stage uses; a torn tail is refused there,
naming file and line, and `seam.py run --move-torn` moves those bytes into
`<out>.torn-<timestamp>` here before continuing.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from common.errors import UserError
from common.files import make_parent
from common.reading import kind_of
from common.traces import TornTail

FSYNC_INTERVAL_S = 1.0


class TraceWriteError(UserError):
    """Appending to the trace failed (a full disk, a file-size limit): the run stops, the rows written stay."""


class TraceLocked(UserError):
    """Another process holds the trace's writer lock: a run is appending to it."""


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
    try:
        with open(aside, "xb") as f:
            f.write(tail)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:  # a full disk: nothing is cut from the trace
        aside.unlink(missing_ok=True)
        raise UserError(f"could not move the torn last line of {path} aside into {aside}: "
                        f"{exc.strerror or exc}; the trace is unchanged") from None
    with open(path, "r+b") as f:
        f.truncate(torn.offset)
        f.flush()
        os.fsync(f.fileno())
    return aside


def _existing_mode(path: Path) -> int | None:
    """The mode of the file `path` leads to (a link followed), None when there is none yet (or a dangling link,
    whose target the open creates, as it always has)."""
    try:
        return os.stat(path).st_mode
    except OSError:  # none yet; or a link loop, a permission: the open below says it
        return None


def _refuse_not_regular(path: Path, mode: int | None) -> None:
    """A trace is appended to a regular file only: a FIFO (opening it to write waits for a reader, forever), a
    device or a socket given as --out (or linked to from it) is refused in one line, before anything is sent."""
    if mode is None or stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise UserError(f"{path}: is a directory, expected a trace file (JSON Lines)")
    raise UserError(f"{path}: {kind_of(mode) or 'a special file'}, not a regular file; --out names the trace "
                    "file the run appends to (a regular file, or a link to one)")


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
        _refuse_not_regular(self.path, _existing_mode(self.path))  # a FIFO: opening it to write waits for a reader
        make_parent(self.path)
        try:  # without waiting, should a FIFO be put there since: then refused below
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o644)
        except IsADirectoryError:
            raise UserError(f"{self.path}: is a directory, expected a trace file (JSON Lines)") from None
        except OSError as exc:  # a FIFO without a reader (ENXIO), a socket, a permission
            raise UserError(f"{self.path}: cannot open it to append the trace ({exc.strerror or exc})") from None
        try:
            _refuse_not_regular(self.path, os.fstat(self.fd).st_mode)
        except UserError:
            os.close(self.fd)
            raise
        os.set_blocking(self.fd, True)
        try:
            _lock(self.fd)
        except BlockingIOError:
            os.close(self.fd)
            raise TraceLocked(f"{self.path}: another 'seam.py run' is appending to this trace; let it "
                              "finish (or stop it), then run again") from None
        if not _still_at(self.fd, self.path):  # removed or replaced between the open and the lock
            os.close(self.fd)
            raise TraceLocked(f"{self.path}: was removed or replaced while it was being opened (a join of shard "
                              "files, scripts/shards.py?); run again")
        self.lock = threading.Lock()
        self.last_sync = time.monotonic()
        self.failed: TraceWriteError | None = None

    def append(self, line: str) -> None:
        """Append one row. A write that fails (a full disk, a file-size limit) may have written part of the
        line: the writer then refuses every later row, so that the cut line stays the last one (a torn tail,
        which `--move-torn` sets aside) and no row follows it."""
        if not line.endswith("\n") or "\n" in line[:-1]:
            raise ValueError("a trace row must be exactly one line ending in a newline")
        data = line.encode("utf-8")
        with self.lock:
            if self.fd < 0:
                raise RuntimeError(f"{self.path}: trace writer already closed")
            if self.failed is not None:
                raise self.failed
            try:
                view = memoryview(data)
                while view:
                    written = os.write(self.fd, view)
                    view = view[written:]
                if time.monotonic() - self.last_sync >= FSYNC_INTERVAL_S:
                    os.fsync(self.fd)
                    self.last_sync = time.monotonic()
            except OSError as exc:
                self.failed = TraceWriteError(
                    f"could not append to {self.path}: {exc.strerror or exc}; rows written so far are kept; "
                    "rerun to continue (--move-torn if the last line is torn)")
                raise self.failed from None

    def sync(self) -> None:
        """Make every row appended so far durable now (before a journal says they were written)."""
        with self.lock:
            if self.fd >= 0 and self.failed is None:
                try:
                    os.fsync(self.fd)
                except OSError as exc:
                    self.failed = TraceWriteError(f"could not write {self.path} to disk: {exc.strerror or exc}; "
                                                  "rerun to check and continue")
                    raise self.failed from None
                self.last_sync = time.monotonic()

    def close(self) -> None:
        with self.lock:
            if self.fd >= 0:
                fd, self.fd = self.fd, -1
                try:
                    os.fsync(fd)
                except OSError as exc:
                    if self.failed is None:  # else the error that stopped the run is the one to report
                        self.failed = TraceWriteError(f"could not write {self.path} to disk: {exc.strerror or exc}; "
                                                      "rerun to check and continue")
                        raise self.failed from None
                finally:
                    os.close(fd)

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _still_at(fd: int, path: Path) -> bool:
    """Whether the open file `fd` is still the file at `path`: rows appended to a file that was removed (or
    replaced) after it was opened would reach no one."""
    try:
        there = os.stat(path)
    except FileNotFoundError:
        return False
    here = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _lock(fd: int) -> None:
    """An exclusive, non-blocking advisory lock (BlockingIOError if held); a no-op without fcntl."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        return
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

