"""lm-evaluation-harness's `--log_samples` output: `samples_<task>_<date>.jsonl` and the results file of the same run.

lm-eval writes, under `--output_path`, one `samples_<task>_<date>.jsonl` per task (a line per document: the `doc`,
the `arguments` it built and the replies in `resps`) and one `results_<date>.json` beside it (`<name>_<date>.json`
for an --output_path ending in .json) naming the model, its `model_args`, lm-eval's version, the run's start
(`date`), and how many samples each task ran (`n-samples`). The samples file holds no model, so each is
read with its results file: the one given among the LOGs with the same date, else the one beside it.

What a sample carries, as lm-eval 0.4.13's `local-chat-completions` model writes it (verified against the kit's
fake server): `arguments.gen_args_0.arg_0` is the chat it sent, a JSON text of the messages list (inside a list
of one, the way a named tuple is written), and `arg_1` the gen kwargs from which it builds the body (`max_tokens`
from `max_gen_toks`, `stop` from `until`, `seed` from model_args unless the kwargs set them: `body`); `resps`
holds the reply's text only. It keeps no finish reason, no usage, no served model, no HTTP status and no times:
rows have usage and finish reason null (unknown, not zero), and their times are the run's start. A reply
cut by the token limit cannot be told from a whole one and is ok by the runner's rules for a text (an empty text
is unusable, a lone surrogate escape U+FFFD and unusable, a text over the trace's limit cut and unusable).
lm-eval records no failed request either: one that fails three times ends its whole run. A reply holding a lone
surrogate stops its sample writer ("Could not save sample results"), leaving the file short: the count is checked
against `n-samples`. Files are read a line at a time, each line at most `MAX_LINE_BYTES`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.reading import read_bytes
from common.records import Attempt, shown
from harness import TASK_NAME
from harness.rows import Collected, Reading, public_url, read_reply, utc
from runner.rows import named

MAX_LINE_BYTES = 64 << 20
MAX_RESULTS_BYTES = 64 << 20
MODEL = "local-chat-completions"  # the lm-eval model the exported README runs, whose body `body` rebuilds
DEFAULTS = {"max_gen_toks": 256, "seed": 1234}  # TemplateAPI's, where --model_args does not set them
_DATE = r"(?P<date>\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d(?:\.\d+)?)"  # datetime.isoformat() with ':' made '-'
SAMPLES = re.compile(rf"samples_(?P<task>.+)_{_DATE}\.jsonl")
RESULTS = re.compile(rf".+_{_DATE}\.json")
SPENT = ("until", "max_gen_toks", "max_tokens", "temperature", "do_sample", "stop", "seed")  # not sent as they are
NO_TOKENIZER = (None, "None", "none")  # tokenizer_backend values loading no tokenizer (local-chat-completions')


def is_lmeval(path: Path) -> bool:
    """A file lm-eval names: samples_<task>_<date>.jsonl, or a results file <name>_<date>.json."""
    return bool(SAMPLES.fullmatch(path.name) or RESULTS.fullmatch(path.name))


@dataclass(frozen=True)
class Run:
    """What a results file says of the run that wrote a samples file."""

    path: Path
    version: str | None  # lm_eval_version
    model: str | None  # model_args' model: what every body names
    model_args: dict
    base_url: str | None
    samples: int | None  # n-samples of the task (effective): how many lines the samples file should hold
    time: str  # every row's started_at and finished_at: lm-eval keeps no time per request


def runs(paths: list[Path]) -> list[tuple[Path, Run]]:
    """Each samples file given, with what its results file says (given with the same date, else beside it)."""
    given = {RESULTS.fullmatch(p.name)["date"]: p for p in paths if RESULTS.fullmatch(p.name)}
    found = []
    for path in (p for p in paths if SAMPLES.fullmatch(p.name)):
        match = SAMPLES.fullmatch(path.name)
        if match["task"] != TASK_NAME:
            raise UserError(f"{path}: the samples of lm-eval's task {shown(match['task'])}, not of seam.py export's "
                            f"task {TASK_NAME!r} ({path.parent}/samples_{TASK_NAME}_*.jsonl)")
        date = match["date"]
        results = given.pop(date, None) or _beside(path, date)
        found.append((path, read_run(results, path)))
    if given:
        orphan = next(iter(given.values()))
        raise UserError(f"{orphan}: lm-eval's results file, but no samples file of its run is given "
                        f"(samples_{TASK_NAME}_{RESULTS.fullmatch(orphan.name)['date']}.jsonl beside it)")
    return found


def _beside(path: Path, date: str) -> Path:
    candidates = sorted(path.parent.glob(f"*_{date}.json"))
    if len(candidates) != 1:
        said = "none" if not candidates else f"{len(candidates)} ({', '.join(c.name for c in candidates)})"
        raise UserError(f"{path}: expected lm-eval's results file of the same run beside it (results_{date}.json, "
                        f"which names the model and lm-eval's version), found {said}; give it as a LOG too")
    return candidates[0]


def read_run(path: Path, samples: Path) -> Run:
    """The results file: lm-eval's version, the model and its arguments, the run's times and sample count."""
    try:
        document = jsonl.parse(read_bytes(path, "lm-eval's results file (JSON)", limit=MAX_RESULTS_BYTES))
    except jsonl.BadJson as exc:
        raise UserError(f"{path}: {exc.reason}; expected lm-eval's results file (JSON)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if not isinstance(document, dict) or "lm_eval_version" not in document:
        raise UserError(f"{path}: no lm_eval_version in it; expected the results file lm-eval writes with "
                        f"{samples.name}")
    config = _dict(document.get("config"))
    kind = config.get("model")
    if kind != MODEL:
        raise UserError(f"{path}: a run of lm-eval's model {shown(kind)}; the import reads runs of {MODEL!r} (the "
                        "exported README's command), whose request body it knows")
    configs = _dict(document.get("configs"))
    if TASK_NAME not in configs:
        raise UserError(f"{path}: a run of the task(s) {', '.join(map(shown, configs)) or 'none'}, not of "
                        f"{TASK_NAME!r}; give the results file of the run that wrote {samples.name}")
    model_args = _model_args(config.get("model_args"))
    if model_args.get("think_end_token"):
        raise UserError(f"{path}: a run with think_end_token {shown(model_args['think_end_token'])[:60]} in its "
                        "--model_args, with which lm-eval keeps only the text after that token, not the reply the "
                        "server sent; run the exported task without it")
    count = _dict(_dict(document.get("n-samples")).get(TASK_NAME)).get("effective")
    version = document.get("lm_eval_version")
    model, base_url = model_args.get("model") or model_args.get("pretrained"), model_args.get("base_url")
    return Run(path, version if isinstance(version, str) else None, model if isinstance(model, str) else None,
               model_args, public_url(base_url),
               count if isinstance(count, int) and not isinstance(count, bool) else None,
               _time(document, path, samples))


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _model_args(value) -> dict:
    """model_args as lm-eval records them: an object (0.4.13), or the "k=v,k=v" text of older versions."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        pairs = (part.split("=", 1) for part in value.split(",") if "=" in part)
        return {key.strip(): _number(text.strip()) for key, text in pairs}
    return {}


