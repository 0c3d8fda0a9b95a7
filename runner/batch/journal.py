"""The batch journal, `<trace>.batches`: every submission to a provider's batch API, noted before and after.

A batch is created by one HTTP call whose answer (the batch's id) can be lost to a kill, so each
submission is journaled in steps, each one JSON line appended with one write(2) and fsync'd before
the step it announces:

    submitting  the submission's token, provider, model and ids: written before anything is sent
    uploaded    the input file's id (OpenAI: its requests go up as a file first)
    created     the batch's id, once the provider has answered (or, after a kill in between, once the
                batch was found again: `recovered`)
    collected   every request of the batch has its trace row
    abandoned   nothing of it will come: it was never created, or it failed as a whole; its ids are
                askable again

A submission is open from `submitting` until `collected` or `abandoned`; its ids are in flight and
are never submitted again while it is (nor asked by a synchronous run on the same trace). The
`submitting` line also records what was sent (`request`: the provider, model and parameters; and
`requests_sha256` over each id's message and benchmark checksums), so that rows collected later
cannot claim a config or a message other than the one the batch ran. The token names the submission
at the provider (OpenAI batch `metadata`, Gemini's display name) so that a batch created just before
a kill is found again;
Anthropic batches carry no such field, see `runner.batch.anthropic`. A torn last line (a kill
mid-write) is ignored, and cut off before the next line is appended: the step it announced had not
started. Only the runner holding the trace's lock writes the journal, and every line is redacted of
the key like a trace row.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import files, jsonl
from common.errors import UserError
from runner.apikey import leaks, redact_value
from runner.batch.client import BatchAPIError, identifier
from runner.pending import utc

SUFFIX = ".batches"
EVENTS = ("submitting", "uploaded", "created", "collected", "abandoned")


@dataclass
class Submission:
    """One submission as the journal tells it."""

    token: str
    provider: str
    model: str
    ids: tuple[str, ...]
    since: float  # Unix time just before it was sent: a batch found again was created after it
    request: dict = field(default_factory=dict)  # provider, model and parameters sent (runner.run.FINGERPRINT)
    requests_sha256: str = ""  # over (id, message_sha256, benchmark_sha256) of every id, in order
    file_id: str | None = None
    batch_id: str | None = None
    created_at: str | None = None  # UTC, when the provider answered (or the batch was found again)
    ended: str | None = None  # "collected" or "abandoned"
    reason: str | None = None  # why abandoned
    notes: list[str] = field(default_factory=list)

    @property
    def open(self) -> bool:
        return self.ended is None

    @property
    def tag(self) -> str:
        """The 8 hex digits every custom_id of the submission starts with (runner.batch.ids)."""
        return self.token[-8:]


def path_for(out: str | Path) -> Path:
    out = Path(out)
    return out.with_name(out.name + SUFFIX)


def in_flight(out: str | Path) -> set[str]:
    """The ids of the open submissions journaled beside trace `out` (none without a journal), for the runs
    that must not ask them again: a synchronous run, a dry run, an estimate."""
    path = path_for(out)
    return Journal(out, None, repair=False).in_flight() if path.exists() else set()


def new_token() -> str:
    """A submission's name at the provider: random, so that no other run's batch can carry it."""
    return "seam-" + secrets.token_hex(8)


class Journal:
    """The journal beside trace `out`, read once when opened, then appended to."""

    def __init__(self, out: str | Path, api_key: str | None, *, repair: bool = True):
        self.path = path_for(out)
        self.api_key = api_key
        self.submissions: dict[str, Submission] = {}
        for number, event in self._events():
            self._apply(event, number)
        if repair:
            self._cut_torn_tail()

    def _cut_torn_tail(self) -> None:
        """Cut a torn last line (a kill mid-write), so that the next event starts a line of its own."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        if data and not data.endswith(b"\n"):
            with open(self.path, "r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)
                f.flush()
                os.fsync(f.fileno())

    def _events(self):
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        except IsADirectoryError:
            raise UserError(f"{self.path}: is a directory, expected the runner's batch journal") from None
        for number, raw in enumerate(data[:data.rfind(b"\n") + 1].split(b"\n")[:-1], 1):
            try:
                event = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                raise UserError(f"{self.path}:{number}: expected a batch journal line (JSON); the journal says "
                                "which batches this trace has at a provider: do not edit it") from None
            if not isinstance(event, dict) or event.get("event") not in EVENTS or not isinstance(
                    event.get("submission"), str):
                raise UserError(f"{self.path}:{number}: expected a batch journal event ({', '.join(EVENTS)}) "
                                "naming its submission")
            yield number, event

    def _apply(self, event: dict, number: int) -> None:
        kind, token = event["event"], event["submission"]
        where = f"{self.path}:{number}"
        if kind == "submitting":
            ids, since = event.get("ids"), event.get("since")
            if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
                raise UserError(f"{where}: a 'submitting' event needs its list of ids")
            if isinstance(since, bool) or not isinstance(since, int | float):
                raise UserError(f"{where}: a 'submitting' event needs 'since', a Unix time")
            request = event.get("request") if isinstance(event.get("request"), dict) else {}
            self.submissions[token] = Submission(token=token, provider=str(event.get("provider")),
                                                 model=str(event.get("model")), ids=tuple(ids), since=float(since),
                                                 request=request, requests_sha256=str(event.get("requests_sha256")))
            return
        submission = self.submissions.get(token)
        if submission is None:
            raise UserError(f"{where}: event {kind!r} for submission {token!r}, which was never "
                            "journaled as submitting")
        try:
            if kind == "uploaded":
                submission.file_id = identifier(event.get("file_id"), "file id")
            elif kind == "created":
                submission.batch_id = identifier(event.get("batch_id"), "batch id")
                submission.created_at = event.get("at")
                if event.get("recovered"):
                    submission.notes.append("found again after a kill")
            else:
                submission.ended, submission.reason = kind, event.get("reason")
        except BatchAPIError as exc:
            raise UserError(f"{where}: {exc}") from None

    def open_submissions(self) -> list[Submission]:
        return [submission for submission in self.submissions.values() if submission.open]

    def in_flight(self) -> set[str]:
        """The ids of every open submission: never submitted again while it is open."""
        return {request for submission in self.open_submissions() for request in submission.ids}

    def note(self, kind: str, submission: Submission, **fields) -> None:
        """Append one event, durably, and apply it."""
        event = {"event": kind, "submission": submission.token, "at": utc(time.time()), **fields}
        if kind == "submitting":
            event.update(provider=submission.provider, model=submission.model, ids=list(submission.ids),
                         since=submission.since, request=submission.request,
                         requests_sha256=submission.requests_sha256)
        line = jsonl.dumps(redact_value(event, self.api_key))
        if leaks(line, self.api_key):
            raise UserError(f"{self.path}: a {kind} event would spell the API key; nothing was written")
        files.make_parent(self.path)
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            data = memoryview(line.encode("utf-8"))
            while data:
                data = data[os.write(descriptor, data):]
            os.fsync(descriptor)
        except OSError as exc:
            raise UserError(f"could not append to the batch journal {self.path}: {exc.strerror or exc}; "
                            "nothing more was sent; rerun to continue") from None
        finally:
            os.close(descriptor)
        if kind == "submitting":
            self.submissions[submission.token] = submission
        else:
            self._apply(json.loads(line), 0)
