"""Hand-made trace rows, for the validity tests.

Each row is built as the kit's own `TraceRow` (with its `Attempt`s) and handed
out as `to_row()`, so it has exactly the runner's fields and cannot drift from
the schema every stage reads. Only the fields the validity checks read are
filled in with care; the rest have plausible values.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from common.records import Attempt, TraceRow, request_id

START = datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def attempt(moment: datetime) -> Attempt:
    """An attempt that started at `moment` and was answered in a second."""
    return Attempt(started_at=stamp(moment), latency_s=1.0, http_status=200, error=None, retry_after=None,
                   retry_wait_s=None)


def trace_row(cluster: str, condition: str, output: str | None, *, model: str = "model-a", status: str = "ok",
              served: str | None = "served-1", at: datetime | timedelta = timedelta(0),
              retried_at: datetime | timedelta | None = None, fingerprint: str | None = None,
              benchmark_sha256: str | None = None) -> dict:
    """One final trace row. `at` (a time, or an offset from START) is when its attempt started;
    `retried_at` adds a second attempt, the one that answered."""
    first = START + at if isinstance(at, timedelta) else at
    times = [first]
    if retried_at is not None:
        times.append(START + retried_at if isinstance(retried_at, timedelta) else retried_at)
    return TraceRow(
        id=request_id(cluster, condition), cluster=cluster, condition=condition,
        source=cluster.rsplit("-", 1)[0], model=model, status=status, output=output,
        reason=None if status == "ok" else "stopped by the output limit (finish_reason=length)",
        served_model=served, finish_reason="stop" if status == "ok" else "length", usage=None,
        response_id=None, response={"system_fingerprint": fingerprint} if fingerprint else None,
        request={"provider": "openai", "model": "m"}, attempts=tuple(attempt(t) for t in times), previous=(),
        started_at=stamp(times[0]), finished_at=stamp(times[-1]), benchmark_sha256=benchmark_sha256,
        message_sha256=None, runner_version="1",
    ).to_row()
