"""Retry-After notes that outlive the process: `<trace>.pending`, one JSON line per wait a server asked for.

A trace row is written when its request finishes, so a run killed while it
waits out a 429's Retry-After leaves no row saying that the server asked it to
wait. Before such a wait starts, the runner appends a note here (one write(2)
to a file opened O_APPEND, then fsync): the id, the UTC time before which the
server asked not to be asked again (`not_before`: when the answer came, plus
the Retry-After, capped at 600 s like the wait itself), the header as received
and when the note was made. The next run on the same trace waits until then
before asking that id again, and says so on stderr.

The wait is also read from the trace itself: with --retry-failed, a final row
whose last attempt was refused with a Retry-After (its retries used up) tells
when the server allowed the next try (`row_not_before`).

Notes are advisory: a torn last line (a kill mid-write) is ignored. At the end
of a run, notes whose time has passed or whose request got a row are dropped,
and the file is removed when none is left. Only the runner holding the
trace's lock reads or writes it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from common import files, jsonl
from common.errors import UserError
from common.records import TraceRow, shown
from runner.retry import RetryPolicy, parse_retry_after

SUFFIX = ".pending"


@dataclass(frozen=True)
class Wait:
    """Do not ask `id` again before Unix time `until`: the server said so (`retry_after`) at `noted_at`."""

    id: str
    until: float
    retry_after: str | None
    noted_at: float

    def to_row(self) -> dict:
        return {"id": self.id, "not_before": utc(self.until), "retry_after": self.retry_after,
                "noted_at": utc(self.noted_at)}


def utc(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def path_for(out: str | Path) -> Path:
    out = Path(out)
    return out.with_name(out.name + SUFFIX)


def read(path: Path) -> list[Wait]:
    """Every complete note in `path` (none if it does not exist); a torn last line is ignored."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected the runner's Retry-After notes") from None
    waits = []
    for number, raw in enumerate(data[:data.rfind(b"\n") + 1].split(b"\n")[:-1], 1):
        try:
            row = json.loads(raw.decode("utf-8"))
            waits.append(Wait(id=row["id"], until=_moment(row["not_before"]), retry_after=row.get("retry_after"),
                              noted_at=_moment(row["noted_at"])))
            if not isinstance(waits[-1].id, str):
                raise TypeError("id")
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError, RecursionError, OverflowError):
            raise UserError(f"{path}:{number}: expected a Retry-After note (id, not_before, retry_after, noted_at), "
                            f"found {shown(raw.decode('utf-8', 'replace'))}; the runner writes this file while a "
                            "server asks it to wait: delete it to ask those requests again at once") from None
    return waits


def _moment(text: str) -> float:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError("no time zone")
    return moment.timestamp()


def row_not_before(row: TraceRow, policy: RetryPolicy) -> Wait | None:
    """When a final row's last attempt (a refusal with Retry-After) allows the next try, if it says."""
    if not row.attempts:
        return None
    last = row.attempts[-1]
    if last.retry_after is None or last.http_status is None or 200 <= last.http_status <= 299:
        return None
    try:
        answered = last.started().timestamp() + (last.latency_s or 0.0)
    except UserError:
        return None
    seconds = parse_retry_after(last.retry_after, answered)
    if seconds is None:
        return None
    return Wait(id=row.id, until=answered + min(seconds, policy.max_retry_after_s), retry_after=last.retry_after,
                noted_at=answered)


class PendingWaits:
    """The notes of one trace: read at the start of a run, appended to during it, tidied at its end."""

    def __init__(self, out: str | Path):
        self.path = path_for(out)
        self.waits = read(self.path)
        self.lock = threading.Lock()

    def until(self, request_id: str, done: TraceRow | None, policy: RetryPolicy) -> Wait | None:
        """The latest wait that still binds `request_id`: its notes made after its final row `done`
        (an earlier note was already waited out before that row's attempts), and that row's own."""
        finished = _finished(done)
        candidates = [wait for wait in self.waits if wait.id == request_id and wait.noted_at >= finished]
        if done is not None:
            own = row_not_before(done, policy)
            if own is not None:
                candidates.append(own)
        return max(candidates, key=lambda wait: wait.until, default=None)

    def note(self, request_id: str, until: float, retry_after: str | None, redact=lambda text: text) -> None:
        """Record, durably, that `request_id` must not be asked before `until` (before the wait starts)."""
        wait = Wait(id=request_id, until=until, retry_after=retry_after, noted_at=time.time())
        line = redact(jsonl.dumps(wait.to_row())).encode("utf-8", "replace")
        with self.lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            self.waits.append(wait)

    def tidy(self, answered: set[str], now: float | None = None) -> None:
        """Keep only the notes still in the future for requests that got no row this run; remove the file
        when none is left."""
        now = time.time() if now is None else now
        with self.lock:
            keep = [wait for wait in self.waits if wait.until > now and wait.id not in answered]
            if keep == self.waits and (keep or not self.path.exists()):
                return
            if keep:
                files.write_text(self.path, "".join(jsonl.dumps(wait.to_row()) for wait in keep))
            else:
                self.path.unlink(missing_ok=True)
            self.waits = keep


def _finished(row: TraceRow | None) -> float:
    if row is None:
        return float("-inf")
    try:
        return datetime.fromisoformat(row.finished_at).timestamp()
    except (ValueError, OverflowError):
        return float("-inf")
