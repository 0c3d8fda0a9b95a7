"""Read traces (through the runner's `final_rows`) and the benchmark's clusters for the validity checks.

Traces are read only with `runner.traces.final_rows`, so the runner's policy
holds here too: the last row of an id is final and a torn last line is
refused. Each final row becomes an `Output`; the edited text inside a reply is
found with the scorer's own extraction (`scorer.extract.extract`), so that the
validity checks look at exactly the text the absorption labels looked at.
A row the checks cannot use is a `UserError` naming the file and line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from benchmark.render import CONDITIONS
from common import jsonl
from common.errors import UserError


@dataclass(frozen=True)
class Output:
    """One final trace row, reduced to what the validity checks use."""

    model: str
    id: str
    cluster: str
    condition: str
    status: str  # ok | unusable | failed
    output: str | None
    served_model: str | None
    fingerprint: str | None  # the provider's system_fingerprint, where it sends one
    first_attempt: datetime | None  # start of the row's first attempt
    answered: datetime | None  # start of its last attempt, the one that gave the final answer
    trace_file: str  # for messages


def trace_files(paths) -> list[Path]:
    """The trace files named, a directory standing for its `*.jsonl` files."""
    return jsonl.files_named(paths, "trace")


def parse_time(value, where: Callable[[], str]) -> datetime:
    """An attempt's `started_at` (UTC ISO 8601) as an aware datetime."""
    if not isinstance(value, str):
        raise UserError(f"{where()}: attempt 'started_at' is {value!r}; expected a UTC time like "
                        "2026-01-02T03:04:05.678Z")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise UserError(f"{where()}: attempt 'started_at' is {value!r}; expected a UTC time like "
                        "2026-01-02T03:04:05.678Z") from None
    if moment.tzinfo is None:
        raise UserError(f"{where()}: attempt 'started_at' {value!r} has no time zone; expected UTC ('Z')")
    return moment.astimezone(UTC)


def format_time(moment: datetime | None) -> str | None:
    """Canonical UTC text with milliseconds, as the runner writes it."""
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _string(row: dict, key: str, where: Callable[[], str], *, nullable: bool = False):
    value = row.get(key)
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value:
        expected = "a string or null" if nullable else "a non-empty string"
        raise UserError(f"{where()}: field '{key}' is {value!r}; expected {expected}")
    return value


def _output(row: dict, path: Path, where: Callable[[], str]) -> Output:
    """Check one final row; `where()` gives "file:line" (computed only for a message)."""
    rid = _string(row, "id", where)
    cluster = _string(row, "cluster", where)
    condition = _string(row, "condition", where)
    if condition not in CONDITIONS:
        raise UserError(f"{where()}: condition {condition!r}; expected one of {', '.join(CONDITIONS)}")
    if rid != f"{cluster}/{condition}":
        raise UserError(f"{where()}: id {rid!r} does not match cluster/condition {cluster}/{condition}")
    output = row.get("output")
    if output is not None and not isinstance(output, str):
        raise UserError(f"{where()}: field 'output' is {type(output).__name__}; expected a string or null")
    attempts = row.get("attempts")
    if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
        raise UserError(f"{where()}: field 'attempts' must be a list of objects (docs/RUNNER.md)")
    times = [parse_time(a.get("started_at"), where) for a in attempts]
    response = row.get("response")
    fingerprint = response.get("system_fingerprint") if isinstance(response, dict) else None
    return Output(
        model=_string(row, "model", where), id=rid, cluster=cluster, condition=condition,
        status=row["status"], output=output, served_model=_string(row, "served_model", where, nullable=True),
        fingerprint=fingerprint if isinstance(fingerprint, str) and fingerprint else None,
        first_attempt=min(times) if times else None, answered=times[-1] if times else None, trace_file=str(path))


def read_outputs(paths, clusters: dict[str, dict], benchmark_sha256: str) -> list[Output]:
    """Final rows of every trace file, checked against the benchmark, sorted by model, cluster, condition."""
    from runner.traces import final_rows, scan

    outputs: dict[tuple[str, str], Output] = {}
    for path in trace_files(paths):
        final = final_rows(path)
        numbers: dict[str, int] = {}

        def locate(rid: str, path=path, numbers=numbers) -> str:
            if not numbers:  # line numbers only when a message needs them
                numbers.update(scan(path).lines)
            return f"{path}:{numbers[rid]}"

        for rid in sorted(final):
            row = final[rid]
            where = partial(locate, rid)
            item = _output(row, path, where)
            if item.cluster not in clusters:
                raise UserError(f"{where()}: cluster {item.cluster!r} is not in the benchmark "
                                "(traces from another benchmark version?)")
            checksum = row.get("benchmark_sha256")
            if checksum and checksum != benchmark_sha256:
                raise UserError(f"{where()}: rendered from benchmark {str(checksum)[:12]}…, but data/benchmark "
                                f"is {benchmark_sha256[:12]}…; check traces against the benchmark they were "
                                "made from")
            key = (item.model, item.id)
            if key in outputs:
                raise UserError(f"{where()}: model {item.model!r} already has a final row for {item.id!r} in "
                                f"{outputs[key].trace_file}; give each model's trace once")
            outputs[key] = item
    order = {c: i for i, c in enumerate(CONDITIONS)}
    return sorted(outputs.values(), key=lambda o: (o.model, o.cluster, order[o.condition]))


def edited_text(item: Output, cluster: dict) -> str | None:
    """The edited text of a usable output (the scorer's extraction), or None when there is none.

    Usable means what it means for the absorption labels: the runner judged the
    reply ok and the extraction leaves some text.
    """
    from scorer.extract import extract

    if item.status != "ok" or item.output is None:
        return None
    text = extract(item.output, cluster["artifact"], cluster["genre"]).text
    return text if text.strip() else None
