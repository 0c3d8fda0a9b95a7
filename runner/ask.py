"""Ask one request: send, judge the answer, retry within bounds, and keep every attempt.

The result is an `Outcome`: the request as it was sent (url and body, built once
here, so that the trace records exactly what went over the wire) and the full
history of `Attempt`s that goes into the trace row. Secrets: the key enters
only the headers handed to `transport.post`; every error text recorded passes
through `apikey.redact` before it is cut short, never after.

No reply crashes the run. A 2xx body becomes a row whatever its JSON holds:
nested deeper than `MAX_REPLY_DEPTH` levels (or too deep for the parser) or
with an integer too long to convert, the request fails with that reason; lone
surrogate escapes ("\\udc80", which UTF-8 cannot carry) are recorded as
U+FFFD and numbers JSON cannot carry (NaN, Infinity, 1e400) as null, and the
row is then unusable with a reason saying so (`sanitize`), so that a trace row
is always strict JSON and never a silent edit of what the server sent. A text
longer than a trace keeps (`common.records.MAX_OUTPUT_CHARS`) is recorded cut to
that length, and the row is unusable saying so (`shorten`).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from common import jsonl
from common.conversation import Conversation
from common.jsonl import LONE_SURROGATE
from common.plural import plural
from common.records import MAX_OUTPUT_CHARS, Attempt, shown
from runner.apikey import Secrets, redact, secret_headers
from runner.config import ModelConfig
from runner.providers import Provider, Reply, ResponseShapeError, build
from runner.retry import FATAL_STATUSES, RetryPolicy, is_retryable_status, parse_retry_after, retry_wait_s
from runner.transport import Exchange, post

ERROR_BODY_CHARS = 1000
ERROR_TEXT_CHARS = 500  # an exception's text (transport errors)
MAX_REPLY_DEPTH = 100  # provider replies nest about 8 levels; a trace row must read back well within Python's limit
SURROGATE = LONE_SURROGATE  # in a str from json.loads, a surrogate is always a lone one


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
    unreachable: str | None = None  # no connection could be made before any answer came: nothing to record


@dataclass(frozen=True)
class Verdict:
    kind: str  # "done" | "retry" | "fail" | "fatal"
    error: str | None = None
    reply: Reply | None = None
    response: dict | None = None
    note: str | None = None  # what was changed in the reply to record it (makes a reply unusable)


def canonical_body(body: dict) -> bytes:
    """The exact bytes sent: the same canonical JSON that --dry-run prints."""
    return jsonl.canonical(body).encode("utf-8")


def ask(*, session, provider: Provider, config: ModelConfig, message: Conversation | str,
        api_key: str | Secrets | None, request_id: str, policy: RetryPolicy, pace: Callable[[], bool],
        sleep: Callable[[float], bool],
        note_wait: Callable[[float, str], None] | None = None,
        note_send: Callable[[], Callable[[], None]] | None = None,
        reached: threading.Event | None = None) -> Outcome | None:
    """All attempts for one request, `message` (its whole conversation: what the trace row fingerprints; a str
    is a bare user message). `pace()` (the rate cap) and `sleep(seconds)` (the retry wait)
    return False when the run is stopping; the request is then abandoned (None) and, having no
    row, is asked again on the next run. `note_wait(until, header)` is told, before the wait
    starts, when a server's Retry-After asks not to try again before Unix time `until`, so that
    a run killed during the wait still honours it on the next run (runner.pending).
    `note_send()` is called just before each attempt is sent (runner.sent) and returns what undoes
    the note when nothing was sent after all. `reached` is set once any answer came from the server;
    until then a connection refused, an unknown host, no route or a connect timeout ends the request at once
    with `unreachable` set (a wrong base_url: every request would meet it), its note undone."""
    url, headers, body = build(provider, config, message)
    headers = {**headers, **secret_headers(provider, config, api_key)}
    data = canonical_body(body)
    attempts: list[Attempt] = []

    def outcome(status: str, reason: str | None, verdict: Verdict | None = None, **flags) -> Outcome:
        return Outcome(status=status, reason=reason, reply=verdict.reply if verdict else None,
                       response=verdict.response if verdict else None, attempts=tuple(attempts), url=url,
                       body=body, **flags)

    for number in range(policy.max_retries + 1):
        if not pace():
            return None
        undo = note_send() if note_send is not None else None
        exchange = post(session, url, headers, data, config.timeout_s)
        verdict = judge(exchange, provider, config, api_key)
        attempts.append(Attempt(started_at=exchange.started_at, latency_s=exchange.latency_s,
                                http_status=exchange.status, error=verdict.error,
                                retry_after=exchange.retry_after, retry_wait_s=None))
        if reached is not None:
            if exchange.status is not None:
                reached.set()
            elif exchange.unreachable and not reached.is_set():
                if undo is not None:
                    undo()
                return outcome("failed", verdict.error, unreachable=exchange.unreachable)
        if verdict.kind == "done":
            reason = reply_reason(verdict.reply.problem, verdict.note)
            return outcome("ok" if reason is None else "unusable", reason, verdict)
        if verdict.kind in ("fail", "fatal"):
            return outcome("failed", verdict.error, fatal=verdict.kind == "fatal")
        if number == policy.max_retries:
            break
        now = time.time()
        retry_after_s = parse_retry_after(exchange.retry_after, now)
        wait = retry_wait_s(policy, number + 1, retry_after_s, request_id)
        attempts[-1] = replace(attempts[-1], retry_wait_s=wait)
        if retry_after_s is not None and wait > 0 and note_wait is not None:
            note_wait(now + wait, exchange.retry_after)
        if not sleep(wait):
            return None
    tried = f"{len(attempts)} {plural(len(attempts), 'attempt')}"
    return outcome("failed", f"gave up after {tried}; last: {attempts[-1].error}", exhausted=True)


def unreachable_message(config: ModelConfig, why: str, written: int = 0) -> str:
    """The one line a run stops with when no connection to base_url could be made: its host and port (no
    secret is ever in base_url: the config refuses credentials there) and what to check. `written`: the rows
    other requests, already in flight, got before the run stopped (a connect timeout can meet some connections
    and not others), which are kept.

    >>> from types import SimpleNamespace
    >>> config = SimpleNamespace(base_url="http://127.0.0.1:8081/v1", path="m.toml")
    >>> unreachable_message(config, "connection refused").split("; ")[1]
    'nothing was sent and nothing recorded: is the server running, at that address and port?'
    >>> unreachable_message(config, "connection refused", written=2).split("? ")[1]
    '2 rows other requests got before the run stopped are kept: rerun to ask the rest once it answers'
    """
    host, port = host_port(config.base_url)
    check = ("is the host name right?" if why.startswith("unknown host") else
             "is the server running, at that address and port?")
    where = f"cannot reach {host}:{port} ({why}), the base_url of {config.path} ({config.base_url})"
    if written:
        return (f"{where}; {check} {written:,} {plural(written, 'row')} other requests got before the run "
                "stopped are kept: rerun to ask the rest once it answers")
    return f"{where}; nothing was sent and nothing recorded: {check}"


def host_port(url: str) -> tuple[str, int | str]:
    """(host, port) of a URL as a message names them, the port filled in from the scheme."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "?", parts.port
    except ValueError:
        return "?", "?"
    host = f"[{host}]" if ":" in host else host
    return host, port or {"https": 443, "http": 80}.get(parts.scheme, "?")


