"""promptfoo's output file (`promptfoo eval -o out.json`) of the config `seam.py export --to promptfoo` writes.

The file is one JSON document: `evalId` (written first: the import tells it from an inspect_ai `.json` log by its
keys, `harness.jsonlog`), `results` (`timestamp`, the eval's start, and `results`: one result per test and prompt),
`config` (the providers' settings: model, `apiBaseUrl`, `max_tokens`, `passthrough`) and `metadata`
(`promptfooVersion`, `exportedAt`). promptfoo writes it as one JavaScript string (`JSON.stringify` of the
whole eval), which V8 caps at 2**29 - 24 UTF-16 units, so promptfoo itself cannot write one of much more than
512 MiB; the whole benchmark's (1,800 requests) is tens of MiB. It is read whole, and one larger than
`MAX_OUTPUT_BYTES` is refused unread (split the export instead: `--sources`, `--first`). Only results of
promptfoo's `openai:chat:` providers are read (the exported config's: the body it sends is known for them only),
and none whose settings send stop sequences (a SEAM request has none).

Each result becomes a `harness.rows.Collected`. The prompt is the one promptfoo rendered and handed its
provider (`prompt.raw`: the JSON of the chat messages the prompt function returned, which the openai:chat
provider sends as they are; a prompt that is not JSON it sends as one user message); the test's variables are
not used for it, since promptfoo strips a trailing newline from them before recording them. promptfoo keeps no
chat completion, only its own reading of one (`response`: `output`, `finishReason`, `tokenUsage`, `isRefusal`):
the reply is judged from that by the runner's rules for OpenAI replies (`collected.chat` False; a text given as
text parts joined as the runner joins them), the usage given in OpenAI's field names so that `seam.py usage`
reads it (each count promptfoo kept, none made up). A result whose `response.error` (or, with no
response, `error`) is set failed, with promptfoo's words. promptfoo keeps no time per request: every row has
the eval's start and the output's writing as its times, and the result's `latencyMs`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.records import Attempt, shown
from harness import jsonlog
from harness.promptfoo_task import PRECEDING, TEMPLATE
from harness.rows import Collected, Reading, cut, failed, read_reply, seconds, utc
from runner.ask import Outcome

MAX_OUTPUT_BYTES = jsonlog.MAX_JSON_BYTES
CHAT_PREFIX = "openai:chat:"
# Settings of promptfoo's openai:chat provider that it puts in the body as they are (temperature only when it is
# not 0: it tests the value's truth), before `passthrough`, which it merges in last.
BODY_SETTINGS = ("max_tokens", "max_completion_tokens", "temperature", "top_p", "presence_penalty",
                 "frequency_penalty", "seed", "stop")
API_ERROR = re.compile(r"API error: (\d{3}) ")  # promptfoo's words for an HTTP error: "API error: 400 Bad Request"


@dataclass(frozen=True)
class Header:
    """What the output says of the whole eval."""

    path: Path
    version: str | None  # of promptfoo
    started: str  # the eval's start, as the kit writes times
    finished: str  # when the output was written
    providers: dict = field(default_factory=dict)  # provider id (and label) -> its config


def read_output(path: Path) -> tuple[Header, Iterator[tuple[str, dict]]]:
    """The output's header and its results, each with "FILE: results[i]" for messages."""
    document = jsonlog.read_document(path, "a promptfoo output", "export fewer requests per eval (seam.py export "
                                     "--sources or --first) and import the outputs together", "the output is cut "
                                     "short or damaged (promptfoo eval -o out.json writes it whole at the end)")
    if jsonlog.kind_of(document) != "promptfoo" or not isinstance(document["results"].get("results"), list):
        raise UserError(f"{path}: {jsonlog.EXPECTED}")
    evaluation, results = document["results"], document["results"]["results"]
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    version = metadata.get("promptfooVersion")
    started = utc(evaluation.get("timestamp") or metadata.get("evaluationCreatedAt"), str(path),
                  "the eval's timestamp (results.timestamp)")
    finished = utc(metadata["exportedAt"], str(path), "metadata.exportedAt") if metadata.get("exportedAt") \
        else started
    config = document.get("config") if isinstance(document.get("config"), dict) else {}
    header = Header(path, version if isinstance(version, str) else None, started, finished,
                    _providers(config.get("providers")))
    return header, ((f"{path}: results[{index}]", result) for index, result in enumerate(results))


