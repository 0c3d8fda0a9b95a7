"""OpenAI's Batch API (and compatible servers that implement it), on `/v1/chat/completions`.

The requests go up as one JSONL file (`POST /files`, purpose `batch`), one line each:
`{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`, the body being the
synchronous request's own. `POST /batches` creates the batch (`completion_window` `24h`, and the
submission's token in `metadata`, by which a batch created just before a kill is found again with
`GET /batches`); `GET /batches/{id}` is polled until the status is `completed`, `failed`, `expired`
or `cancelled`. Results: the output file's lines carry `response.status_code` and `response.body` (a
chat completion), the error file's carry `error.code` and `error.message` (`batch_expired` and
`batch_cancelled` for requests the batch did not reach). Both are read by `custom_id`, never by
line order. A batch `failed` as a whole (its input refused) has `errors.data` and no results.
Limits: 50,000 requests and 200 MB per file.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from runner.batch import Result, Status, read_results
from runner.batch.client import identifier

if TYPE_CHECKING:
    from runner.batch.client import BatchClient
    from runner.batch.journal import Submission
    from runner.config import ModelConfig

MAX_REQUESTS = 50_000
MAX_BYTES = 190_000_000  # the file limit is 200 MB; kept clear of it
ENDPOINT = "/v1/chat/completions"
ENDED = {"completed", "failed", "expired", "cancelled"}
FIND_WINDOW_S = 600  # a batch found again was created at most this long before its `since` (clock skew)
MAX_PAGES = 100  # of 100 batches each, looked through for one lost by a kill
RESULT_OF_CODE = {"batch_expired": "expired", "batch_cancelled": "canceled"}


def envelope(custom_id: str, body: dict) -> dict:
    return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}


def _multipart(fields: dict[str, str], name: str, filename: str, content: bytes) -> tuple[bytes, str]:
    boundary = "seam-" + secrets.token_hex(12)
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
             for key, value in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                 "Content-Type: application/jsonl\r\n\r\n".encode() + content + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def create(client: BatchClient, config: ModelConfig, requests: list[dict], submission: Submission,
           note: Callable[..., None]) -> str:
    file_id = submission.file_id
    if file_id is None:
        content = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in requests).encode("utf-8")
        data, content_type = _multipart({"purpose": "batch"}, "file", f"{submission.token}.jsonl", content)
        uploaded = client.json("POST", client.url("/files"), data=data, content_type=content_type, once=True)
        file_id = identifier(uploaded.get("id"), "file id")
        note("uploaded", file_id=file_id)
    batch = client.json("POST", client.url("/batches"), body={
        "input_file_id": file_id, "endpoint": ENDPOINT, "completion_window": "24h",
        "metadata": {"seam_submission": submission.token, "seam_model": config.name[:512]}}, once=True)
    return identifier(batch.get("id"), "batch id")


def find(client: BatchClient, submission: Submission) -> list[str]:
    found, after, seen = [], None, set()
    for _ in range(MAX_PAGES):
        query = {"limit": 100, **({"after": after} if after else {})}
        page = client.json("GET", client.url("/batches?" + urlencode(query)))
        batches = [batch for batch in page.get("data") or [] if isinstance(batch, dict)]
        for batch in batches:
            metadata = batch.get("metadata") if isinstance(batch.get("metadata"), dict) else {}
            if metadata.get("seam_submission") == submission.token:
                found.append(identifier(batch.get("id"), "batch id"))
        created = [batch.get("created_at") for batch in batches if isinstance(batch.get("created_at"), int | float)]
        older = created and min(created) < submission.since - FIND_WINDOW_S  # newest first: the rest is older
        after = batches[-1].get("id") if batches else None
        if found or older or not page.get("has_more") or not isinstance(after, str) or after in seen:
            return found
        seen.add(after)
    return found


def status(client: BatchClient, batch_id: str) -> Status:
    batch = client.json("GET", client.url(f"/batches/{batch_id}"))
    state = str(batch.get("status"))
    counts = batch.get("request_counts") if isinstance(batch.get("request_counts"), dict) else {}
    completed, failed = _count(counts.get("completed")), _count(counts.get("failed"))
    failure = None
    if state == "failed":
        errors = (batch.get("errors") or {}).get("data") if isinstance(batch.get("errors"), dict) else None
        messages = [f"{error.get('code')}: {error.get('message')}" for error in errors or [] if isinstance(error, dict)]
        failure = "failed: " + ("; ".join(messages)[:500] if messages else "no reason given")
    elif state == "expired" and not batch.get("output_file_id") and not batch.get("error_file_id"):
        failure = "expired with no results"
    return Status(state=state, ended=state in ENDED, done=completed + failed, failed=failed,
                  total=_count(counts.get("total")) or None, failure=failure, data=batch,
                  cancelled=state == "cancelled")


def results(client: BatchClient, status: Status) -> Iterator[Result]:
    for key in ("output_file_id", "error_file_id"):
        file_id = (status.data or {}).get(key)
        if not file_id:
            continue
        file_id = identifier(file_id, key.replace("_", " "))
        content = client.call("GET", client.url(f"/files/{file_id}/content"))
        yield from read_results(content, key.removesuffix("_id"), _result)


def _result(line: dict, where: str) -> Result:
    error, response = line.get("error"), line.get("response")
    status_code = response.get("status_code") if isinstance(response, dict) else None
    status_code = status_code if isinstance(status_code, int) and not isinstance(status_code, bool) else None
    if isinstance(error, dict):
        code = str(error.get("code"))
        return Result(line["custom_id"], RESULT_OF_CODE.get(code, "errored"), status_code, None,
                      f"batch error {code}: {error.get('message')}")
    if not isinstance(response, dict) or status_code is None:
        return Result(line["custom_id"], "errored", None, None, f"{where}: neither a response nor an error")
    body = json.dumps(response.get("body"), ensure_ascii=True).encode("ascii")
    return Result(line["custom_id"], "succeeded" if 200 <= status_code <= 299 else "errored", status_code, body,
                  None)


def cancel(client: BatchClient, batch_id: str) -> None:
    client.json("POST", client.url(f"/batches/{batch_id}/cancel"))


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
