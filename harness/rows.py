"""What a harness's log says of one request, turned into the trace row the kit's runner writes.

A reader (`harness.inspect_log`, `harness.batch_log`, `harness.promptfoo_log`, `harness.lmeval_log`) gives a
`Collected` per request: the prompt the harness sent, and an outcome judged by the runner's own rules. A chat
completion the log keeps is read by `runner.ask.judge` (`judged`: a content filter, the output limit, an empty
text, a lone surrogate: unusable, exactly as a run decides); where a harness keeps only its own reading of a reply
(promptfoo's `response`, inspect's `output`, lm-eval's text), `read_reply` judges that reading by the same rules,
the differences between harnesses (where the text and the stop reason sit, what a stop reason is called) given
as arguments; a request the harness failed is `failed` with the harness's reason. `trace_row` then makes the row
with `runner.rows.trace_row` (so `message_sha256`, `benchmark_sha256` and every other field are the runner's) and
records in `request` what was asked (with the system prompt sent, where the condition has one, as the runner
records it) and, under `harness`, which harness, its version and its log;
`trace_line` writes it as the runner does, with the credentials a log may hold redacted. Every route records a
duration through `seconds` and a server through `public_url`, so that no row holds what a trace reader refuses
or what must not be shared. The prompt a `Collected` holds is checked against the kit's request by
`harness.conversation.check_prompt`.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from common.errors import UserError
from common.records import MAX_OUTPUT_CHARS, Attempt, Request, TraceRow, shown
from harness import IMPORTER_VERSION
from runner import providers
from runner.apikey import REDACTED, Secrets, redact
from runner.ask import Outcome, judge, reply_reason, sanitize, shorten
from runner.config import ModelConfig
from runner.providers import Reply, ResponseShapeError, classify
from runner.providers import openai as openai_rules
from runner.rows import trace_line as runner_trace_line
from runner.rows import trace_row as runner_trace_row
from runner.rows import with_system
from runner.transport import Exchange

MESSAGE_KEYS = ("model", "messages")  # body keys recorded elsewhere than `parameters`, as the runner's
ERROR_CHARS = 1000  # of a harness's error text in a reason, as the runner quotes an error body
# The variables API keys are usually given in; any other *_API_KEY set in the environment is redacted too.
KEY_VARIABLES = ("OPENAI_API_KEY", "LOCAL_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
# A credential a server may echo in an error body, which a harness keeps (promptfoo quotes the body of an HTTP error
# whole): the token after "Bearer", or the value of an Authorization, API-key, subscription-key or token header or
# parameter, or of a `key=` query parameter (Gemini's), in any quoting (\" inside a JSON-quoted body, a Go map's
# `[Bearer X]` included), and the key OpenAI's own 401 quotes ("Incorrect API key provided: X").
CREDENTIAL = re.compile(
    r"(?i)(\bbearer[\s:]+"
    r"|\b(?:proxy-)?authorization[\\\"'\[\]]*\s*[:=]\s*[\\\"'\[]*(?:(?:bearer|basic|token)[\s:]+)?"
    r"|\b(?:x-)?(?:api|subscription|access)[-_ ]?(?:key|token)(?: provided)?[\\\"']*\s*[:=]\s*[\\\"'\[]*"
    r"|\btoken[\\\"']*\s*[:=]\s*[\\\"']*"
    r"|[?&;]key=)"
    r"[^\s\\\"',;&}\]]+")


@dataclass(frozen=True)
class Collected:
    """One request as a harness's log records it."""

    id: str
    where: str  # "LOG: member or line", for messages
    epoch: int
    messages: list  # what the harness sent: the chat messages (role, content), as its log keeps them
    outcome: Outcome  # judged as the runner judges a reply; url and body: what the harness sent
    started_at: str
    finished_at: str
    harness: dict  # request.harness of the row
    batch: bool = False  # collected through a batch API (`request.batch`, priced so by `seam.py usage`)
    chat: bool = True  # the reply is a chat completion the log keeps; False: the harness's own reading of another API


