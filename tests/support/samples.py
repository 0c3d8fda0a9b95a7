"""Test support: valid records to feed the runner and the trace reader (`Request`s, trace rows)."""

from __future__ import annotations

from common import jsonl
from common.records import Attempt, Request, TraceRow

BENCHMARK_SHA = "b" * 64


def make_requests(count: int, *, conditions=("clean", "newline"), prefix: str = "Fix the typo.") -> list[Request]:
    """Synthetic requests (docs/FORMATS.md); clusters of len(conditions) requests each."""
    requests = []
    for index in range(count):
        cluster = f"synthetic-{index // len(conditions):03d}"
        condition = conditions[index % len(conditions)]
        comment = None if condition == "clean" else "btw lunch"
        message = f"{prefix}\n\ndef f():\n    return {index}  \n{comment or ''}"
        requests.append(Request(
            id=f"{cluster}/{condition}", cluster=cluster, source="synthetic", genre="code", license="MIT",
            condition=condition, message=message, artifact="def f(): ...", comment=comment,
            comment_id=comment and "casual-01", witness=comment and "btw lunch",
            proposition=comment and "The user is going to lunch.", benchmark_sha256=BENCHMARK_SHA))
    return requests


def write_requests(path, requests: list[Request]) -> None:
    """A request file as `seam.py prompts` writes one, for `--requests`."""
    jsonl.write(path, [request.to_row() for request in requests])


def trace_row(request_id: str = "synthetic-000/clean", status: str = "ok", output: str | None = "x", *,
              model: str = "m", **fields) -> dict:
    """A valid trace row as the runner writes it (built as a `TraceRow`, so it cannot drift from the
    format); `fields` then override any field, to make the invalid rows some tests need."""
    cluster, _, condition = request_id.partition("/")
    attempt = Attempt(started_at="2026-01-02T03:04:05.678Z", latency_s=0.5, http_status=200, error=None,
                      retry_after=None, retry_wait_s=None)
    row = TraceRow(
        id=request_id, cluster=cluster, condition=condition, source="synthetic", model=model, status=status,
        output=output, reason=None if status == "ok" else "empty output", served_model=None, finish_reason=None,
        usage=None, response_id=None, response=None,
        request={"provider": "openai", "model": "fake-model", "parameters": {}}, attempts=(attempt,), previous=(),
        started_at="2026-01-02T03:04:05.600Z", finished_at="2026-01-02T03:04:06.200Z",
        benchmark_sha256=BENCHMARK_SHA, message_sha256="c" * 64, runner_version="1").to_row()
    row.update(fields)
    return row
