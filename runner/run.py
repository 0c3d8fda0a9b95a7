"""Run requests against one model: resume, ask with bounded concurrency, append a trace row each.

Order of business, each step before any request is sent:
1. read the API key (a missing variable stops here);
2. lock the trace (a second run on it is refused), then read it
   (`common.traces.scan`): refuse a torn tail unless asked to move it aside; refuse a
   trace made for another model name, other request parameters, or another
   rendering of the same id (benchmark or message checksum);
3. skip ids whose final row is final for this run (ok always; unusable and
   failed unless --retry-unusable / --retry-failed);
then worker threads (at most `concurrency`) ask the rest and append one row
each as it finishes. A 401/403/404 stops the run: the other requests would
get the same answer; so do three requests in a row that use up all their retries.

A request that a server asked to wait (Retry-After) is not asked again before
that time, even across a kill: the wait is noted durably before it starts
(`runner.pending`) and read back, with the trace's own rows, on the next run.

Each row is written through `trace_line`: the key redacted from every string
in every spelling (`runner.apikey`), and the dumped line checked once more.
"""

from __future__ import annotations

import json
import queue
import re
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.files import sha256_text
from common.records import Request, TraceRow, shown
from common.traces import TraceFile, scan, torn_message
from runner import RUNNER_VERSION, providers, traces
from runner.apikey import REDACTED, leaks, read_api_key, redact, redact_value
from runner.ask import Outcome, ask, reply_reason, sanitize
from runner.batch import journal as batch_journal
from runner.batch.journal import in_flight
from runner.config import ModelConfig
from runner.pacing import Pacer
from runner.pending import PendingWaits, Wait, utc
from runner.progress import Progress
from runner.retry import RetryPolicy
from runner.selection import check_unique_ids
from runner.transport import utc_now

# This many requests in a row giving up after all their retries means the server is down:
# stop rather than let every remaining request burn its retries one by one.
MAX_CONSECUTIVE_GIVE_UPS = 3
MESSAGE_KEYS = ("model", "messages", "contents")  # body keys recorded elsewhere than `parameters`
FINGERPRINT = ("provider", "model", "parameters")  # must match to append to an existing trace


@dataclass(frozen=True)
class RunSummary:
    selected: int
    skipped: int
    asked: int
    counts: dict  # status -> rows written this run
    stopped: str | None  # why the run stopped early, if it did
    moved_torn: str | None  # where a torn tail was moved


