"""Gemini's batch mode: `POST /models/{model}:batchGenerateContent` with the requests inlined.

Each request is `{"request": <the synchronous generateContent body>, "metadata": {"key": custom_id}}`
under `batch.input_config.requests.requests`; the batch's `display_name` is the submission's token,
by which a batch created just before a kill is found again (`GET /batches`, `operations`,
`nextPageToken`). The call answers with a long-running operation named `batches/<id>`;
`GET /batches/<id>` is polled until `done`, its `metadata.state` one of BATCH_STATE_SUCCEEDED,
_FAILED, _CANCELLED or _EXPIRED. The results are inlined in the operation's `response`
(`inlinedResponses.inlinedResponses`), each with the request's `metadata.key` and a `response` (a
GenerateContentResponse) or an `error` ({code, message, status}); they are matched by that key,
never by their order. Inlined requests are limited to 20 MB per batch (a larger run is several
batches); a file-based batch (uploaded through the Files API's resumable upload) is not used.
Source: ai.google.dev/api/batch-mode and the batch mode guide.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from runner.batch import Result, Status
from runner.batch.client import identifier

if TYPE_CHECKING:
    from runner.batch.client import BatchClient
    from runner.batch.journal import Submission
    from runner.config import ModelConfig

MAX_REQUESTS = 100_000
MAX_BYTES = 19_000_000  # inlined requests: 20 MB per batch
PREFIX = "BATCH_STATE_"
MAX_PAGES = 100
ENDED = {"SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED"}


def envelope(custom_id: str, body: dict) -> dict:
    return {"request": body, "metadata": {"key": custom_id}}


def create(client: BatchClient, config: ModelConfig, requests: list[dict], submission: Submission,
           note: Callable[..., None]) -> str:
    model = config.model if config.model.startswith("models/") else f"models/{config.model}"
    operation = client.json("POST", client.url(f"/{model}:batchGenerateContent"), body={"batch": {
        "display_name": submission.token, "input_config": {"requests": {"requests": requests}}}}, once=True)
    return identifier(operation.get("name"), "batch name")


def _batch(operation: dict) -> dict:
    """The batch an operation describes (its metadata), or {}."""
    metadata = operation.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def find(client: BatchClient, submission: Submission) -> list[str]:
    found, token, seen = [], None, set()
    for _ in range(MAX_PAGES):
        query = {"pageSize": 100, **({"pageToken": token} if token else {})}
        page = client.json("GET", client.url("/batches?" + urlencode(query)))
        for operation in page.get("operations") or page.get("batches") or []:
            if not isinstance(operation, dict):
                continue
            batch = _batch(operation) or operation
            if submission.token in (batch.get("displayName"), batch.get("display_name")):
                found.append(identifier(operation.get("name") or batch.get("name"), "batch name"))
        token = page.get("nextPageToken")
        if found or not isinstance(token, str) or not token or token in seen:
            return found
        seen.add(token)  # an opaque string: sent URL-encoded, never put into a path
    return found


def _stats(batch: dict) -> dict[str, int]:
    stats = batch.get("batchStats") if isinstance(batch.get("batchStats"), dict) else {}

    def number(key: str) -> int:
        value = stats.get(key)  # int64 fields come as JSON strings
        try:
            return max(0, int(value))
        except (TypeError, ValueError):
            return 0

    return {key: number(key) for key in ("requestCount", "successfulRequestCount", "failedRequestCount")}


def status(client: BatchClient, batch_id: str) -> Status:
    operation = client.json("GET", client.url(f"/{batch_id}"))
    batch = _batch(operation)
    state = str(batch.get("state") or "").removeprefix(PREFIX)
    ended = state in ENDED or operation.get("done") is True
    stats = _stats(batch)
    failure = None
    if ended and state in ("FAILED", "EXPIRED"):
        error = operation.get("error") if isinstance(operation.get("error"), dict) else {}
        failure = f"{PREFIX}{state}" + (f": {error.get('message')}" if error.get("message") else "")
    elif ended and state != "CANCELLED" and not _responses(operation):
        failure = f"{PREFIX}{state or 'unknown'} with no results"
    done = stats["successfulRequestCount"] + stats["failedRequestCount"]
    return Status(state=PREFIX + state if state else "unknown", ended=ended, done=done,
                  failed=stats["failedRequestCount"], total=stats["requestCount"] or None, failure=failure,
                  data=operation, cancelled=state == "CANCELLED")


def _responses(operation: dict) -> list:
    """The inlined responses of a finished operation, wherever the answer nests them."""
    for holder in (operation.get("response"), _batch(operation).get("output")):
        if not isinstance(holder, dict):
            continue
        holder = holder.get("output") if isinstance(holder.get("output"), dict) else holder
        inlined = holder.get("inlinedResponses")
        if isinstance(inlined, dict):
            inlined = inlined.get("inlinedResponses")
        if isinstance(inlined, list):
            return inlined
    return []


def results(client: BatchClient, status: Status) -> Iterator[Result]:
    for number, item in enumerate(_responses(status.data or {}), 1):
        where = f"inlined response {number}"
        metadata = item.get("metadata") if isinstance(item, dict) and isinstance(item.get("metadata"), dict) else {}
        key = metadata.get("key")
        if not isinstance(key, str):
            yield Result("", "errored", None, None, f"{where}: no metadata.key")
        elif isinstance(item.get("response"), dict):
            yield Result(key, "succeeded", 200, json.dumps(item["response"], ensure_ascii=True).encode("ascii"),
                         None)
        else:
            error = item.get("error") if isinstance(item.get("error"), dict) else {}
            yield Result(key, "errored", None, None,
                         f"batch error {error.get('status') or error.get('code')}: {error.get('message')}")


def cancel(client: BatchClient, batch_id: str) -> None:
    client.json("POST", client.url(f"/{batch_id}:cancel"))