def _number(text: str):
    return int(text) if re.fullmatch(r"-?\d{1,18}", text) else text


def _time(document: dict, path: Path, samples: Path) -> str:
    """A row's started_at and finished_at: the run's start (`date`, Unix seconds; lm-eval keeps no time per request
    and no wall-clock end), else the samples file's modification time."""
    date = document.get("date")
    if isinstance(date, int | float) and not isinstance(date, bool) and math.isfinite(date):
        return utc(date, str(path), "date")
    return utc(os.stat(samples).st_mtime, str(samples), "the file's modification time")


def lines(path: Path) -> Iterator[tuple[str, object]]:
    """("FILE:line", value) for each line of a samples file, read a line at a time (`common.jsonl.stream`)."""
    return jsonl.stream(path, "a samples file of lm-eval's --log_samples (one sample per line)",
                        max_line_bytes=MAX_LINE_BYTES)


def samples(path: Path, run: Run) -> Iterator[Collected]:
    """Each sample of the file, as the kit's runner would have recorded its request; then the count is checked."""
    count = 0
    for where, sample in lines(path):
        count += 1
        yield collected(sample, where, path, run)
    if run.samples is not None and count != run.samples:
        raise UserError(f"{path}: {count} sample(s), but {run.path.name} says lm-eval ran {run.samples}: it could "
                        "not write them all (a reply holding a lone surrogate stops its writer with 'Could not save "
                        "sample results'); run those requests again")


def collected(sample, where: str, path: Path, run: Run) -> Collected:
    doc = sample.get("doc") if isinstance(sample, dict) else None
    rid = doc.get("id") if isinstance(doc, dict) else None
    if not isinstance(rid, str):
        raise UserError(f"{where}: a sample whose doc has no kit request id ({shown(sample)[:120]}); a sample of "
                        f"another task, not of seam.py export's {TASK_NAME!r}")
    where = f"{where} ({named(rid)})"
    arguments = sample.get("arguments")
    if not isinstance(arguments, dict) or list(arguments) != ["gen_args_0"] or not isinstance(
            arguments["gen_args_0"], dict):
        raise UserError(f"{where}: arguments {shown(arguments)[:120]}, expected lm-eval's one generate_until "
                        "request (gen_args_0: the chat and the gen kwargs)")
    messages = _messages(arguments["gen_args_0"].get("arg_0"), where)
    body = _body(arguments["gen_args_0"].get("arg_1"), run, where)
    text = _reply(sample.get("resps"), where)
    attempt = Attempt(started_at=run.time, latency_s=None, http_status=None, error=None, retry_after=None,
                      retry_wait_s=None)
    harness = {"name": "lm-eval", "version": run.version, "log": path.name, "results": run.path.name,
               "model": run.model, "model_type": MODEL, "base_url": run.base_url}
    outcome = read_reply(text, Reading, (attempt,), root="resps[0][0]", keep=False)  # a text: no stop, no usage
    return Collected(rid, where, 1, messages, replace(outcome, body=body), run.time, run.time, harness, chat=False)


