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
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.reading import TRACE_FILE_BYTES, read_bytes
from common.records import BATCH_RESULTS, STATUSES, Attempt, TraceRow, finite_or_null, is_condition_name, shown

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
        data = read_bytes(path, "a trace file (JSON Lines)", limit=TRACE_FILE_BYTES)
    except FileNotFoundError:
        return TraceFile(path, {}, {}, 0, None)
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a trace file (JSON Lines)") from None
    end = data.rfind(b"\n") + 1  # bytes after `end` lack their newline
    complete = _lines(data, end)
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


def _lines(data: bytes, end: int) -> list[str] | list[bytes]:
    """The complete lines: decoded once for the whole file (UTF-8 never holds a newline byte inside a character,
    so its lines are those of the bytes), or, when some line is not UTF-8, as bytes, for `_parse` to name it."""
    try:
        return data[:end].decode("utf-8").split("\n")[:-1]
    except UnicodeDecodeError:
        return data[:end].split(b"\n")[:-1]


def _parse(raw: str | bytes, where: str, *, first: bool) -> TraceRow:
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
    return _trace_row(row) or TraceRow.from_row(row, where)


# Every check of `TraceRow.from_row` and `Attempt.from_row`, made at once on a row that passes them all (every
# row the runner writes), so that reading a trace file costs little more than parsing its JSON. A row that
# fails any of them is read by `TraceRow.from_row` itself, which names the first field that is wrong: the
# messages are its own. The checks here are no weaker (exact types where it takes subclasses too);
# tests/test_common_traces.py checks that both accept and refuse the same rows and read them alike.
_OPTIONAL = (str, type(None))  # a string or null
_NUMBER = (int, float, type(None))  # a number or null (type() is never bool here: bool is refused)
_RECORD = (dict, type(None))  # an object or null


def _trace_row(row: dict) -> TraceRow | None:
    """The `TraceRow` of a row that passes every check of `TraceRow.from_row`; None for any other."""
    try:
        rid, cluster, model, condition = row["id"], row["cluster"], row["model"], row["condition"]
        status = row["status"]
        source, output, reason, served_model, finish_reason, response_id, benchmark_sha256, message_sha256 = (
            row["source"], row["output"], row["reason"], row["served_model"], row["finish_reason"],
            row["response_id"], row["benchmark_sha256"], row["message_sha256"])
        started_at, finished_at, runner_version = row["started_at"], row["finished_at"], row["runner_version"]
        attempts, previous, usage, response, request = (row["attempts"], row["previous"], row["usage"],
                                                        row["response"], row["request"])
    except KeyError:
        return None
    if (type(rid) is not str or type(cluster) is not str or not cluster or type(model) is not str or not model
            or type(condition) is not str or not _condition_name(condition) or rid != f"{cluster}/{condition}"
            or type(status) is not str or status not in STATUSES or (status == "ok" and output is None)
            or type(started_at) is not str or type(finished_at) is not str or type(runner_version) is not str
            or type(output) not in _OPTIONAL or type(reason) not in _OPTIONAL or type(served_model) not in _OPTIONAL
            or type(finish_reason) not in _OPTIONAL or type(response_id) not in _OPTIONAL
            or type(benchmark_sha256) not in _OPTIONAL or type(message_sha256) not in _OPTIONAL
            or not (source is None or (type(source) is str and source))
            or type(response) not in _RECORD or type(request) is not dict
            or type(attempts) is not list or type(previous) is not list):
        return None
    for earlier in previous:
        if type(earlier) is not dict:
            return None
    if not (rid.isascii() and cluster.isascii() and model.isascii() and (source is None or source.isascii())):
        if any(jsonl.LONE_SURROGATE.search(name) for name in (rid, cluster, model, source or "")):
            return None
    read = []
    for attempt in attempts:
        checked = _attempt(attempt)
        if checked is None:
            return None
        read.append(checked)
    return _checked(TraceRow, {
        "id": rid, "cluster": cluster, "condition": condition, "source": source, "model": model, "status": status,
        "output": output, "reason": reason, "served_model": served_model, "finish_reason": finish_reason,
        "usage": usage, "response_id": response_id, "response": response, "request": request,
        "attempts": tuple(read), "previous": tuple(previous), "started_at": started_at, "finished_at": finished_at,
        "benchmark_sha256": benchmark_sha256, "message_sha256": message_sha256, "runner_version": runner_version})


def _attempt(attempt: object) -> Attempt | None:
    """The `Attempt` of an attempt object that passes every check of `Attempt.from_row`; None for any other."""
    if type(attempt) is not dict:
        return None
    try:
        started_at, latency_s, http_status, error, retry_after, retry_wait_s = (
            attempt["started_at"], attempt["latency_s"], attempt["http_status"], attempt["error"],
            attempt["retry_after"], attempt["retry_wait_s"])
    except KeyError:
        return None
    if (type(started_at) is not str or type(latency_s) not in _NUMBER or type(retry_wait_s) not in _NUMBER
            or not finite_or_null(latency_s) or not finite_or_null(retry_wait_s)
            or not (http_status is None or type(http_status) is int) or type(error) not in _OPTIONAL
            or type(retry_after) not in _OPTIONAL or not _utc_time(started_at)):
        return None
    if "batch_id" in attempt or "result" in attempt:
        batch_id, result = attempt.get("batch_id"), attempt.get("result")
        if type(batch_id) is not str or type(result) is not str or result not in BATCH_RESULTS:
            return None
    else:
        batch_id = result = None
    return _checked(Attempt, {"started_at": started_at, "latency_s": latency_s, "http_status": http_status,
                              "error": error, "retry_after": retry_after, "retry_wait_s": retry_wait_s,
                              "batch_id": batch_id, "result": result})


_new, _set = object.__new__, object.__setattr__


def _checked(kind: type, fields: dict) -> object:
    """An instance of the frozen dataclass `kind` holding `fields` (every field, in their order), made without
    its `__init__`: the frozen `__init__` sets each field through `object.__setattr__`, which costs more than
    all the checks above. Exact for these records, which have no `__post_init__` and no `__slots__`
    (tests/test_common_traces.py checks both, and that the records equal those `from_row` makes)."""
    record = _new(kind)
    _set(record, "__dict__", fields)
    return record


@lru_cache(maxsize=256)
def _condition_name(name: str) -> bool:
    """`records.is_condition_name`, for the few names a trace file repeats on every row."""
    return is_condition_name(name)


def _utc_time(text: str) -> bool:
    """Whether `Attempt.started` reads `text` (an ISO 8601 time with a time zone that UTC can hold)."""
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            return False
        moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return False
    return True


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
