"""inspect_ai logs: a `.eval` file (a zip: `header.json` or, while a run is going, `_journal/start.json`, and one
`samples/<id>_epoch_<n>.json` member per sample) read member by member, or a `.json` log (one JSON document
with every sample) read whole up to `MAX_JSON_LOG_BYTES`.

Each sample becomes a `harness.rows.Collected`. The prompt is what the model call sent (the call's
`messages`, or the events' condensed copy that `call_refs` points into), else the sample's `input`. The reply:
when the log keeps the provider's chat completion (`events[model].call.response`, which inspect's OpenAI
clients record), it is judged by the runner's own code, so status and reason are a run's; otherwise (another
API, or a log without calls) inspect's own `output` is read: its text, `stop_reason` (`max_tokens` and
`model_length` are the output limit, `content_filter` a filter, anything but `stop` an unexpected stop) and
usage as inspect counts it. A sample with an `error` is failed with inspect's reason. Texts inspect stores
once for several places (`attachment://<hash>`) are put back from the sample's `attachments`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.records import Attempt, shown
from harness import TASK_NAME, jsonlog, zipread
from harness.rows import Collected, Reading, Stops, cut, failed, judged, read_reply, seconds, utc
from runner.ask import Outcome
from runner.config import ModelConfig
from runner.rows import named

MAX_JSON_LOG_BYTES = jsonlog.MAX_JSON_BYTES  # a .json log is one JSON document, read whole; .eval logs per sample
MAX_HEADER_BYTES = 16 << 20
ATTACHMENT = "attachment://"
# inspect's stop reasons (its output's stop_reason), as the runner's rules read a finish reason
STOPS = Stops("stop_reason", filtered=frozenset({"content_filter"}),
              truncated=frozenset({"max_tokens", "model_length"}), stopped=frozenset({"stop"}))


@dataclass(frozen=True)
class Header:
    """What the log says of the whole run."""

    path: Path
    task: str | None
    model: str | None  # inspect's model, e.g. openai-api/local/qwen
    base_url: str | None
    version: str | None  # of inspect_ai
    status: str | None  # success, error, cancelled, started
    generate: dict = field(default_factory=dict)  # the plan's GenerateConfig (max_tokens, temperature)

    def check_task(self) -> None:
        if self.task != TASK_NAME:
            raise UserError(f"{self.path}: a log of the task {shown(self.task)}, not of seam.py export's task "
                            f"{TASK_NAME!r} (seam_task.py)")


def header_of(data: dict, path: Path) -> Header:
    spec = data.get("eval") if isinstance(data.get("eval"), dict) else {}
    plan = data.get("plan") if isinstance(data.get("plan"), dict) else {}
    packages = spec.get("packages") if isinstance(spec.get("packages"), dict) else {}
    generate = plan.get("config") if isinstance(plan.get("config"), dict) else {}
    return Header(path, _str(spec.get("task")), _str(spec.get("model")), _str(spec.get("model_base_url")),
                  _str(packages.get("inspect_ai")), _str(data.get("status")), generate)


def _str(value) -> str | None:
    return value if isinstance(value, str) else None


def _parsed(data: bytes, where: str) -> dict:
    try:
        value = jsonl.parse(data)
    except jsonl.BadJson as exc:
        raise UserError(f"{where}: {exc.reason}; the log is damaged, or not an inspect log") from None
    if not isinstance(value, dict):
        raise UserError(f"{where}: {jsonl.kind(value)}, expected a JSON object; not an inspect log")
    return value


def read_log(path: Path) -> tuple[Header, Iterator[tuple[str, dict]]]:
    """The log's header and its samples, each with "LOG: member" for messages (a .eval file is read lazily)."""
    if path.suffix == ".json":
        document = jsonlog.read_document(path, "a .json log", f"import the .eval log (inspect's default, read sample "
                                         f"by sample) or convert it: inspect log convert {path} --to eval "
                                         "--output-dir DIR", "the log is damaged, or not an inspect log")
        if jsonlog.kind_of(document) != "inspect":
            raise UserError(f"{path}: {jsonlog.EXPECTED}")
        samples = document.get("samples") or []
        if not isinstance(samples, list):
            raise UserError(f"{path}: 'samples' is {jsonl.kind(samples)}, expected a list; not an inspect log")
        return header_of(document, path), ((f"{path}: samples[{i}]", s) for i, s in enumerate(samples))
    if path.suffix != ".eval":
        raise UserError(f"{path}: expected an inspect log (.eval or .json) or an OpenAI Batch file (.jsonl)")
    members = zipread.Members(path)
    try:
        name = next((n for n in ("header.json", "_journal/start.json") if n in members.infos), None)
        if name is None:
            raise UserError(f"{path}: neither header.json nor _journal/start.json in it; not an inspect log")
        header = header_of(_parsed(members.read(name, MAX_HEADER_BYTES), f"{path}: member {name}"), path)
    except BaseException:
        members.close()
        raise

    def samples() -> Iterator[tuple[str, dict]]:
        with members:
            for member in zipread.sample_members(members):
                where = f"{path}: member {member}"
                yield where, _parsed(members.read(member), where)

    return header, samples()


