"""Read the scorer's two inputs: trace rows (model outputs) and request rows (what was asked).

Traces: read through the runner's `runner.traces.final_rows`, so the policy is
the runner's: the last row for an id is its final row, and a torn last line
(a crash mid-write) is refused with the command that repairs it. Rows the
scorer cannot use are a UserError naming file and line.
Requests: from a JSON Lines file (`--requests`) or rendered from the committed
benchmark (benchmark.dataset.request_rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchmark.render import CONDITIONS
from common import jsonl
from common.errors import UserError

STATUSES = ("ok", "unusable", "failed")
GENRES = ("code", "prose")


@dataclass(frozen=True)
class Trace:
    """The final trace row of one request."""

    id: str
    cluster: str
    condition: str
    model: str
    status: str
    output: str
    reason: str | None
    where: str  # "file:line", for messages
    benchmark_sha256: str | None = None  # the benchmark its message was rendered from


@dataclass(frozen=True)
class TraceSet:
    path: Path
    model: str
    rows: dict[str, Trace]  # by id


@dataclass(frozen=True)
class Request:
    """What the scorer needs of one request row."""

    id: str
    cluster: str
    condition: str
    source: str
    genre: str
    artifact: str
    comment: str | None
    comment_id: str | None
    witness: str | None
    proposition: str | None
    benchmark_sha256: str | None = None


def read_traces(path: str | Path) -> TraceSet:
    """Final rows by id (through the runner's reader); all rows must name the same model."""
    from runner import traces as runner_traces

    path = Path(path)
    final = runner_traces.final_rows(path)  # the runner's policy: last row wins, a torn tail is refused
    lines = runner_traces.scan(path).lines  # only to name the line in messages
    rows: dict[str, Trace] = {}
    model = None
    for rid, row in sorted(final.items(), key=lambda item: lines[item[0]]):
        where = f"{path}:{lines[rid]}"
        _need_strings(row, ("id", "cluster", "condition", "model", "status"), where)
        if row["status"] not in STATUSES:
            raise UserError(f"{where}: status {row['status']!r}, expected one of {', '.join(STATUSES)}")
        if row["condition"] not in CONDITIONS:
            raise UserError(f"{where}: condition {row['condition']!r}, expected one of {', '.join(CONDITIONS)}")
        if row["id"] != f"{row['cluster']}/{row['condition']}":
            raise UserError(f"{where}: id {row['id']!r} does not match cluster/condition")
        output = row.get("output")
        if row["status"] == "ok" and not isinstance(output, str):
            raise UserError(f"{where}: status ok needs a string 'output'")
        if model is None:
            model = row["model"]
        elif row["model"] != model:
            raise UserError(f"{where}: model {row['model']!r}, but earlier rows are {model!r}; "
                            "score one model per traces file")
        reason = row.get("reason")
        benchmark = row.get("benchmark_sha256")
        rows[rid] = Trace(rid, row["cluster"], row["condition"], row["model"], row["status"],
                          output if isinstance(output, str) else "",
                          reason if isinstance(reason, str) else None, where,
                          benchmark if isinstance(benchmark, str) else None)
    if model is None:
        raise UserError(f"{path}: no trace rows")
    return TraceSet(path, model, rows)


def read_requests(path: str | Path | None = None) -> dict[str, Request]:
    """Request rows by id, from `path` or (when None) rendered from the benchmark files."""
    if path is None:
        from benchmark import dataset

        numbered = [(f"benchmark request {i + 1}", row) for i, row in enumerate(dataset.request_rows())]
    else:
        numbered = [(f"{path}:{n}", row) for n, row in jsonl.read(path)]
    requests = {}
    for where, row in numbered:
        _need_strings(row, ("id", "cluster", "condition", "source", "genre", "artifact"), where)
        if row["genre"] not in GENRES:
            raise UserError(f"{where}: genre {row['genre']!r}, expected one of {', '.join(GENRES)}")
        if row["condition"] not in CONDITIONS:
            raise UserError(f"{where}: condition {row['condition']!r}, expected one of {', '.join(CONDITIONS)}")
        if row["condition"] != "clean":
            _need_strings(row, ("comment", "comment_id", "witness", "proposition"), where)
        if row["id"] in requests:
            raise UserError(f"{where}: duplicate request id {row['id']!r}")
        requests[row["id"]] = Request(
            row["id"], row["cluster"], row["condition"], row["source"], row["genre"], row["artifact"],
            row.get("comment"), row.get("comment_id"), row.get("witness"), row.get("proposition"),
            row.get("benchmark_sha256") if isinstance(row.get("benchmark_sha256"), str) else None)
    if not requests:
        raise UserError(f"{path or 'benchmark'}: no request rows")
    return requests


def _need_strings(row: dict, fields: tuple[str, ...], where: str) -> None:
    for field in fields:
        if not isinstance(row.get(field), str):
            found = "missing" if field not in row else f"a {type(row[field]).__name__}"
            raise UserError(f"{where}: field {field!r} is {found}, expected a string")
