"""A request's trace row: built from what was asked and what came back, and written with the key redacted.

`trace_row` records one request's outcome (`request_record`: what was asked, minus the message);
`trace_line` dumps it as one strict UTF-8 JSON line with the key redacted from every string in every
spelling (`runner.apikey`) and the dumped line checked once more. The synchronous run (`runner.run`)
and the batch run (`runner.batch.run`) write every row through these two, beside the trace writer
(`runner.traces`) that appends the line.
"""

from __future__ import annotations

import json
import re
from functools import cache

from common import jsonl
from common.errors import UserError
from common.records import Request, TraceRow, shown
from runner import RUNNER_VERSION, providers
from runner.apikey import REDACTED, leaks, redact, redact_value
from runner.ask import Outcome, reply_reason, sanitize
from runner.config import ModelConfig

FINGERPRINT = ("provider", "model", "parameters")  # must match to append to an existing trace


def public_url(url: str) -> str:
    """`url` without any user:password@ (the config refuses them; this keeps them out of every record anyway)."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@", r"\1", url)  # never raises, whatever the URL


def parameters(config: ModelConfig, body: dict) -> dict:
    """The body's keys but the model and what the conversation fills (the provider's `CONVERSATION_KEYS`: its text
    is fingerprinted by `message_sha256` and held by the request row): every parameter sent, [params] included."""
    recorded_elsewhere = _recorded_elsewhere(config.provider)
    return {key: value for key, value in body.items() if key not in recorded_elsewhere}


@cache
def _recorded_elsewhere(provider: str) -> tuple[str, ...]:
    """Looked up once per provider: every row recorded asks."""
    return ("model", *providers.get(provider).CONVERSATION_KEYS)


def request_record(config: ModelConfig, url: str, body: dict) -> dict:
    """What was asked, minus the message: provider, endpoint (with the config's [query]), model and every
    parameter sent; and, only when the config sets them (so that other rows keep their bytes), its literal
    `headers`, the variables of its `headers_env` (never their values) and its `auth_header`."""
    record = {
        "provider": config.provider,
        "url": public_url(url),
        "model": config.model,
        "parameters": parameters(config, body),
        "max_tokens": config.max_tokens,
        "temperature": config.temperature,
        "timeout_s": config.timeout_s,
        "concurrency": config.concurrency,
        "max_retries": config.max_retries,
        "requests_per_minute": config.requests_per_minute,
        "api_key_env": config.api_key_env,
    }
    if config.headers:
        record["headers"] = dict(config.headers)
    if config.headers_env:
        record["headers_env"] = dict(config.headers_env)
    if config.auth_header is not None:
        record["auth_header"] = config.auth_header
    return record


def with_system(record: dict, request: Request) -> dict:
    """The request record with the system prompt sent, where the condition sent one (`system`; a row of a bare
    message has no such key, and keeps its bytes): a system prompt is the condition's text, not the user's, and a
    reader of the trace sees what the model was told without the condition file."""
    return record if request.system is None else {**record, "system": request.system}


def trace_row(config: ModelConfig, request: Request, outcome: Outcome, previous: tuple[dict, ...],
              started_at: str, finished_at: str) -> TraceRow:
    """The row recording one request's outcome; `request` holds the url and body `ask` sent."""
    reply = outcome.reply
    return TraceRow(
        id=request.id,
        cluster=request.cluster,
        condition=request.condition,
        source=request.source,
        model=config.name,
        status=outcome.status,
        output=reply.output if reply else None,
        reason=outcome.reason,
        served_model=reply.served_model if reply else None,
        finish_reason=reply.finish_reason if reply else None,
        usage=reply.usage if reply else None,
        response_id=reply.response_id if reply else None,
        response=outcome.response,
        request=with_system(request_record(config, outcome.url, outcome.body), request),
        attempts=outcome.attempts,
        previous=previous,
        started_at=started_at,
        finished_at=finished_at,
        benchmark_sha256=request.benchmark_sha256,
        message_sha256=request.conversation.sha256,
        runner_version=RUNNER_VERSION,
    )


def trace_line(row: TraceRow, api_key: str | None) -> str:
    """The row as one JSON line, always strict UTF-8 JSON, with the key redacted in every spelling.

    The key, and every run of `apikey.piece_length` of its characters (a server may cut it in
    pieces), is redacted from every string of the row (a reply or an error body may spell it
    JSON-escaped or as \\uXXXX escapes); the dumped line is then searched once more, and in the
    unlikely case that the dump itself spells the key (across a string's end, in a number), the
    reply is withheld from the row. A row that cannot be encoded (a lone surrogate in some error
    text) has those characters replaced, and says so in its reason; one nested too deeply to
    write (an earlier row, in `previous`, recorded by an older runner) is withheld likewise.
    """
    data = row.to_row()
    try:
        line = jsonl.dumps(redact_value(data, api_key), keep_surrogates=True)
        line.encode("utf-8")
    except UnicodeEncodeError:
        data, note = sanitize(data, root="row", what="the row")
        data["status"] = "unusable" if data["status"] == "ok" else data["status"]
        data["reason"] = reply_reason(data["reason"], note)
        line = jsonl.dumps(redact_value(data, api_key))
    except RecursionError:
        data = withheld(data, "the row nested too deeply to be written; what the server sent is not recorded")
        line = jsonl.dumps(redact_value(data, api_key))
    if leaks(line, api_key):
        data = withheld(data, "the reply spelled the API key in a way that could not be redacted in place; "
                              "what the server sent is not recorded")
        line = jsonl.dumps(redact_value(data, api_key))
        if leaks(line, api_key):
            raise UserError(f"{shown(row.id)}: the API key appears in the request's own fields or the config; "
                            "nothing was written for it")
    return line


def check_key_not_recorded(config: ModelConfig, requests: list[Request], api_key) -> None:
    """Refuse, before anything is sent, a key spelled in what every row records as is (ids, model, URL):
    redacted there, the rows would no longer name their request."""
    if api_key is None:
        return
    recorded = [(config.name, "the config's name"), (config.model, "the config's model"),
                (config.base_url, "the config's base_url")]
    for table in ("headers", "headers_env", "query"):
        recorded += [(f"{key} {value}", f"the config's [{table}]") for key, value in getattr(config, table).items()]
    for text, what in recorded:
        if leaks(text, api_key):
            raise UserError(f"{config.path}: the API key (or a [headers_env] value) appears in {what}; it would be "
                            "written into every row")
    for request in requests:
        for field in (request.id, request.cluster, request.source, request.benchmark_sha256):
            if leaks(field, api_key):
                raise UserError(f"the API key appears in request {shown(redact(request.id, api_key))}; it would be "
                                "written into its row")


def withheld(data: dict, reason: str) -> dict:
    """A row (and its earlier rows) with everything the server sent removed, and `reason` saying why."""
    data = dict(data, output=None, served_model=None, finish_reason=None, usage=None, response_id=None,
                response=None, reason=reason)
    if data["status"] == "ok":
        data["status"] = "unusable"
    data["attempts"] = [dict(attempt, error=None if attempt.get("error") is None else REDACTED,
                             retry_after=None if attempt.get("retry_after") is None else REDACTED)
                        for attempt in data.get("attempts", [])]
    if "previous" in data:  # earlier rows carry no `previous` of their own
        data["previous"] = [withheld(old, reason) for old in data["previous"]]
    return data


def earlier(row: TraceRow) -> tuple[dict, ...]:
    """The `previous` list for a re-ask of `row`: its own history, then the row itself without it."""
    itself = row.to_row()
    del itself["previous"]
    return (*row.previous, itself)


def named(text: str) -> str:
    """An id (or other recorded name) for a message: as is when short and printable, else `shown`."""
    return text if len(text) <= 80 and text.isprintable() else shown(text)


def json_shown(value) -> str:
    """A recorded value for a message: canonical JSON, cut short."""
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 200 else text[:200] + f"… ({len(text):,} characters)"