def resolved(value, attachments: dict, where: str):
    """`value` with every `attachment://<hash>` string replaced by the text the sample stores once. A string
    that only starts so (a reply, or a message, whose own text begins "attachment://") is kept as it is, as
    inspect itself reads it: a reference is one whose hash the sample's attachments hold. (A damaged log whose
    reference is lost shows as a message that is not the kit's, refused where it is compared.)"""
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            return attachments.get(value[len(ATTACHMENT):], value)
        return value
    if isinstance(value, dict):
        return {key: resolved(inner, attachments, where) for key, inner in value.items()}
    if isinstance(value, list):
        return [resolved(inner, attachments, where) for inner in value]
    return value


def collected(sample: dict, where: str, header: Header) -> Collected:
    """One sample as the kit's runner would have recorded its request."""
    rid, epoch = sample.get("id"), sample.get("epoch", 1)
    if not isinstance(rid, str) or not isinstance(epoch, int) or isinstance(epoch, bool):
        raise UserError(f"{where}: a sample whose id is {shown(rid)} and epoch {shown(epoch)}, expected a request "
                        "id of the kit (a string) and an epoch (a whole number)")
    where = f"{where} ({named(rid)})"
    attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
    events = [e for e in sample.get("events") or [] if isinstance(e, dict) and e.get("event") == "model"]
    calls = [resolved(e, attachments, where) for e in events]
    answered = [e for e in calls if not e.get("error") and _choices(e.get("output"))]
    if len(answered) > 1:
        raise UserError(f"{where}: {len(answered)} model calls answered; the exported task asks once (a solver "
                        "that asks again is not seam.py export's task)")
    attempts = tuple(_attempt(e, where) for e in calls)
    started = utc(sample.get("started_at") or (calls[0]["timestamp"] if calls else None), where, "started_at")
    finished = utc(sample.get("completed_at") or started, where, "completed_at")
    last = calls[-1] if calls else None
    body = _body(last, sample, attachments, header, where)
    messages = body.pop("messages")
    error = sample.get("error")
    output = resolved(sample.get("output"), attachments, where)
    chat = True  # the reply read is a chat completion the log keeps (or there is none: a failure)
    if answered:
        outcome, chat = _outcome(answered[0], output, header, body, where, attempts)
    elif not calls and not error and _choices(output):  # a log that keeps no model events: inspect's output
        chat = False
        outcome = _from_output(output, (Attempt(started_at=started, latency_s=None, http_status=None, error=None,
                                                retry_after=None, retry_wait_s=None),))
    elif isinstance(error, dict) or (last is not None and last.get("error")):
        message = (last or {}).get("error") or (error or {}).get("message") or "an error without a message"
        if not attempts:
            attempts = (Attempt(started_at=started, latency_s=None, http_status=None, error=cut(str(message)),
                                retry_after=None, retry_wait_s=None),)
        outcome = failed(f"inspect_ai: {str(message).strip()}", attempts)
    else:
        raise UserError(f"{where}: no output and no error: the sample did not finish (a run stopped early?); "
                        "run it again (inspect eval-retry LOG) and import the new log")
    harness = {"name": "inspect_ai", "version": header.version, "log": header.path.name, "model": header.model,
               "epoch": epoch}
    return Collected(rid, where, epoch, messages, replace(outcome, body=body), started, finished, harness,
                     chat=chat)


def _choices(output) -> list:
    choices = output.get("choices") if isinstance(output, dict) else None
    return choices if isinstance(choices, list) else []


def _attempt(event: dict, where: str) -> Attempt:
    call = event.get("call") if isinstance(event.get("call"), dict) else {}
    latency = seconds(call.get("time", (event.get("output") or {}).get("time") if isinstance(event.get("output"), dict)
                               else None))
    error = event.get("error")
    status = None if error else 200
    if isinstance(error, str) and error.startswith("Error code: ") and error[12:15].isdigit():
        status = int(error[12:15])  # the OpenAI client's "Error code: 400 - {...}"
    return Attempt(started_at=utc(event.get("timestamp"), where, "a model event's timestamp"), latency_s=latency,
                   http_status=status, error=cut(str(error)) if error else None, retry_after=None, retry_wait_s=None)


