"""Provider batch APIs (`seam.py run --batch`): the same requests, sent as one asynchronous batch.

OpenAI's Batch API, Anthropic's Message Batches and Gemini's batch mode take many requests at
once, answer within 24 hours, and charge about half the synchronous price outside the per-minute
rate limits. Each request's body is the synchronous path's own (`runner.providers`), only the
envelope differs; each result becomes the same trace row, through the same reading of a reply
(`runner.ask.judge`) and the same redaction (`runner.rows.trace_line`).

One module per provider (`openai`, `anthropic`, `gemini`) satisfies `Adapter` below; `runner.batch.run`
drives them: journal (`runner.batch.journal`), submit, poll, collect. `runner.batch.ids` spells
request ids as custom ids; `runner.batch.client` makes the HTTP calls, to `base_url`'s host only.
See docs/RUNNER.md, "Batch APIs".
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from runner.batch.client import BatchClient
    from runner.batch.journal import Submission
    from runner.config import ModelConfig

NAMES = ("openai", "anthropic", "gemini")


@dataclass(frozen=True)
class Status:
    """Where a batch stands. `failure` is set when it ended as a whole without results to collect."""

    state: str  # the provider's own word (in_progress, ended, BATCH_STATE_RUNNING, ...)
    ended: bool
    done: int  # requests finished, failed ones included
    failed: int
    total: int | None
    failure: str | None = None
    data: dict | None = None  # the provider's batch object, for `results`
    cancelled: bool = False  # ended by a cancel: a request it returns nothing for was never processed


@dataclass(frozen=True)
class Result:
    """What the batch said of one request: a reply (`http_status` and the response `body`) or an error."""

    custom_id: str
    result: str  # one of common.records.BATCH_RESULTS
    http_status: int | None
    body: bytes | None
    error: str | None


@runtime_checkable
class Adapter(Protocol):
    MAX_REQUESTS: int  # per batch, the provider's documented limit
    MAX_BYTES: int  # of one batch's requests, as sent

    def envelope(self, custom_id: str, body: dict) -> dict:
        """One request as the batch carries it."""
        ...

    def create(self, client: BatchClient, config: ModelConfig, requests: list[dict], submission: Submission,
               note: Callable[..., None]) -> str:
        """Submit the enveloped `requests`; the batch's id. `note("uploaded", file_id=...)` journals a step."""
        ...

    def find(self, client: BatchClient, submission: Submission) -> list[str]:
        """The batches at the provider that may be `submission`, created before a kill lost their id."""
        ...

    def status(self, client: BatchClient, batch_id: str) -> Status:
        ...

    def results(self, client: BatchClient, status: Status) -> Iterator[Result]:
        ...

    def cancel(self, client: BatchClient, batch_id: str) -> None:
        ...


def read_results(content: bytes, label: str, read: Callable[[dict, str], Result]) -> Iterator[Result]:
    """The results of a JSON Lines file, one per non-blank line: `read(line, where)` for each object with a
    string `custom_id`, an errored Result naming the line (`label` line N) for anything else."""
    import json

    for number, raw in enumerate(content.split(b"\n"), 1):
        if not raw.strip():
            continue
        where = f"{label} line {number}"
        try:
            line = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            yield Result("", "errored", None, None, f"{where}: not JSON")
            continue
        if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
            yield Result("", "errored", None, None, f"{where}: no custom_id")
            continue
        yield read(line, where)


def get(provider: str) -> Adapter:
    module = importlib.import_module(f"runner.batch.{provider}")
    if not isinstance(module, Adapter):
        raise TypeError(f"{module.__name__} does not provide everything runner.batch.Adapter lists")
    return module
