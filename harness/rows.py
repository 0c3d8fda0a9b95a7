"""What a harness's log says of one request, turned into the trace row the kit's runner writes.

A reader (`harness.inspect_log`, `harness.batch_log`) gives a `Collected` per request: the prompt the harness
sent, and an outcome judged by the runner's own code: a chat completion the log keeps is read by
`runner.ask.judge` (a content filter, the output limit, an empty text, a lone surrogate: unusable, exactly as a
run decides), and a request the harness failed is `failed` with the harness's reason. `trace_row` then makes
the row with `runner.rows.trace_row` (so `message_sha256`, `benchmark_sha256` and every other field are the
runner's) and records in `request` what was asked and, under `harness`, which harness, its version and its
log. `check_prompt` refuses a prompt that is not the kit's message for its id, naming the first character
that differs.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from common.errors import UserError
from common.records import Attempt, Request, TraceRow, shown
from harness import IMPORTER_VERSION
from runner import providers
from runner.ask import Outcome, judge, reply_reason
from runner.config import ModelConfig
from runner.rows import trace_row as runner_trace_row
from runner.transport import Exchange

MESSAGE_KEYS = ("model", "messages")  # body keys recorded elsewhere than `parameters`, as the runner's
ERROR_CHARS = 1000  # of a harness's error text in a reason, as the runner quotes an error body


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


def text_of(content, where: str) -> str:
    """A chat message's text: a string, or its text parts joined (as the runner joins a reply's)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(part, dict) for part in content):
        if all(part.get("type") == "text" and isinstance(part.get("text"), str) for part in content):
            return "".join(part["text"] for part in content)
    raise UserError(f"{where}: a message whose content is {shown(content)}, expected text (the exported task "
                    "sends the kit's message as text)")


def first_difference(sent: str, kit: str) -> int:
    """The index of the first character where two texts differ (the shorter's length when one extends the other).

    >>> first_difference("abc", "abd"), first_difference("ab", "abc")
    (2, 2)
    """
    for index, (a, b) in enumerate(zip(sent, kit, strict=False)):
        if a != b:
            return index
    return min(len(sent), len(kit))


def check_prompt(collected: Collected, request: Request) -> None:
    """Refuse, in one line, a log whose prompt for an id is not exactly the kit's: a single user message, with no
    system prompt, whose text is the kit's message for that id."""
    where, rid = collected.where, collected.id
    roles = [message.get("role") if isinstance(message, dict) else None for message in collected.messages]
    if roles != ["user"]:
        raise UserError(f"{where}: {rid} was sent as {len(roles)} message(s) with roles {', '.join(map(str, roles))}"
                        ", expected the kit's one user message and no system prompt (seam.py export's task adds none)")
    sent = text_of(collected.messages[0].get("content"), where)
    if sent != request.message:
        at = first_difference(sent, request.message)
        raise UserError(f"{where}: the prompt of {rid} is not the kit's message for it: they differ at character "
                        f"{at + 1:,} ({shown(sent[at:at + 12])} in the log, {shown(request.message[at:at + 12])} in "
                        "the kit's); export again with seam.py export (and the --conditions file it used)")


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


def failed(reason: str, attempts: tuple[Attempt, ...]) -> Outcome:
    return Outcome("failed", cut(reason), None, None, attempts, "", {})


def cut(text: str, limit: int = ERROR_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def config_for(model_name: str, body: dict, where: str) -> ModelConfig:
    """A runner config naming what the harness asked (for the row's model name and the judge's messages)."""
    tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    return ModelConfig(path=where, name=model_name, provider="openai", model=str(body.get("model") or ""),
                       base_url="", temperature=body.get("temperature"),
                       max_tokens=tokens if isinstance(tokens, int) else 0)


def trace_row(collected: Collected, request: Request, model_name: str, *, url: str | None) -> TraceRow:
    """The runner's trace row for one collected request; `request.harness` names the harness and its log."""
    outcome, body = collected.outcome, collected.outcome.body
    config = config_for(model_name, body, collected.where)
    row = runner_trace_row(config, request, replace(outcome, url=url or "", body=body), (), collected.started_at,
                           collected.finished_at)
    tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    url = url if collected.chat else None  # another API than chat completions: its endpoint is not known
    record = {"provider": "openai" if collected.chat else None, "url": url, "model": body.get("model"),
              "parameters": {key: value for key, value in body.items() if key not in MESSAGE_KEYS},
              "max_tokens": tokens, "temperature": body.get("temperature"), "timeout_s": None, "concurrency": None,
              "max_retries": None, "requests_per_minute": None, "api_key_env": None,
              "harness": {**collected.harness, "importer": IMPORTER_VERSION}}
    if collected.batch:
        record["batch"] = True
    return replace(row, request=record)