def _body(event: dict | None, sample: dict, attachments: dict, header: Header, where: str) -> dict:
    """The request body the harness sent, as far as its log keeps it: model, messages and parameters."""
    call = (event or {}).get("call") if isinstance((event or {}).get("call"), dict) else {}
    request = call.get("request") if isinstance(call.get("request"), dict) else {}
    key = call.get("call_key") or "messages"
    messages = request.get(key)
    if not isinstance(messages, list):
        pools = sample.get("events_data") if isinstance(sample.get("events_data"), dict) else {}
        if call.get("call_refs"):
            messages = _referenced(pools.get("calls"), call["call_refs"], attachments, where)
        elif event is not None and event.get("input"):
            messages = event["input"]
        elif event is not None and event.get("input_refs"):
            messages = _referenced(pools.get("messages"), event["input_refs"], attachments, where)
        else:  # no model call recorded (it failed before): what the sample asked
            given = resolved(sample.get("input"), attachments, where)
            messages = [{"role": "user", "content": given}] if isinstance(given, str) else given
    if not isinstance(messages, list):
        raise UserError(f"{where}: no messages in the model call; not a log of seam_task.py")
    skipped = {key, "extra_headers", "extra_body", "extra_query", "tools", "tool_choice"}
    params = {name: value for name, value in request.items() if name not in skipped and value is not None}
    if isinstance(request.get("extra_body"), dict):  # sent in the body, as the runner's [params]
        params.update(request["extra_body"])
    if not request:  # no call recorded: the task's generate config
        params = {name: value for name, value in header.generate.items() if name in ("max_tokens", "temperature")}
    params.setdefault("model", served_name(header.model))
    return {**params, "messages": messages}


def served_name(model: str | None) -> str | None:
    """The model inspect asked for, without its provider prefix (openai-api/local/qwen: qwen)."""
    return model.rsplit("/", 1)[-1] if model else None


def _referenced(pool, refs, attachments: dict, where: str) -> list:
    if not isinstance(pool, list) or not isinstance(refs, list):
        raise UserError(f"{where}: the model call refers to messages the sample does not hold; the log is damaged")
    found = []
    for ref in refs:
        if not (isinstance(ref, list) and len(ref) == 2 and all(isinstance(i, int) for i in ref)
                and 0 <= ref[0] <= ref[1] <= len(pool)):
            raise UserError(f"{where}: a message reference {shown(ref)} outside the sample's {len(pool)}; damaged log")
        found += pool[ref[0]:ref[1]]
    return resolved(found, attachments, where)


def _outcome(event: dict, output, header: Header, body: dict, where: str, attempts: tuple) -> tuple[Outcome, bool]:
    """The answered call's outcome, and whether it was read from a chat completion (else from inspect's output)."""
    call = event.get("call") if isinstance(event.get("call"), dict) else {}
    response = call.get("response")
    config = ModelConfig(path=where, name="import", provider="openai", model=str(body.get("model") or ""),
                         base_url=header.base_url or "")
    if isinstance(response, dict) and isinstance(response.get("choices"), list) and not call.get("error"):
        if isinstance(response.get("usage"), dict):
            response = {**response, "usage": without_nulls(response["usage"])}
        verdict = judged(response, 200, attempts[-1].started_at, attempts[-1].latency_s, config)
        return replace(verdict, attempts=(*attempts[:-1], *verdict.attempts)), True
    return _from_output(output if isinstance(output, dict) else event.get("output") or {}, attempts), False


def without_nulls(usage: dict) -> dict:
    """A usage object as the server sent it, before the OpenAI SDK that inspect records it through added every
    field it knows with null (`completion_tokens_details: null`, `audio_tokens: null`): a null count says no
    more than an absent one, and without them the row's usage is the runner's for the same reply.

    >>> without_nulls({"prompt_tokens": 9, "details": {"cached_tokens": 0, "audio_tokens": None}, "x": None})
    {'prompt_tokens': 9, 'details': {'cached_tokens': 0}}
    """
    return {key: without_nulls(value) if isinstance(value, dict) else value
            for key, value in usage.items() if value is not None}


def _from_output(output: dict, attempts: tuple) -> Outcome:
    """inspect's own record of the reply (another API than chat completions): read as the runner reads one, its
    message's text parts joined (reasoning parts left out, as the runner leaves thinking out)."""
    return read_reply(output, _reading, attempts, root="output", stops=STOPS)


def _reading(output: dict) -> Reading:
    choice = _choices(output)[0] if isinstance(_choices(output)[0], dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    stop = _str(choice.get("stop_reason"))
    stop = None if stop == "unknown" else stop  # inspect's word for a reply that gave none: the runner's None
    return Reading(message.get("content"), stop=stop, served_model=_str(output.get("model")),
                   usage=output.get("usage") if isinstance(output.get("usage"), dict) else None,
                   response_id=_str(output.get("response_id")))
