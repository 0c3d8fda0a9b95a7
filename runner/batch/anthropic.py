"""Anthropic's Message Batches: `POST /messages/batches` with `{"requests": [{"custom_id", "params"}]}`.

`params` is the synchronous Messages body. `GET /messages/batches/{id}` is polled until
`processing_status` is `ended`; `request_counts` counts processing, succeeded, errored, canceled and
expired requests. The results are JSONL at the batch's `results_url`, one line per request:
`{"custom_id", "result": {"type": "succeeded", "message"}}`, or type `errored` (with the API's error
object), `canceled` or `expired`. The `results_url` is refused unless it is on `base_url`'s host:
the key goes nowhere else. Limits: 100,000 requests or 256 MB per batch.

Finding a batch again. A Message Batch has no metadata field to carry the submission's token, so a
batch whose creation was answered but not journaled (a kill in between) is looked for among the
batches listed (`GET /messages/batches`, newest first): created no earlier than the submission's
`since` (less `FIND_WINDOW_S` for clock skew), holding exactly as many requests, and not already in
the journal. One such batch is adopted; none means the creation never arrived (the ids are asked
again); more than one (another run's batches of the same size, created in the same minutes) is
refused in one line that names them, since adopting the wrong one would miss this run's results.
An adopted batch's results are still matched by `custom_id`, whose tag names the submission
(runner.batch.ids): a batch whose results carry another tag (another run's, of the same size) is
abandoned when it ends, none of its results written, and the ids are asked again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from runner.batch import Result, Status, read_results
from runner.batch.client import identifier

if TYPE_CHECKING:
    from runner.batch.client import BatchClient
    from runner.batch.journal import Submission
    from runner.config import ModelConfig

MAX_REQUESTS = 100_000
MAX_BYTES = 250_000_000  # the limit is 256 MB
FIND_WINDOW_S = 600  # clock skew allowed; a wrong adoption is caught by the custom_ids' tag (runner.batch.ids)
MAX_PAGES = 100
COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")
RESULTS = {"succeeded", "errored", "canceled", "expired"}


def envelope(custom_id: str, body: dict) -> dict:
    return {"custom_id": custom_id, "params": body}


def create(client: BatchClient, config: ModelConfig, requests: list[dict], submission: Submission,
           note: Callable[..., None]) -> str:
    batch = client.json("POST", client.url("/messages/batches"), body={"requests": requests}, once=True)
    return identifier(batch.get("id"), "batch id")


def _created(batch: dict) -> float | None:
    try:
        return datetime.fromisoformat(str(batch.get("created_at")).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _counts(batch: dict) -> dict[str, int]:
    """The batch's `request_counts`; a count that no batch can have (not an integer, negative, more than
    `MAX_REQUESTS`: a hostile or broken server's) is read as 0, as a missing one is.

    >>> _counts({"request_counts": {"processing": 3, "succeeded": -1, "errored": 10 ** 400, "expired": True}})
    {'processing': 3, 'succeeded': 0, 'errored': 0, 'canceled': 0, 'expired': 0}
    """
    counts = batch.get("request_counts") if isinstance(batch.get("request_counts"), dict) else {}
    return {key: value if isinstance(value := counts.get(key), int) and not isinstance(value, bool)
            and 0 <= value <= MAX_REQUESTS else 0 for key in COUNTS}


def find(client: BatchClient, submission: Submission) -> list[str]:
    found, after, seen = [], None, set()
    for _ in range(MAX_PAGES):
        query = {"limit": 100, **({"after_id": after} if after else {})}
        page = client.json("GET", client.url("/messages/batches?" + urlencode(query)))
        batches = [batch for batch in page.get("data") or [] if isinstance(batch, dict)]
        oldest = None
        for batch in batches:
            created = _created(batch)
            if created is None:
                continue
            oldest = created if oldest is None else min(oldest, created)
            if created >= submission.since - FIND_WINDOW_S and sum(_counts(batch).values()) == len(submission.ids):
                found.append(identifier(batch.get("id"), "batch id"))
        after = page.get("last_id") or (batches[-1].get("id") if batches else None)
        if (oldest is not None and oldest < submission.since - FIND_WINDOW_S) or not page.get("has_more") or \
                not isinstance(after, str) or after in seen:
            return found
        seen.add(after)
    return found


def status(client: BatchClient, batch_id: str) -> Status:
    batch = client.json("GET", client.url(f"/messages/batches/{batch_id}"))
    counts = _counts(batch)
    state = str(batch.get("processing_status"))
    failed = counts["errored"] + counts["canceled"] + counts["expired"]
    return Status(state=state, ended=state == "ended", done=counts["succeeded"] + failed, failed=failed,
                  total=sum(counts.values()) or None, data=batch,
                  cancelled=state == "ended" and batch.get("cancel_initiated_at") is not None)


def results(client: BatchClient, status: Status) -> Iterator[Result]:
    url = client.check_url((status.data or {}).get("results_url"), "the results_url")
    yield from read_results(client.call("GET", url), "results", _result)


def _result(line: dict, where: str) -> Result:
    result = line.get("result") if isinstance(line.get("result"), dict) else {}
    kind = result.get("type")
    if kind == "succeeded":
        return Result(line["custom_id"], "succeeded", 200,
                      json.dumps(result.get("message"), ensure_ascii=True).encode("ascii"), None)
    if kind == "errored":
        error = result.get("error") if isinstance(result.get("error"), dict) else {}
        inner = error.get("error") if isinstance(error.get("error"), dict) else error
        return Result(line["custom_id"], "errored", None, None,
                      f"batch errored: {inner.get('type')}: {inner.get('message')}")
    if kind in RESULTS:
        what = "the batch expired before" if kind == "expired" else "the batch was cancelled before"
        return Result(line["custom_id"], kind, None, None, f"batch {kind}: {what} this request was processed")
    return Result(line["custom_id"], "errored", None, None, f"{where}: unknown result type {str(kind)[:40]!r}")


def cancel(client: BatchClient, batch_id: str) -> None:
    client.json("POST", client.url(f"/messages/batches/{batch_id}/cancel"))