def utc(text, where: str, what: str) -> str:
    """A harness's time (ISO 8601 with a zone, or Unix seconds) as the kit writes times: UTC, milliseconds, Z."""
    try:
        if isinstance(text, int | float) and not isinstance(text, bool) and math.isfinite(text):
            moment = datetime.fromtimestamp(text, UTC)
        else:
            moment = datetime.fromisoformat(text)
            if moment.tzinfo is None:
                raise ValueError("no time zone")
            moment = moment.astimezone(UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        raise UserError(f"{where}: {what} is {shown(text)}, expected a time such as 2026-01-02T03:04:05+00:00") \
            from None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def seconds(value, per: float = 1) -> float | None:
    """A duration a log gives (in seconds, or in 1/`per` of one: promptfoo's milliseconds) as a row records it: a
    finite number of at least 0, else None (unknown). Infinity and NaN (which Python's JSON reads, `1e400`
    included) are no JSON a trace reader takes, and a negative duration is none.

    >>> seconds(1500, per=1000), seconds(float("inf")), seconds(-5), seconds(True), seconds("3")
    (1.5, None, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        value = value / per
    except OverflowError:  # an integer too large for a float
        return None
    return value if math.isfinite(value) and value >= 0 else None


def public_url(url) -> str | None:
    """A server's URL as rows record it: without user:password@, query or fragment (a key may sit in any of them),
    since rows are shared; None for what is no URL.

    >>> public_url("http://me:pw@[::1]:8080/v1?api_key=sk-x#f"), public_url("http://h:99999/v1")
    ('http://[::1]:8080/v1', None)
    """
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return None
    host = f"[{host}]" if ":" in host else host
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))


def judged(body: dict, status: int, started_at: str, latency_s: float | None, config: ModelConfig) -> Outcome:
    """A reply the log keeps (the provider's JSON) judged as the runner judges one (`runner.ask.judge`)."""
    data = json.dumps(body, ensure_ascii=True).encode("ascii")  # lone surrogates as escapes, as a server's
    exchange = Exchange(started_at=started_at, latency_s=latency_s or 0.0, status=status, retry_after=None,
                        body=data, error=None)
    verdict = judge(exchange, providers.get(config.provider), config, None)
    attempt = Attempt(started_at=started_at, latency_s=latency_s, http_status=status, error=verdict.error,
                      retry_after=None, retry_wait_s=None)
    if verdict.kind == "done":
        reason = reply_reason(verdict.reply.problem, verdict.note)
        return Outcome("ok" if reason is None else "unusable", reason, verdict.reply, verdict.response, (attempt,),
                       "", {})
    return Outcome("failed", verdict.error, None, None, (attempt,), "", {})


@dataclass(frozen=True)
class Stops:
    """How a harness names why a reply ended: the field (for reasons), and which values are a content filter, the
    output limit, or a normal end; any other value is an unexpected stop, as the runner's rules say."""

    name: str
    filtered: frozenset = frozenset()
    truncated: frozenset = frozenset()
    stopped: frozenset = frozenset()


OPENAI_STOPS = Stops("finish_reason", frozenset(openai_rules.FILTERED), frozenset(openai_rules.TRUNCATED),
                     frozenset(openai_rules.STOPPED))


@dataclass(frozen=True)
class Reading:
    """What a harness's own reading of a reply says (where its log keeps no chat completion)."""

    content: Any  # the text: a string, or a message's text parts (joined as the runner joins them)
    stop: str | None = None
    refusal: str | None = None  # a refusal given in place of the text
    served_model: str | None = None
    usage: dict | None = None
    response_id: str | None = None


def read_reply(kept, read: Callable[[Any], Reading], attempts: tuple[Attempt, ...], *, root: str,
               stops: Stops = OPENAI_STOPS, keep: bool = True) -> Outcome:
    """A harness's reading of a reply (`kept`: what its log holds, recorded as the row's `response` when `keep`),
    judged by the runner's rules for a reply: lone surrogates made U+FFFD and texts over a trace's limit cut (each
    unusable, and said), then `read` finds the text, the stop reason and the rest, judged as `runner.providers`
    judges an OpenAI reply (`stops` names the harness's stop reasons)."""
    kept, note = sanitize(kept, root=root, what="the reply")
    kept, too_long = shorten(kept)
    reading = read(kept)
    text = reply_text(reading.content)
    if text is not None and len(text) > MAX_OUTPUT_CHARS:  # text parts joined, each within it (as `judge` does)
        text = text[:MAX_OUTPUT_CHARS]
        too_long = too_long or f"the reply's text is longer than the {MAX_OUTPUT_CHARS:,} characters a trace keeps; " \
                               "cut to them"
    stop, named = reading.stop, f"{stops.name}={reading.stop}"
    problem = classify(text, filtered=(named if stop in stops.filtered else None)
                       or (f"refusal: {reading.refusal}" if reading.refusal else None),
                       truncated=named if stop in stops.truncated else None,
                       unexpected=named if stop is not None and stop not in stops.stopped else None)
    reply = Reply(output=text, finish_reason=stop, served_model=reading.served_model, usage=reading.usage,
                  response_id=reading.response_id, problem=problem)
    reason = reply_reason(problem, reply_reason(note, too_long))
    return Outcome("ok" if reason is None else "unusable", reason, reply, kept if keep else None, tuple(attempts),
                   "", {})


def reply_text(content) -> str | None:
    """A reply's text as the runner reads an OpenAI message's content: a string as it is, a list's text parts
    joined; anything else (or a text part whose text is no string) no text."""
    if isinstance(content, str) or content is None:
        return content
    try:
        return openai_rules.message_text(content) if isinstance(content, list) else None  # the runner's own joining
    except ResponseShapeError:
        return None


def failed(reason: str, attempts: tuple[Attempt, ...]) -> Outcome:
    return Outcome("failed", cut(reason), None, None, attempts, "", {})


def cut(text: str, limit: int = ERROR_CHARS) -> str:
    """A harness's error text as a row keeps it: credentials redacted first (`scrubbed`, and this environment's
    API keys), then cut to `limit` characters, never the other way (a key cut in two is no longer found)."""
    text = redact(scrubbed(text), env_secrets())
    return text if len(text) <= limit else text[:limit] + "…"


def config_for(model_name: str, body: dict, where: str) -> ModelConfig:
    """A runner config naming what the harness asked (for the row's model name and the judge's messages)."""
    tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    return ModelConfig(path=where, name=model_name, provider="openai", model=str(body.get("model") or ""),
                       base_url="", temperature=body.get("temperature"),
                       max_tokens=tokens if isinstance(tokens, int) else 0)


def trace_row(collected: Collected, request: Request, model_name: str, *, url: str | None) -> TraceRow:
    """The runner's trace row for one collected request (its `message_sha256` the conversation's, as a run's);
    `request.harness` names the harness and its log, `request.system` the system prompt sent, if any."""
    outcome, body = collected.outcome, collected.outcome.body
    config = config_for(model_name, body, collected.where)
    row = runner_trace_row(config, request, replace(outcome, url=url or "", body=body), (), collected.started_at,
                           collected.finished_at)
    tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    url = public_url(url) if collected.chat else None  # another API than chat completions: its endpoint unknown
    record = {"provider": "openai" if collected.chat else None, "url": url, "model": body.get("model"),
              "parameters": {key: value for key, value in body.items() if key not in MESSAGE_KEYS},
              "max_tokens": tokens, "temperature": body.get("temperature"), "timeout_s": None, "concurrency": None,
              "max_retries": None, "requests_per_minute": None, "api_key_env": None,
              "harness": {**collected.harness, "importer": IMPORTER_VERSION}}
    if collected.batch:
        record["batch"] = True
    return replace(row, request=with_system(record, request))  # the system prompt last, as the runner's rows


def env_secrets() -> Secrets:
    """The values of the API key variables set here (`KEY_VARIABLES` and any other *_API_KEY), to redact as the
    runner redacts its key: a harness ran with them, and its log may quote one (an error body echoing it)."""
    names = sorted({*KEY_VARIABLES, *(name for name in os.environ if name.endswith("_API_KEY"))})
    return Secrets(None, {name: os.environ[name] for name in names if os.environ.get(name)})


def scrubbed(text: str | None) -> str | None:
    """`text` with the credential after every `Bearer` and in every Authorization or API-key header or parameter
    replaced by <redacted> (`CREDENTIAL`), whatever the key: a server may echo one the harness sent.

    >>> scrubbed('401 {"error": "bad Authorization: Bearer sk-live-1 (api_key=k2&x=1)"}')
    '401 {"error": "bad Authorization: Bearer <redacted> (api_key=<redacted>&x=1)"}'
    >>> scrubbed("Incorrect API key provided: sk-2. map[Authorization:[Bearer sk-3]] at /v1/m:generate?key=AIza4")
    'Incorrect API key provided: <redacted> map[Authorization:[Bearer <redacted>]] at /v1/m:generate?key=<redacted>'
    """
    return CREDENTIAL.sub(lambda match: match.group(1) + REDACTED, text) if text else text


def trace_line(row: TraceRow) -> str:
    """The row as the runner writes it (`runner.rows.trace_line`), with what a log may hold of a credential
    redacted: a bearer token or header value in what it kept of a failure (the reason, the attempts' errors:
    where servers echo them; a model's output is left as it wrote it), and, anywhere in the row, every API key
    of this environment, in every spelling and in pieces, by the runner's own redaction."""
    attempts = tuple(replace(attempt, error=scrubbed(attempt.error)) for attempt in row.attempts)
    reason = scrubbed(row.reason) if row.status == "failed" else row.reason  # an unusable row's may quote the model
    return runner_trace_line(replace(row, reason=reason, attempts=attempts), env_secrets())