def _providers(entries) -> dict:
    """Each provider's settings by its id and by its label (a result names its provider by both)."""
    found = {}
    for entry in entries if isinstance(entries, list) else [entries]:
        if isinstance(entry, str):
            found[entry] = {}
        elif isinstance(entry, dict) and isinstance(entry.get("id"), str):
            settings = entry.get("config") if isinstance(entry.get("config"), dict) else {}
            found[entry["id"]] = settings
            if isinstance(entry.get("label"), str) and entry["label"]:
                found[entry["label"]] = settings
    return found


def provider_of(result: dict, where: str) -> str:
    """The result's provider id: openai:chat:MODEL, as the exported config names it."""
    provider = result.get("provider")
    name = provider.get("id") if isinstance(provider, dict) else provider
    if not isinstance(name, str) or not name:
        raise UserError(f"{where}: a result naming no provider (provider.id is {shown(name)}); not a result of "
                        "promptfoo eval")
    if not name.startswith(CHAT_PREFIX) or len(name) == len(CHAT_PREFIX):
        raise UserError(f"{where}: a result of the provider {shown(name)[:80]}; the import reads results of "
                        f"promptfoo's {CHAT_PREFIX}MODEL providers only (the exported config's), the one whose "
                        "request body it knows")
    if TEMPLATE.search(name):
        raise UserError(f"{where}: the provider {shown(name)[:80]} holds nunjucks syntax, which promptfoo renders "
                        "before it sends the model's name: the body named another model; export with a --model "
                        "without {{, {% or {#")
    return name


def served_name(provider: str) -> str:
    """The model a provider id asks for (openai:chat:qwen: qwen)."""
    return provider[len(CHAT_PREFIX):] if provider.startswith(CHAT_PREFIX) else provider


def collected(result: dict, where: str, header: Header) -> Collected:
    """One result as the kit's runner would have recorded its request."""
    if not isinstance(result, dict):
        raise UserError(f"{where}: {jsonl.kind(result)}, expected a result object; not promptfoo's output")
    variables = result.get("vars") if isinstance(result.get("vars"), dict) else {}
    rid = variables.get("id")
    if not isinstance(rid, str):
        raise UserError(f"{where}: a result whose vars.id is {shown(rid)}, expected a request id of the kit: not "
                        "an eval of seam.py export's promptfoo config (tests.jsonl)")
    provider = provider_of(result, where)
    settings = header.providers.get(provider, {})
    label = result["provider"].get("label") if isinstance(result.get("provider"), dict) else None
    if isinstance(label, str) and label in header.providers:
        settings = header.providers[label]
    body = {"model": served_name(provider), **_parameters(settings, where)}
    prompt = result.get("prompt") if isinstance(result.get("prompt"), dict) else {}
    raw = prompt.get("raw")
    response, error = result.get("response"), result.get("error")
    reply = isinstance(response, dict) and not response.get("error") and (
        "output" in response or "finishReason" in response or "tokenUsage" in response)
    if reply or (isinstance(raw, str) and raw):
        messages = _messages(raw, where)
    else:  # it failed before promptfoo rendered a prompt: what the test asked (the prompt function's messages)
        preceding = variables.get(PRECEDING)
        messages = [*(preceding if isinstance(preceding, list) else []),
                    {"role": "user", "content": variables.get("message")}]
    latency = seconds(result.get("latencyMs"), per=1000)
    if reply:
        outcome = _judged(response, Attempt(started_at=header.started, latency_s=latency, http_status=200,
                                            error=None, retry_after=None, retry_wait_s=None))
    elif (isinstance(response, dict) and response.get("error")) or error:
        message = str(response.get("error") if isinstance(response, dict) and response.get("error") else error)
        status = API_ERROR.match(message)
        outcome = failed(f"promptfoo: {message.strip()}", (Attempt(
            started_at=header.started, latency_s=latency, http_status=int(status.group(1)) if status else None,
            error=cut(message.strip()), retry_after=None, retry_wait_s=None),))
    else:
        raise UserError(f"{where} ({rid}): no response and no error: the eval did not finish this test; run it "
                        "again and import the new output")
    harness = {"name": "promptfoo", "version": header.version, "log": header.path.name, "model": provider}
    return Collected(rid, where, 1, messages, replace(outcome, body={**body, "messages": messages}), header.started,
                     header.finished, harness, chat=False)