def reply_reason(problem: str | None, note: str | None) -> str | None:
    """Why a 2xx reply is unusable: the provider's problem first, then what recording it changed."""
    return "; ".join(part for part in (problem, note) if part) or None


def judge(exchange: Exchange, provider: Provider, config: ModelConfig, api_key: str | None) -> Verdict:
    """What one exchange means: a reply, or an error to retry, to record, or to stop the run on."""
    if exchange.error is not None:
        error = _cut(redact(exchange.error, api_key), ERROR_TEXT_CHARS)
        if exchange.fatal:
            return Verdict("fatal", f"{error} (check base_url {config.base_url} and the key's variable)")
        if exchange.too_large:  # the server would send it again
            return Verdict("fail", error)
        return Verdict("retry", error)
    status = exchange.status
    if not 200 <= status <= 299:
        detail = _snippet(exchange.body, api_key)
        error = f"HTTP {status}: {detail}" if detail else f"HTTP {status}"
        if is_retryable_status(status):
            return Verdict("retry", error)
        if status in FATAL_STATUSES or 300 <= status <= 399:
            return Verdict("fatal", f"{error} ({_hint(status, config)})")
        return Verdict("fail", error)
    try:
        data = json.loads(exchange.body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:  # most likely a body cut short: ask again
        return Verdict("retry", f"HTTP {status} with malformed JSON ({exc}): {_snippet(exchange.body, api_key)}")
    except RecursionError:
        return Verdict("fail", f"HTTP {status} with JSON nested too deeply to read (more than "
                               f"{MAX_REPLY_DEPTH} levels): {_snippet(exchange.body, api_key)}")
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        return Verdict("fail", f"HTTP {status} with JSON that cannot be read ({_cut(str(exc), 200)}): "
                               f"{_snippet(exchange.body, api_key)}")
    if _depth(data) > MAX_REPLY_DEPTH:
        return Verdict("fail", f"HTTP {status} with JSON nested too deeply to read (more than "
                               f"{MAX_REPLY_DEPTH} levels): {_snippet(exchange.body, api_key)}")
    data, note = sanitize(data)
    data, cut = shorten(data)
    try:
        reply = provider.parse_response(data)
    except ResponseShapeError as exc:
        return Verdict("fail", f"HTTP {status} with an unexpected response: {exc}")
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:  # a shape no check foresaw
        return Verdict("fail", f"HTTP {status} with an unexpected response: {type(exc).__name__}: "
                               f"{_cut(redact(str(exc), api_key), ERROR_TEXT_CHARS)}")
    if reply.output is not None and len(reply.output) > MAX_OUTPUT_CHARS:  # text parts joined, each within it
        reply = replace(reply, output=reply.output[:MAX_OUTPUT_CHARS])
        cut = cut or f"the reply's text is longer than the {MAX_OUTPUT_CHARS:,} characters a trace keeps; cut to them"
    return Verdict("done", reply=reply, response=data, note=reply_reason(note, cut))


def shorten(data: Any, limit: int = MAX_OUTPUT_CHARS) -> tuple[Any, str | None]:
    """`data` with every string longer than `limit` characters cut to its first `limit`, and a note of it (None
    if none was): a trace keeps a reply's text up to MAX_OUTPUT_CHARS (common.records), in `output` and in
    `response` alike, so that no later stage reads one longer."""
    cut: list[tuple[str, int]] = []

    def walk(item: Any, where: str) -> Any:
        if isinstance(item, str):
            if len(item) > limit:
                cut.append((where, len(item)))
                return item[:limit]
            return item
        if isinstance(item, dict):
            return {walk(key, f"{where} (a key)"): walk(inner, f"{where}.{key}") for key, inner in item.items()}
        if isinstance(item, list):
            return [walk(inner, f"{where}[{index}]") for index, inner in enumerate(item)]
        return item

    shortened = walk(data, "response")
    if not cut:
        return data, None
    where, length = cut[0]
    return shortened, (f"the reply held {len(cut)} {plural(len(cut), 'text')} longer than the {limit:,} characters "
                       f"a trace keeps (the first in {_cut(SURROGATE.sub('?', where), 120)}, {length:,} characters); "
                       f"recorded cut to {limit:,}")


def _depth(value: Any) -> int:
    """How deeply a parsed JSON value nests (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend((inner, level + 1) for inner in (item.values() if isinstance(item, dict) else item))
    return deepest


def sanitize(data: Any, *, root: str = "response", what: str = "the reply") -> tuple[Any, str | None]:
    """`data` made recordable as strict UTF-8 JSON, and a note of what that changed (None if nothing).

    Lone surrogates (in strings or object keys) become U+FFFD; NaN, Infinity and
    numbers too large for a float become null. The note names how many and where
    the first one was, e.g. `response.choices[0].message.content` (`root` names the
    value, `what` the thing in the note).
    """
    found = {"surrogates": 0, "numbers": 0}
    first: dict[str, str] = {}

    def walk(item: Any, where: str) -> Any:
        if isinstance(item, str):
            count = len(SURROGATE.findall(item))
            if count:
                found["surrogates"] += count
                first.setdefault("surrogates", where)
                return SURROGATE.sub("\ufffd", item)
            return item
        if isinstance(item, float) and not math.isfinite(item):
            found["numbers"] += 1
            first.setdefault("numbers", where)
            return None
        if isinstance(item, dict):
            return {walk(key, f"{where} (a key)"): walk(inner, f"{where}.{key}") for key, inner in item.items()}
        if isinstance(item, list):
            return [walk(inner, f"{where}[{index}]") for index, inner in enumerate(item)]
        return item

    cleaned = walk(data, root)
    notes = []
    if found["surrogates"]:
        notes.append(f"{what} held {found['surrogates']} lone surrogate escape(s), which are not Unicode "
                     f"text (the first in {_cut(SURROGATE.sub('?', first['surrogates']), 120)}); recorded as U+FFFD")
    if found["numbers"]:
        notes.append(f"{what} held {found['numbers']} number(s) JSON cannot carry, NaN or Infinity (the first "
                     f"in {_cut(SURROGATE.sub('?', first['numbers']), 120)}); recorded as null")
    return cleaned, "; ".join(notes) or None


def _hint(status: int, config: ModelConfig) -> str:
    if 300 <= status <= 399:
        return f"the server redirects (redirects are not followed); check base_url {config.base_url}"
    if status in (401, 403):
        if config.api_key_env is None:
            return "the config names no api_key_env, so no key was sent; add api_key_env to the config"
        return f"check the API key in the environment variable {config.api_key_env}"
    return f"check the model name {shown(config.model)} and base_url {config.base_url}"


def _snippet(body: bytes | None, api_key: str | None) -> str:
    """The start of a body for an error message: the key redacted first, then cut (never the other way)."""
    if not body:
        return ""
    return _cut(redact(body.decode("utf-8", errors="replace").strip(), api_key), ERROR_BODY_CHARS)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
