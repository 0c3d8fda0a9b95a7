"""Ask requests on worker threads: bounded concurrency, the rate cap, held waits, one row appended each.

`runner.run` plans what to ask; this asks it. At most `concurrency` threads take requests from one queue;
each request's attempts are `runner.ask.ask`; its row is built and redacted by `runner.rows` and
appended by the trace writer as soon as it finishes. A fatal answer (401/403/404) stops everyone, and
so do `MAX_CONSECUTIVE_GIVE_UPS` requests in a row that used up all their retries (the server looks
down): the requests not yet asked keep no row and are asked on the next run. So does a connection refused (or
an unknown host) before any answer came, without a row: base_url is wrong or the server not running. Why it
stopped is printed and quotes the server's body, so it is made fit for the terminal (`runner.terminal`).
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from dataclasses import replace

from common.records import Request
from common.traces import TraceFile
from runner import providers, traces
from runner.apikey import Secrets, redact
from runner.ask import ask, unreachable_message
from runner.config import ModelConfig
from runner.pacing import Pacer
from runner.pending import PendingWaits, Wait, utc
from runner.progress import Progress
from runner.retry import RetryPolicy
from runner.rows import earlier, named, trace_line, trace_row
from runner.sent import SentNotes
from runner.terminal import printable
from runner.transport import utc_now

# This many requests in a row giving up after all their retries means the server is down:
# stop rather than let every remaining request burn its retries one by one.
MAX_CONSECUTIVE_GIVE_UPS = 3


def ask_all(config: ModelConfig, todo: list[Request], trace: TraceFile, writer: traces.TraceWriter, *,
            api_key: str | Secrets | None, policy: RetryPolicy, log, notes: PendingWaits | None = None,
            waits: dict[str, Wait] | None = None, answered: set[str] | None = None,
            sent: SentNotes | None = None) -> tuple[Counter, str | None, bool]:
    """Ask `todo` on worker threads, appending a row each; the counts per status, why it stopped early, and
    whether that was because base_url could not be reached at all (nothing recorded then).

    A request in `waits` is first held until the time its server allowed (with a notice); each
    Retry-After wait that starts is noted in `notes`; the ids that got a row go into `answered`. Each attempt
    is noted in `sent` before it goes out, and a request whose earlier attempts a stopped run lost (`sent`)
    gets them at the start of its row's attempts. Until any answer came from the server, a connection
    refused, an unknown host, no route or a connect timeout stops the run at once, without a row for that
    request (`runner.ask`); requests already in flight then keep the rows they get, and the line says so.
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
    give_ups = 0  # consecutive requests that used up their retries
    errors: list[BaseException] = []
    progress = Progress(log, len(todo))
    reached = threading.Event()  # set by the first answer from the server (runner.ask)
    unreachable: list[str] = []

    def sleep(seconds: float) -> bool:
        return not stop.wait(seconds)

    def pace() -> bool:
        pacer.wait()
        return not stop.is_set()

    def work() -> None:
        nonlocal give_ups
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
                        progress.notice(printable(
                            f"run: {named(request.id)}: the server asked at {utc(wait.noted_at)} (Retry-After: "
                            f"{header}) not to be asked again before {utc(wait.until)}; waiting {remaining:.1f} s "
                            "before asking it", api_key, None))
                    if not sleep(remaining):
                        return

                def note_wait(until: float, header: str, request_id: str = request.id) -> None:
                    if notes is not None:
                        notes.note(request_id, until, header, redact=lambda text: redact(text, api_key))

                def note_send(request_id: str = request.id):
                    return sent.note(request_id)

                started_at = utc_now()
                outcome = ask(session=session, provider=provider, config=config, message=request.conversation,
                              api_key=api_key, request_id=request.id, policy=policy, pace=pace,
                              sleep=sleep, note_wait=note_wait, note_send=note_send if sent else None,
                              reached=reached)
                if outcome is None:  # abandoned: the run is stopping; no row, so it is asked next time
                    return
                if outcome.unreachable:  # a wrong base_url: nothing was sent, nothing is recorded
                    with lock:
                        if not stopped:
                            stopped.append(printable(unreachable_message(config, outcome.unreachable), api_key,
                                                     None))
                            unreachable.append(outcome.unreachable)
                        stop.set()
                    return
                lost = sent.lost(request.id) if sent else ()
                if lost:  # sent by a run stopped before it recorded the answer: paid for, perhaps
                    outcome = replace(outcome, attempts=(*lost, *outcome.attempts))
                done = trace.final.get(request.id)
                row = trace_row(config, request, outcome, earlier(done) if done else (), started_at, utc_now())
                writer.append(trace_line(row, api_key))
                with lock:
                    answered.add(request.id)
                    counts[outcome.status] += 1
                    give_ups = give_ups + 1 if outcome.exhausted else 0
                    if outcome.fatal and not stopped:
                        stopped.append(printable(f"{named(request.id)}: {outcome.reason}", api_key, None))
                        stop.set()
                    elif give_ups >= MAX_CONSECUTIVE_GIVE_UPS and not stopped:
                        stopped.append(printable(f"{give_ups} requests in a row gave up after all their retries, "
                                                 f"the server looks down (last, {named(request.id)}: "
                                                 f"{outcome.reason})", api_key, None))
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
                    if not unreachable:
                        progress.update(sum(counts.values()), counts)
    except KeyboardInterrupt:
        stop.set()
        raise
    if not unreachable:  # else the run ends in one line saying why (runner.cli)
        progress.update(sum(counts.values()), counts, final=True)
    elif counts:  # requests already in flight when it stopped got their rows: the line must not say "nothing"
        stopped[0] = printable(unreachable_message(config, unreachable[0], sum(counts.values())), api_key, None)
    if errors:
        raise errors[0]
    return counts, stopped[0] if stopped else None, bool(unreachable)
