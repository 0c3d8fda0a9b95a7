"""`seam.py run --batch`: submit the requests as provider batches, wait, and write one trace row each.

Order of business, on the same checks as the synchronous run (`runner.run`: the key, the trace's
lock, its fingerprint, the ids to skip):
1. the journal (`<trace>.batches`, `runner.batch.journal`) is read: a submission journaled as
   submitting but never as created (a kill in between) is looked for at the provider and adopted,
   or, when it never arrived, abandoned;
2. the ids to ask that no open submission holds are submitted, in as few batches as the provider's
   limits allow, each journaled before and after its creation;
3. every open batch is polled (with backoff, a progress line) until it ends; its results are read
   by custom_id and written as trace rows, skipping ids that already have a row from that batch (a
   kill mid-collection), then the submission is journaled as collected.
Killed at any point, the same command resumes: no id is submitted twice while a submission holding
it is open, and no id gets two rows from one batch. Ctrl+C while waiting leaves the batches running
at the provider; `--batch-cancel` cancels them (what finished is still collected).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.files import sha256_text
from common.plural import plural
from common.records import Attempt, Request, TraceRow
from runner import batch, providers, traces
from runner.apikey import read_secrets, redact, secret_headers
from runner.ask import ERROR_TEXT_CHARS, Outcome, judge, reply_reason
from runner.batch import ids
from runner.batch.client import BatchAPIError, BatchClient
from runner.batch.journal import Journal, Submission, new_token
from runner.batch.progress import Waiting
from runner.config import ModelConfig
from runner.retry import RetryPolicy
from runner.rows import FINGERPRINT, check_key_not_recorded, earlier, named, request_record, trace_line, trace_row
from runner.run import RunSummary, plan, prepare_trace
from runner.selection import check_unique_ids
from runner.terminal import printable
from runner.transport import Exchange, utc_now

# The answers of a server without the batch endpoint to a submission: not found, or not allowed at that path.
NO_BATCH_API = (404, 405)


@dataclass(frozen=True)
class PollPolicy:
    """Seconds between status checks: `first_s`, growing by `factor` up to `max_s`."""

    first_s: float = 10.0
    factor: float = 1.5
    max_s: float = 300.0


def client_for(config: ModelConfig, api_key, session, policy: RetryPolicy | None) -> BatchClient:
    """A client sending the provider's own headers (e.g. anthropic-version), the config's [headers] and
    [query], and the key and [headers_env] values (`api_key`: the run's `Secrets`), to base_url only."""
    provider = providers.get(config.provider)
    _, headers, _ = providers.build(provider, config, "")
    auth = {key: value for key, value in headers.items() if key.lower() != "content-type"}
    auth.update(secret_headers(provider, config, api_key))
    return BatchClient(session, config.base_url, auth, api_key, timeout_s=config.timeout_s, policy=policy,
                       query=config.query)


def chunks(adapter, config: ModelConfig, todo: list[Request]) -> list[list[Request]]:
    """`todo` cut into batches within the provider's limits (sizes measured as enveloped, tag included)."""
    provider = providers.get(config.provider)
    found: list[list[Request]] = []
    size = 0
    for request in todo:
        body = provider.build_request(config, request.conversation)[2]
        line = adapter.envelope(ids.custom_id("0" * 8, request.id), body)
        length = len(jsonl.dumps(line).encode("utf-8"))
        if not found or len(found[-1]) >= adapter.MAX_REQUESTS or size + length > adapter.MAX_BYTES:
            found.append([])
            size = 0
        found[-1].append(request)
        size += length
    return found


def fingerprint(config: ModelConfig) -> dict:
    """What every request of a submission is sent with, to compare on resume (as runner.run.plan does for rows)."""
    provider = providers.get(config.provider)
    url, _, body = provider.build_request(config, "")
    record = request_record(config, url, body)
    return {key: record[key] for key in FINGERPRINT}


def requests_sha256(requests: list[Request]) -> str:
    """One checksum over what each request of a submission asked: its id, message and benchmark."""
    return sha256_text("".join(f"{r.id}\t{r.conversation.sha256}\t{r.benchmark_sha256}\n" for r in requests))


def outcome_of(result: batch.Result, config: ModelConfig, request: Request, submission: Submission,
               api_key: str | None) -> Outcome:
    """A batch result as the synchronous path's outcome: a reply read by `runner.ask.judge`, or a failure."""
    provider = providers.get(config.provider)
    url, _, body = providers.build(provider, config, request.conversation)
    started = submission.created_at or utc_now()

    def attempt(error: str | None) -> tuple[Attempt, ...]:
        return (Attempt(started_at=started, latency_s=None, http_status=result.http_status, error=error,
                        retry_after=None, retry_wait_s=None, batch_id=submission.batch_id, result=result.result),)

    if result.body is None:
        error = None if result.error is None else error_text(result.error, api_key)
        return Outcome("failed", error, None, None, attempt(error), url, body)
    verdict = judge(Exchange(started_at=started, latency_s=0.0, status=result.http_status or 200, retry_after=None,
                             body=result.body, error=None), provider, config, api_key)
    if verdict.kind == "done":
        reason = reply_reason(verdict.reply.problem, verdict.note)
        return Outcome("ok" if reason is None else "unusable", reason, verdict.reply, verdict.response,
                       attempt(None), url, body)
    return Outcome("failed", verdict.error, None, None, attempt(verdict.error), url, body)


def error_text(error: str, api_key: str | None) -> str:
    """A batch's error for one request (a provider's message, of any length) as the synchronous path keeps an
    exception's text (`runner.ask.judge`): the key redacted, then cut to ERROR_TEXT_CHARS, so that the failed
    row's reason and its attempt's error stay a line, and no piece of the key is left where the cut falls."""
    text = redact(error, api_key)
    return text if len(text) <= ERROR_TEXT_CHARS else text[:ERROR_TEXT_CHARS] + "…"


class BatchRun:
    """One `--batch` run on one trace: the state shared by its steps."""

    def __init__(self, config: ModelConfig, requests: list[Request], out: Path, *, log, poll: PollPolicy,
                 policy: RetryPolicy | None, sleep):
        self.config, self.out, self.log, self.poll, self.sleep = config, out, log, poll, sleep
        self.by_id = {request.id: request for request in requests}
        self.adapter = batch.get(config.provider)
        self.api_key = read_secrets(config)
        check_key_not_recorded(config, requests, self.api_key)
        import requests as http

        self.session = http.Session()
        self.client = client_for(config, self.api_key, self.session, policy or RetryPolicy(config.max_retries))
        self.counts: Counter = Counter()
        self.abandoned: list[str] = []  # why each batch given up this run was
        self.waiting = Waiting(log)

    def recover(self, journal: Journal, submission: Submission) -> None:
        """A submission journaled as submitting but not as created: adopt its batch, or abandon it."""
        known = {other.batch_id for other in journal.submissions.values() if other.batch_id}
        found = [batch_id for batch_id in self.adapter.find(self.client, submission) if batch_id not in known]
        if len(found) == 1:
            journal.note("created", submission, batch_id=found[0], recovered=True)
            self.waiting.notice(f"run: found batch {found[0]} again (created before the last run was stopped, its "
                                f"id not yet journaled); resuming it")
        elif not found:
            journal.note("abandoned", submission, reason="never created at the provider")
            count = len(submission.ids)
            self.waiting.notice(f"run: a submission of {count:,} {plural(count, 'request')} was stopped before the "
                                f"provider created it; {plural(count, 'it is', 'they are')} submitted again")
        else:
            raise UserError(f"{journal.path}: a submission of {len(submission.ids):,} "
                            f"{plural(len(submission.ids), 'request')} was stopped before its "
                            f"batch id was journaled, and {len(found)} batches of that size were created since "
                            f"({', '.join(found[:5])}); cannot tell which is this run's: cancel the others at the "
                            "provider or wait for them to end, then rerun")

    def submit(self, journal: Journal, requests: list[Request]) -> None:
        submission = Submission(token=new_token(), provider=self.config.provider, model=self.config.name,
                                ids=tuple(request.id for request in requests), since=time.time(),
                                request=fingerprint(self.config), requests_sha256=requests_sha256(requests))
        provider = providers.get(self.config.provider)
        lines = [self.adapter.envelope(ids.custom_id(submission.tag, request.id),
                                       provider.build_request(self.config, request.conversation)[2])
                 for request in requests]
        journal.note("submitting", submission)
        try:
            batch_id = self.adapter.create(self.client, self.config, lines, submission,
                                           lambda kind, **fields: journal.note(kind, submission, **fields))
        except BatchAPIError as exc:
            if exc.status is not None and 400 <= exc.status <= 499:  # refused: certainly not created
                journal.note("abandoned", submission, reason=str(exc)[:500])
            if exc.status in NO_BATCH_API:  # a local or compatible server that only answers chat completions
                also = f" (or no model {self.config.model!r})" if self.config.provider == "gemini" else ""
                raise BatchAPIError(f"{exc}: the server at {self.config.base_url} has no batch API{also}, so nothing "
                                    "was submitted; run without --batch (docs/RUNNER.md: a fake batch server to try "
                                    "--batch offline)", exc.status) from None
            raise  # else unknown: left open, looked for on the next run
        journal.note("created", submission, batch_id=batch_id)
        self.waiting.notice(f"run: submitted {len(requests):,} {plural(len(requests), 'request')} as batch {batch_id}")

    def check_unchanged(self, journal: Journal, submission: Submission) -> None:
        """Refuse to collect rows for requests that are no longer the ones the batch was sent."""
        if submission.request and submission.request != fingerprint(self.config):
            raise UserError(f"{journal.path}: open batch {submission.batch_id or submission.token} was sent with "
                            f"request settings {jsonl.canonical(submission.request)[:300]}, the config "
                            f"{self.config.path} now gives {jsonl.canonical(fingerprint(self.config))[:300]}; "
                            "rerun with the config it was sent with, or cancel it (--batch --batch-cancel)")
        mine = [self.by_id[request] for request in submission.ids]
        if submission.requests_sha256 and submission.requests_sha256 != requests_sha256(mine):
            raise UserError(f"{journal.path}: the messages of open batch {submission.batch_id or submission.token} "
                            "are not the ones it was sent (the benchmark or a condition's layout changed); rerun "
                            "with the requests it was sent, or cancel it (--batch --batch-cancel)")

    def collect(self, journal: Journal, submission: Submission, status: batch.Status, writer,
                final: dict[str, TraceRow]) -> None:
        """Write a row for each request of an ended batch that has none from it yet."""
        if status.failure is not None:
            self.abandon(journal, submission, f"ended as a whole without results ({status.failure})")
            return
        wanted = set(submission.ids)
        before = {request for request in wanted if _from_batch(final.get(request), submission.batch_id)}
        if before == wanted:  # a kill after the last row, before the journal said so: nothing to download
            writer.sync()
            journal.note("collected", submission, rows=len(wanted))
            return
        written, foreign, repeated, malformed = set(before), 0, 0, 0
        results = list(self.adapter.results(self.client, status))
        for result in results:
            parsed = ids.parse(result.custom_id)
            if parsed is None:
                malformed += 1
            elif parsed[0] != submission.tag or parsed[1] not in wanted:
                foreign += 1
            elif parsed[1] in written:
                repeated += parsed[1] not in before
            else:
                self.write(writer, final, submission, result, parsed[1])
                written.add(parsed[1])
        if results and written == before:  # not one result is this submission's: another run's batch
            self.abandon(journal, submission, f"none of its {len(results):,} results names a request of this "
                                              f"submission (tag {submission.tag}): it is not this run's batch")
            return
        for request in sorted(wanted - written):
            missing = batch.Result(ids.custom_id(submission.tag, request), "errored", None, None,
                                   f"batch {submission.batch_id} returned no result for this request")
            if status.cancelled:
                missing = replace(missing, result="canceled",
                                  error="batch canceled: the batch was cancelled before this request was processed")
            self.write(writer, final, submission, missing, request)
        if foreign or repeated or malformed:
            self.waiting.notice(f"run: batch {submission.batch_id}: not written: {foreign} result(s) naming no "
                                f"request of this submission, {repeated} repeating one, {malformed} unreadable")
        writer.sync()  # the rows are on disk before the journal says they are
        journal.note("collected", submission, rows=len(wanted))

    def abandon(self, journal: Journal, submission: Submission, why: str) -> None:
        """Give a submission up: no row from it; its ids are asked again on the next run."""
        why = printable(why, self.api_key, 500)
        journal.note("abandoned", submission, reason=why)
        self.abandoned.append(f"batch {submission.batch_id} {why}")
        count = len(submission.ids)
        self.waiting.notice(f"run: batch {submission.batch_id} {why}; its {count:,} {plural(count, 'request')} got "
                            f"no row and {plural(count, 'is', 'are')} asked again on the next run")

    def write(self, writer, final: dict[str, TraceRow], submission: Submission, result: batch.Result,
              request_id: str) -> None:
        request = self.by_id[request_id]
        outcome = outcome_of(result, self.config, request, submission, self.api_key)
        done = final.get(request_id)
        row = trace_row(self.config, request, outcome, earlier(done) if done else (),
                        submission.created_at or utc_now(), utc_now())
        row = replace(row, request={**row.request, "batch": True})
        writer.append(trace_line(row, self.api_key))
        final[request_id] = row
        self.counts[outcome.status] += 1

    def wait(self, journal: Journal, writer, final: dict[str, TraceRow]) -> None:
        """Poll every open batch until it ends, collecting each as it does."""
        waiting = [submission for submission in journal.open_submissions() if submission.batch_id]
        delay = self.poll.first_s
        states: dict[str, str] = {}
        progress: dict[str, tuple[int, int]] = {}
        total = sum(len(submission.ids) for submission in waiting)
        try:
            while waiting:
                for submission in list(waiting):
                    try:
                        status = self.adapter.status(self.client, submission.batch_id)
                    except BatchAPIError as exc:
                        if exc.status in (404, 410):  # the provider no longer has it (deleted, results expired)
                            self.abandon(journal, submission,
                                         f"is no longer at the provider ({printable(exc, self.api_key)})")
                            waiting.remove(submission)
                            progress[submission.batch_id] = (0, 0)
                        elif exc.status is None:  # the network, or a server down for a while: the next poll
                            self.waiting.notice(f"run: batch {submission.batch_id}: status not read "
                                                f"({printable(exc, self.api_key)}); trying again at the next check")
                        else:
                            raise
                        continue
                    states[submission.batch_id] = printable(status.state, self.api_key, 40)
                    progress[submission.batch_id] = (status.done, status.failed)
                    if status.ended:
                        try:
                            self.collect(journal, submission, status, writer, final)
                        except BatchAPIError as exc:
                            if exc.status not in (404, 410):
                                raise
                            self.abandon(journal, submission, "ended, but its results are no longer at the "
                                                              f"provider ({printable(exc, self.api_key)})")
                        ended = journal.submissions[submission.token].ended
                        progress[submission.batch_id] = (len(submission.ids) if ended == "collected" else 0,
                                                         status.failed)
                        waiting.remove(submission)
                done = sum(pair[0] for pair in progress.values())
                self.waiting.update(states, done, sum(pair[1] for pair in progress.values()), total,
                                    final=not waiting)
                if waiting:
                    self.sleep(delay)
                    delay = min(delay * self.poll.factor, self.poll.max_s)
        except KeyboardInterrupt:
            open_ids = ", ".join(submission.batch_id for submission in waiting)
            self.waiting.notice(f"run: stopped waiting; batch {open_ids} keeps running at the provider: run the same "
                                "command again to collect it, or add --batch-cancel to cancel it")
            raise

    def cancel(self, journal: Journal) -> None:
        """Ask the provider to cancel every open batch that has not ended (what they finished is collected)."""
        opened = [submission for submission in journal.open_submissions() if submission.batch_id]
        for submission in opened:
            status = self.adapter.status(self.client, submission.batch_id)
            if status.ended:
                self.waiting.notice(f"run: batch {submission.batch_id} has already ended; collecting it")
                continue
            try:
                self.adapter.cancel(self.client, submission.batch_id)
            except BatchAPIError as exc:  # e.g. already cancelling, or ended since the status was read
                if exc.status is None or not 400 <= exc.status <= 499:
                    raise
                self.waiting.notice(f"run: batch {submission.batch_id}: the provider refused the cancel "
                                    f"({printable(exc, self.api_key)}); collecting what it has")
                continue
            self.waiting.notice(f"run: asked the provider to cancel batch {submission.batch_id}; what it "
                                "finished is still collected")
        if not opened:
            self.log.write(f"run: no batch of {self.out} is open at the provider; nothing to cancel\n")


def _from_batch(row: TraceRow | None, batch_id: str | None) -> bool:
    return row is not None and bool(row.attempts) and row.attempts[-1].batch_id == batch_id


def run_batch(config: ModelConfig, requests: list[Request], out: str | Path, *, retry_unusable: bool = False,
              retry_failed: bool = False, move_torn: bool = False, cancel: bool = False, log=None,
              poll: PollPolicy | None = None, policy: RetryPolicy | None = None, sleep=time.sleep) -> RunSummary:
    """Ask `requests` through the provider's batch API, resuming what the journal beside `out` holds."""
    out = Path(out)
    log = sys.stderr if log is None else log
    if config.provider not in batch.NAMES:
        raise UserError(f"{config.path}: provider {config.provider!r} has no batch API here; run without --batch")
    check_unique_ids(requests)
    ids.check_spellable([request.id for request in requests])
    state = BatchRun(config, requests, out, log=log, poll=poll or PollPolicy(), policy=policy, sleep=sleep)
    with traces.TraceWriter(out) as writer:
        trace, moved = prepare_trace(out, move_torn=move_torn, log=log)
        todo, skipped = plan(config, requests, trace, retry_unusable=retry_unusable, retry_failed=retry_failed)
        journal = Journal(out, state.api_key)
        for submission in journal.open_submissions():
            if (submission.provider, submission.model) != (config.provider, config.name):
                raise UserError(f"{journal.path}: an open batch of this trace was submitted for {submission.provider} "
                                f"model {submission.model!r}, the config {config.path} is {config.name!r}")
            outside = [request for request in submission.ids if request not in state.by_id]
            if outside:
                raise UserError(f"{journal.path}: an open batch of this trace holds {len(outside):,} "
                                f"{plural(len(outside), 'request')} "
                                f"outside this selection (e.g. {named(outside[0])}); rerun with the selection "
                                "that submitted it")
        final = dict(trace.final)
        try:
            for submission in journal.open_submissions():
                state.check_unchanged(journal, submission)
                if submission.batch_id is None:
                    state.recover(journal, submission)
            if cancel:
                state.cancel(journal)
            else:
                in_flight = journal.in_flight()
                fresh = [request for request in todo if request.id not in in_flight]
                if skipped:
                    log.write(f"run: {skipped} of {len(requests)} requests already have a final row in {out}; "
                              "skipped\n")
                for chunk in chunks(state.adapter, config, fresh):
                    state.submit(journal, chunk)
            state.wait(journal, writer, final)
        finally:
            state.session.close()
    counts = state.counts
    stopped = "; ".join(state.abandoned) or None
    return RunSummary(len(requests), skipped, sum(counts.values()), dict(counts), stopped, moved)
