"""Ask one request: send, judge the answer, retry within bounds, and keep every attempt.

The result is an `Outcome`: the request as it was sent (url and body, built once
here, so that the trace records exactly what went over the wire) and the full
history of `Attempt`s that goes into the trace row. Secrets: the key enters
only the headers handed to `transport.post`; every error text recorded passes
through `apikey.redact`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from common import jsonl
from common.records import Attempt
from runner.apikey import redact
from runner.config import ModelConfig
from runner.providers import Provider, Reply, ResponseShapeError
from runner.retry import FATAL_STATUSES, RetryPolicy, is_retryable_status, parse_retry_after, retry_wait_s
from runner.transport import Exchange, post

ERROR_BODY_CHARS = 1000


@dataclass(frozen=True)
class Outcome:
    status: str  # "ok" | "unusable" | "failed"
    reason: str | None
    reply: Reply | None
    response: dict | None  # the parsed JSON of the final 2xx response, as received
    attempts: tuple[Attempt, ...]
    url: str  # where the request went
    body: dict  # the body sent (its canonical JSON is the bytes on the wire), the key never in it
    fatal: bool = False  # this failure would repeat for every request: stop the run
    exhausted: bool = False  # failed because every retry was used up (a server down, or this request)


@dataclass(frozen=True)
class Verdict:
    kind: str  # "done" | "retry" | "fail" | "fatal"
    error: str | None = None
    reply: Reply | None = None
    response: dict | None = None


def canonical_body(body: dict) -> bytes:
    """The exact bytes sent: the same canonical JSON that --dry-run prints."""
    return jsonl.canonical(body).encode("utf-8")


def ask(*, session, provider: Provider, config: ModelConfig, message: str, api_key: str | None,
        request_id: str, policy: RetryPolicy, pace: Callable[[], bool],
        sleep: Callable[[float], bool]) -> Outcome | None:
    """All attempts for one request. `pace()` (the rate cap) and `sleep(seconds)` (the retry wait)
    return False when the run is stopping; the request is then abandoned (None) and, having no
    row, is asked again on the next run."""
    url, headers, body = provider.build_request(config, message)
    if api_key is not None:
        headers = {**headers, **provider.auth_headers(api_key)}
    data = canonical_body(body)
    attempts: list[Attempt] = []

    def outcome(status: str, reason: str | None, verdict: Verdict | None = None, **flags) -> Outcome:
        return Outcome(status=status, reason=reason, reply=verdict.reply if verdict else None,
                       response=verdict.response if verdict else None, attempts=tuple(attempts), url=url,
                       body=body, **flags)

    for number in range(policy.max_retries + 1):
        if not pace():
            return None
        exchange = post(session, url, headers, data, config.timeout_s)
        verdict = judge(exchange, provider, config, api_key)
        attempts.append(Attempt(started_at=exchange.started_at, latency_s=exchange.latency_s,
                                http_status=exchange.status, error=verdict.error,
                                retry_after=exchange.retry_after, retry_wait_s=None))
        if verdict.kind == "done":
            reply = verdict.reply
            return outcome("ok" if reply.problem is None else "unusable", reply.problem, verdict)
        if verdict.kind in ("fail", "fatal"):
            return outcome("failed", verdict.error, fatal=verdict.kind == "fatal")
        if number == policy.max_retries:
            break
        retry_after_s = parse_retry_after(exchange.retry_after, time.time())
        wait = retry_wait_s(policy, number + 1, retry_after_s, request_id)
        attempts[-1] = replace(attempts[-1], retry_wait_s=wait)
        if not sleep(wait):
            return None
    return outcome("failed", f"gave up after {len(attempts)} attempts; last: {attempts[-1].error}", exhausted=True)


def judge(exchange: Exchange, provider: Provider, config: ModelConfig, api_key: str | None) -> Verdict:
    """What one exchange means: a reply, or an error to retry, to record, or to stop the run on."""
    if exchange.error is not None:
        return Verdict("retry", redact(exchange.error, api_key))
    status = exchange.status
    if not 200 <= status <= 299:
        detail = redact(_snippet(exchange.body), api_key)
        error = f"HTTP {status}: {detail}" if detail else f"HTTP {status}"
        if is_retryable_status(status):
            return Verdict("retry", error)
        if status in FATAL_STATUSES or 300 <= status <= 399:
            return Verdict("fatal", f"{error} ({_hint(status, config)})")
        return Verdict("fail", error)
    try:
        data = json.loads(exchange.body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return Verdict("retry", f"HTTP {status} with malformed JSON ({exc}): "
                                f"{redact(_snippet(exchange.body), api_key)}")
    try:
        reply = provider.parse_response(data)
    except ResponseShapeError as exc:
        return Verdict("fail", f"HTTP {status} with an unexpected response: {exc}")
    return Verdict("done", reply=reply, response=data)


def _hint(status: int, config: ModelConfig) -> str:
    if 300 <= status <= 399:
        return f"the server redirects (redirects are not followed); check base_url {config.base_url}"
    if status in (401, 403):
        if config.api_key_env is None:
            return "the config names no api_key_env, so no key was sent; add api_key_env to the config"
        return f"check the API key in the environment variable {config.api_key_env}"
    return f"check the model name {config.model!r} and base_url {config.base_url}"


def _snippet(body: bytes | None) -> str:
    if not body:
        return ""
    text = body.decode("utf-8", errors="replace").strip()
    return text if len(text) <= ERROR_BODY_CHARS else text[:ERROR_BODY_CHARS] + "…"