def _messages(value, where: str) -> list:
    """The chat lm-eval sent: the JSON text of a messages list (in a list of one: its JsonChatStr)."""
    text = value[0] if isinstance(value, list) and len(value) == 1 else value
    chat = None
    if isinstance(text, str) and text.startswith("["):
        try:
            chat = jsonl.parse(text)
        except jsonl.BadJson:
            chat = None
    if not isinstance(chat, list) or not all(isinstance(message, dict) for message in chat):
        raise UserError(f"{where}: the prompt lm-eval built is {shown(value)[:120]}, not a list of chat messages; "
                        f"run the task with --model {MODEL} --apply_chat_template, as the exported README says")
    return chat


def body(kwargs: dict, model_args: dict, model: str | None) -> dict:
    """The body lm-eval's local-chat-completions model sends for these gen kwargs (messages aside): max_tokens is
    the kwargs' max_tokens, else max_gen_toks, else model_args'; stop is `until` with model_args' eos_string,
    unless the kwargs give `stop`; seed is model_args' unless the kwargs give it; other kwargs go as they are."""
    sent = {"model": model}
    if "max_tokens" in kwargs:
        sent["max_tokens"] = kwargs["max_tokens"]
        rest = {k: v for k, v in kwargs.items() if k not in SPENT or k == "max_gen_toks"}
    else:
        sent["max_tokens"] = kwargs.get("max_gen_toks", model_args.get("max_gen_toks", DEFAULTS["max_gen_toks"]))
        rest = {k: v for k, v in kwargs.items() if k not in SPENT}
    sent["temperature"] = kwargs.get("temperature", 0)
    until = kwargs.get("until")
    until = [until] if isinstance(until, str) else list(until) if isinstance(until, list) else []
    eos = model_args.get("eos_string")
    if isinstance(eos, str) and eos and eos not in until:
        until.append(eos)
    sent["stop"] = kwargs["stop"] if "stop" in kwargs else until[:4]
    sent["seed"] = kwargs["seed"] if "seed" in kwargs else model_args.get("seed", DEFAULTS["seed"])
    return {**sent, **rest}


def _body(kwargs, run: Run, where: str) -> dict:
    if not isinstance(kwargs, dict):
        raise UserError(f"{where}: gen kwargs {shown(kwargs)[:120]}, expected an object (arguments' arg_1)")
    for name in ("until", "stop"):  # what lm-eval reads as stop sequences: a text, a list of texts, or nothing
        value = kwargs.get(name)
        if not (value is None or isinstance(value, str) or (isinstance(value, list)
                                                            and all(isinstance(item, str) for item in value))):
            raise UserError(f"{where}: gen kwargs' {name} is {shown(value)[:80]}, expected stop sequences (a text, a "
                            "list of texts, or null); not a samples file lm-eval wrote for the exported task")
    backend = run.model_args.get("tokenizer_backend")
    if backend not in NO_TOKENIZER and "stop" not in kwargs:
        raise UserError(f"{where}: a run with tokenizer_backend {shown(backend)[:40]} in its --model_args, whose "
                        "tokenizer's end-of-text string lm-eval sends as a stop sequence (the task's stop: null is "
                        "missing from its gen kwargs); run the exported task as it is, without tokenizer_backend")
    sent = body(kwargs, run.model_args, run.model)
    stop = sent["stop"]
    if (isinstance(stop, str) and stop) or (isinstance(stop, list) and any(stop)):
        raise UserError(f"{where}: lm-eval sent the stop sequences {shown(stop)} (its gen kwargs: until "
                        f"{shown(kwargs.get('until'))}), which the kit's runner never sends, so its replies end where "
                        "the runner's do not; run the exported task as it is (no --gen_kwargs, no eos_string)")
    return sent


def _reply(resps, where: str) -> str:
    """The reply's text, as lm-eval read it: `resps` is [[text]] (one request, one repeat)."""
    if not (isinstance(resps, list) and len(resps) == 1 and isinstance(resps[0], list) and resps[0]):
        raise UserError(f"{where}: no response (resps {shown(resps)[:80]}); the sample did not finish, or is not "
                        "lm-eval's")
    if len(resps[0]) != 1 or not isinstance(resps[0][0], str):
        raise UserError(f"{where}: resps {shown(resps)[:120]}, expected one text (the task asks once: repeats 1)")
    return resps[0][0]
