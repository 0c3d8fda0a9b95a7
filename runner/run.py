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

Each attempt is noted in `<out>.sent` before it goes out (`runner.sent`), so that an attempt in flight
when the run is killed is recorded, in the row of its request's next ask, as sent with its answer lost.

Each row is written through `trace_line`: the key redacted from every string
in every spelling (`runner.apikey`), and the dumped line checked once more.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.records import Request, shown
from common.traces import TraceFile, scan, torn_message
from runner import providers, traces
from runner.apikey import placeholder_headers, read_secrets
from runner.batch import journal as batch_journal
from runner.batch.journal import in_flight
from runner.config import ModelConfig
from runner.pending import PendingWaits
from runner.retry import RetryPolicy
from runner.rows import FINGERPRINT, check_key_not_recorded, json_shown, named, public_url, request_record
from runner.schedule import ask_all
from runner.selection import check_unique_ids
from runner.sent import SentNotes


@dataclass(frozen=True)
class RunSummary:
    selected: int
    skipped: int
    asked: int
    counts: dict  # status -> rows written this run
    stopped: str | None  # why the run stopped early, if it did (printable: runner.terminal)
    moved_torn: str | None  # where a torn tail was moved
    unreachable: bool = False  # stopped because base_url could not be reached at all: nothing was recorded


def plan(config: ModelConfig, requests: list[Request], trace: TraceFile, *, retry_unusable: bool,
         retry_failed: bool) -> tuple[list[Request], int]:
    """The requests to ask now, and how many are skipped; refuses a trace this run must not extend."""
    provider = providers.get(config.provider)
    url, _, body = providers.build(provider, config, "")
    mine = request_record(config, url, body)
    for row_id, row in trace.final.items():
        where = trace.where[row_id]
        if row.model != config.name:
            raise UserError(f"{where}: this trace is for model {shown(row.model)}, the config "
                            f"{config.path} is {config.name!r}; use a different --out")
        for key in FINGERPRINT:
            if row.request.get(key) != mine[key]:
                raise UserError(f"{where}: this trace was made with request {key} "
                                f"{json_shown(row.request.get(key))}, the config {config.path} "
                                f"now gives {json_shown(mine[key])}; use a different --out")
    todo, skipped = [], 0
    for request in requests:
        done = trace.final.get(request.id)
        if done is not None:
            where = trace.where[request.id]
            for key, theirs, value in (("benchmark_sha256", done.benchmark_sha256, request.benchmark_sha256),
                                       ("message_sha256", done.message_sha256, request.conversation.sha256)):
                if theirs != value:
                    what = "the benchmark or the condition's layout"
                    if request.earlier:  # a later turn holds a reply: --replies of another run changes it
                        what += " or the earlier turns (a reply from --replies)"
                    raise UserError(f"{where}: {named(request.id)} was run with {key} {named(theirs)}, the "
                                    f"request now has {value}; {what} changed, use a new --out")
            again = ((done.status == "unusable" and retry_unusable)
                     or (done.status == "failed" and retry_failed))
            if not again:
                skipped += 1
                continue
        todo.append(request)
    return todo, skipped


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


def settle_torn(out: Path, log) -> None:
    """Move a torn last line of `out` aside now, under the trace's lock (as `run` does when it starts), for a
    command that must read `out` whole before the run opens it (`--replies` naming the `--out` trace)."""
    with traces.TraceWriter(out):
        prepare_trace(out, move_torn=True, log=log)


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
    api_key = read_secrets(config)
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
        sent = SentNotes(out, trace)
        unreachable = False
        try:
            if todo:
                counts, stopped, unreachable = ask_all(config, todo, trace, writer, api_key=api_key, policy=policy,
                                                       log=log, notes=pending, waits=waits, answered=answered,
                                                       sent=sent)
        finally:
            pending.tidy(answered)
            sent.tidy(answered)
    return RunSummary(len(requests), skipped, sum(counts.values()), dict(counts), stopped, moved, unreachable)


def to_send(config: ModelConfig, requests: list[Request], out: str | Path | None, *, retry_unusable: bool = False,
            retry_failed: bool = False, move_torn: bool = False, log=None) -> list[Request]:
    """The requests a run would send, in order, reading `out` (when given) but writing nothing. A torn last line
    is refused as a run refuses it; with `move_torn`, as the run would move it aside, the requests are those
    after that (its own asked again), and `log` is told that nothing was moved."""
    check_unique_ids(requests)
    todo = requests
    if out is not None:
        trace = scan(out)
        if trace.torn and not move_torn:
            raise UserError(torn_message(Path(out), trace.torn))
        if trace.torn and log is not None:
            log.write(f"run: {out}:{trace.torn.line}: the last line is torn ({trace.torn.size} bytes); the run "
                      f"would move it to {Path(out).name}.torn-<time> first and ask its request again; nothing "
                      "is moved now\n")
        todo, _ = plan(config, requests, trace, retry_unusable=retry_unusable, retry_failed=retry_failed)
        at_provider = in_flight(out)
        todo = [request for request in todo if request.id not in at_provider]  # in an open batch: not sent again
    return todo


def dry_run(config: ModelConfig, requests: list[Request], out: str | Path | None, stream, *,
            retry_unusable: bool = False, retry_failed: bool = False, move_torn: bool = False, log=None) -> int:
    """Print the exact requests a run would send (one JSON line each), sending nothing (`to_send`).

    The key is never read: its header shows the variable's name instead, as do `[headers_env]`'s.
    """
    todo = to_send(config, requests, out, retry_unusable=retry_unusable, retry_failed=retry_failed,
                   move_torn=move_torn, log=log)
    provider = providers.get(config.provider)
    for request in todo:
        url, headers, body = providers.build(provider, config, request.conversation)
        headers = {**headers, **placeholder_headers(provider, config)}
        stream.write(jsonl.dumps({"id": request.id, "method": "POST", "url": public_url(url), "headers": headers,
                                  "body": body}))
    return len(todo)