def public_url(url: str) -> str:
    """`url` without any user:password@ (the config refuses them; this keeps them out of every record anyway)."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@", r"\1", url)  # never raises, whatever the URL


def request_record(config: ModelConfig, url: str, body: dict) -> dict:
    """What was asked, minus the message: provider, endpoint, model and every parameter sent."""
    return {
        "provider": config.provider,
        "url": public_url(url),
        "model": config.model,
        "parameters": {key: value for key, value in body.items() if key not in MESSAGE_KEYS},
        "max_tokens": config.max_tokens,
        "temperature": config.temperature,
        "timeout_s": config.timeout_s,
        "concurrency": config.concurrency,
        "max_retries": config.max_retries,
        "requests_per_minute": config.requests_per_minute,
        "api_key_env": config.api_key_env,
    }


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
        request=request_record(config, outcome.url, outcome.body),
        attempts=outcome.attempts,
        previous=previous,
        started_at=started_at,
        finished_at=finished_at,
        benchmark_sha256=request.benchmark_sha256,
        message_sha256=sha256_text(request.message),
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


def check_key_not_recorded(config: ModelConfig, requests: list[Request], api_key: str | None) -> None:
    """Refuse, before anything is sent, a key spelled in what every row records as is (ids, model, URL):
    redacted there, the rows would no longer name their request."""
    if api_key is None:
        return
    for text, what in [(config.name, "the config's name"), (config.model, "the config's model"),
                       (config.base_url, "the config's base_url")]:
        if leaks(text, api_key):
            raise UserError(f"{config.path}: the API key appears in {what}; it would be written into every row")
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


def plan(config: ModelConfig, requests: list[Request], trace: TraceFile, *, retry_unusable: bool,
         retry_failed: bool) -> tuple[list[Request], int]:
    """The requests to ask now, and how many are skipped; refuses a trace this run must not extend."""
    provider = providers.get(config.provider)
    url, _, body = provider.build_request(config, "")
    mine = request_record(config, url, body)
    for row_id, row in trace.final.items():
        where = trace.where[row_id]
        if row.model != config.name:
            raise UserError(f"{where}: this trace is for model {shown(row.model)}, the config "
                            f"{config.path} is {config.name!r}; use a different --out")
        for key in FINGERPRINT:
            if row.request.get(key) != mine[key]:
                raise UserError(f"{where}: this trace was made with request {key} "
                                f"{_json(row.request.get(key))}, the config {config.path} "
                                f"now gives {_json(mine[key])}; use a different --out")
    todo, skipped = [], 0
    for request in requests:
        done = trace.final.get(request.id)
        if done is not None:
            where = trace.where[request.id]
            for key, theirs, value in (("benchmark_sha256", done.benchmark_sha256, request.benchmark_sha256),
                                       ("message_sha256", done.message_sha256, sha256_text(request.message))):
                if theirs != value:
                    raise UserError(f"{where}: {named(request.id)} was run with {key} {named(theirs)}, the "
                                    f"request now has {value}; the benchmark or the condition's layout changed, "
                                    "use a new --out")
            again = ((done.status == "unusable" and retry_unusable)
                     or (done.status == "failed" and retry_failed))
            if not again:
                skipped += 1
                continue
        todo.append(request)
    return todo, skipped


def named(text: str) -> str:
    """An id (or other recorded name) for a message: as is when short and printable, else `shown`."""
    return text if len(text) <= 80 and text.isprintable() else shown(text)


def _json(value) -> str:
    """A recorded value for a message: canonical JSON, cut short."""
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 200 else text[:200] + f"… ({len(text):,} characters)"


def prepare_trace(out: Path, *, move_torn: bool, log) -> tuple[TraceFile, str | None]:
    trace = scan(out)
    if trace.torn is None:
        return trace, None
    if not move_torn:
        raise UserError(torn_message(out, trace.torn))
    aside = traces.move_torn(out, trace.torn)
    log.write(f"run: moved the torn last line of {out} (line {trace.torn.line}, {trace.torn.size} bytes) "
              f"to {aside}\n")
    return scan(out), str(aside)


def run(config: ModelConfig, requests: list[Request], out: str | Path, *, retry_unusable: bool = False,
        retry_failed: bool = False, move_torn: bool = False, log=None,
        policy: RetryPolicy | None = None) -> RunSummary:
    """Ask every selected request that has no final row yet and append its trace row to `out`.

    `log` (default: stderr at call time) gets the progress line and notices. `policy`
    defaults to the config's max_retries with the standard waits (tests shorten the waits).
    """
    out = Path(out)
    log = sys.stderr if log is None else log
    check_unique_ids(requests)
    api_key = read_api_key(config)
    check_key_not_recorded(config, requests, api_key)
    # Opened before the trace is read: the writer's lock keeps a second run off this trace.
    with traces.TraceWriter(out) as writer:
        trace, moved = prepare_trace(out, move_torn=move_torn, log=log)
        todo, skipped = plan(config, requests, trace, retry_unusable=retry_unusable, retry_failed=retry_failed)
        at_provider = in_flight(out) & {request.id for request in todo}
        if at_provider:
            raise UserError(f"{out}: {len(at_provider):,} of these requests are in a batch still open at the provider "
                            f"({batch_journal.path_for(out)}); run with --batch to collect it, or --batch "
                            "--batch-cancel to cancel it, before asking them here")
        if skipped:
            log.write(f"run: {skipped} of {len(requests)} requests already have a final row in {out}; skipped\n")
        counts, stopped = Counter(), None
        policy = policy or RetryPolicy(max_retries=config.max_retries)
        pending = PendingWaits(out)
        now = time.time()
        waits = {}
        for request in todo:
            wait = pending.until(request.id, trace.final.get(request.id), policy)
            if wait is not None and wait.until > now:
                waits[request.id] = wait
        answered: set[str] = set()
        try:
            if todo:
                counts, stopped = ask_all(config, todo, trace, writer, api_key=api_key, policy=policy, log=log,
                                          notes=pending, waits=waits, answered=answered)
        finally:
            pending.tidy(answered)
    return RunSummary(len(requests), skipped, sum(counts.values()), dict(counts), stopped, moved)


def ask_all(config: ModelConfig, todo: list[Request], trace: TraceFile, writer: traces.TraceWriter, *,
            api_key: str | None, policy: RetryPolicy, log, notes: PendingWaits | None = None,
            waits: dict[str, Wait] | None = None,
            answered: set[str] | None = None) -> tuple[Counter, str | None]:
    """Ask `todo` on worker threads, appending a row each; the counts per status, and why it stopped early.

    A request in `waits` is first held until the time its server allowed (with a notice); each
    Retry-After wait that starts is noted in `notes`; the ids that got a row go into `answered`.
    """
    import requests

    waits = waits or {}
    answered = set() if answered is None else answered

    provider = providers.get(config.provider)
    stop = threading.Event()
    pacer = Pacer(config.requests_per_minute, sleep=stop.wait)
    pending: queue.SimpleQueue = queue.SimpleQueue()
    for request in todo:
        pending.put(request)
    lock = threading.Lock()
    counts: Counter = Counter()
    stopped: list[str] = []
    give_ups = [0]  # consecutive requests that used up their retries
    errors: list[BaseException] = []
    progress = Progress(log, len(todo))

    def sleep(seconds: float) -> bool:
        return not stop.wait(seconds)

    def pace() -> bool:
        pacer.wait()
        return not stop.is_set()

    def work() -> None:
        session = requests.Session()
        try:
            while not stop.is_set():
                try:
                    request = pending.get_nowait()
                except queue.Empty:
                    return
                wait = waits.get(request.id)
                remaining = wait.until - time.time() if wait else 0.0
                if remaining > 0:
                    header = (wait.retry_after or "")[:40]
                    with lock:
                        progress.notice(redact(
                            f"run: {named(request.id)}: the server asked at {utc(wait.noted_at)} (Retry-After: "
                            f"{header}) not to be asked again before {utc(wait.until)}; waiting {remaining:.1f} s "
                            "before asking it", api_key))
                    if not sleep(remaining):
                        return

                def note_wait(until: float, header: str, request_id: str = request.id) -> None:
                    if notes is not None:
                        notes.note(request_id, until, header, redact=lambda text: redact(text, api_key))

                started_at = utc_now()
                outcome = ask(session=session, provider=provider, config=config, message=request.message,
                              api_key=api_key, request_id=request.id, policy=policy, pace=pace,
                              sleep=sleep, note_wait=note_wait)
                if outcome is None:  # abandoned: the run is stopping; no row, so it is asked next time
                    return
                done = trace.final.get(request.id)
                row = trace_row(config, request, outcome, earlier(done) if done else (), started_at, utc_now())
                writer.append(trace_line(row, api_key))
                with lock:
                    answered.add(request.id)
                    counts[outcome.status] += 1
                    give_ups[0] = give_ups[0] + 1 if outcome.exhausted else 0
                    if outcome.fatal and not stopped:
                        stopped.append(f"{named(request.id)}: {outcome.reason}")
                        stop.set()
                    elif give_ups[0] >= MAX_CONSECUTIVE_GIVE_UPS and not stopped:
                        stopped.append(f"{give_ups[0]} requests in a row gave up after all their retries, "
                                       f"the server looks down (last, {named(request.id)}: {outcome.reason})")
                        stop.set()
        except BaseException as exc:  # a bug: stop everyone and re-raise in the main thread
            with lock:
                errors.append(exc)
            stop.set()
        finally:
            session.close()

    threads = [threading.Thread(target=work, daemon=True, name=f"seam-run-{i}")
               for i in range(min(config.concurrency, len(todo)))]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
                with lock:
                    progress.update(sum(counts.values()), counts)
    except KeyboardInterrupt:
        stop.set()
        raise
    progress.update(sum(counts.values()), counts, final=True)
    if errors:
        raise errors[0]
    return counts, stopped[0] if stopped else None


def dry_run(config: ModelConfig, requests: list[Request], out: str | Path | None, stream, *,
            retry_unusable: bool = False, retry_failed: bool = False) -> int:
    """Print the exact requests a run would send (one JSON line each), sending nothing.

    The key is never read: its header shows the variable's name instead.
    """
    check_unique_ids(requests)
    todo = requests
    if out is not None:
        trace = scan(out)
        if trace.torn:
            raise UserError(torn_message(Path(out), trace.torn))
        todo, _ = plan(config, requests, trace, retry_unusable=retry_unusable, retry_failed=retry_failed)
        at_provider = in_flight(out)
        todo = [request for request in todo if request.id not in at_provider]  # in an open batch: not sent again
    provider = providers.get(config.provider)
    for request in todo:
        url, headers, body = provider.build_request(config, request.message)
        if config.api_key_env:
            placeholder = provider.auth_headers(f"${{{config.api_key_env}}}")
            headers = {**headers, **placeholder}
        stream.write(jsonl.dumps({"id": request.id, "method": "POST", "url": public_url(url), "headers": headers,
                                  "body": body}))
    return len(todo)