def _parameters(settings: dict, where: str) -> dict:
    """The body's parameters as the provider's settings give them (promptfoo keeps no request body); stop
    sequences refused, as a SEAM request has none."""
    params = {key: settings[key] for key in BODY_SETTINGS if settings.get(key) is not None}
    if not params.get("temperature", 1):  # promptfoo leaves a temperature of 0 out of the body
        del params["temperature"]
    passthrough = settings.get("passthrough")
    if isinstance(passthrough, dict):
        params.update(passthrough)
    if params.get("stop"):
        raise UserError(f"{where}: the provider's settings send the stop sequences {shown(params['stop'])[:80]} "
                        "(config.providers' stop or passthrough), which the kit's runner never sends, so its replies "
                        "end where the runner's do not; run the exported config as it is")
    return params


def _messages(raw, where: str) -> list:
    """The chat messages promptfoo's openai:chat provider sent for a rendered prompt."""
    if not isinstance(raw, str):
        raise UserError(f"{where}: prompt.raw is {shown(raw)}, expected the rendered prompt (text)")
    try:
        value = jsonl.parse(raw)
    except jsonl.BadJson:
        return [{"role": "user", "content": raw}]  # a text prompt: sent as one user message
    if isinstance(value, list) and value and all(isinstance(message, dict) for message in value):
        return value
    raise UserError(f"{where}: a prompt that is JSON but no list of chat messages ({shown(raw[:60])}); not the "
                    f"prompt of seam.py export's seam_prompt.cjs")


def _judged(response: dict, attempt: Attempt) -> Outcome:
    """promptfoo's reading of a chat completion, judged as the runner judges an OpenAI reply."""
    return read_reply(response, _reading, (attempt,), root="response")


def _reading(response: dict) -> Reading:
    output = response.get("output")
    if isinstance(output, dict):  # a message with tool calls besides its text: promptfoo keeps the message
        output = output.get("content")
    finish = response.get("finishReason") if isinstance(response.get("finishReason"), str) else None
    if response.get("isRefusal") is True:  # promptfoo puts the refusal in place of the text; the runner records none
        return Reading(None, stop=finish, refusal=output if isinstance(output, str) else None,
                       usage=_usage(response.get("tokenUsage")))
    return Reading(output, stop=finish, usage=_usage(response.get("tokenUsage")))


def _usage(tokens) -> dict | None:
    """promptfoo's token counts in the OpenAI names they were read from: each it kept (a total the server did not
    send is absent, the others kept), but a prompt count of 0, which promptfoo writes for one the server did not
    send (no prompt is 0 tokens); none for an answer from its cache (no request was made)."""
    if not isinstance(tokens, dict) or "cached" in tokens:
        return None
    counts = {name: tokens[key] for name, key in (("prompt_tokens", "prompt"), ("completion_tokens", "completion"),
                                                   ("total_tokens", "total")) if _count(tokens.get(key))}
    if counts.get("prompt_tokens") == 0:
        del counts["prompt_tokens"]
    details = tokens.get("completionDetails")
    reasoning = details.get("reasoning") if isinstance(details, dict) else None
    if counts and _count(reasoning):
        counts["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return counts or None


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
