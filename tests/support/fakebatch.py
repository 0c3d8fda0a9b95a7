"""Test support: a real HTTP server on 127.0.0.1 that fakes three providers' *batch* APIs, with scripted faults.

fakeserver.py fakes the synchronous endpoints; a batch client instead uploads many requests, polls a job and
downloads results keyed by an id, so it fails differently: results out of order, one request failing inside a
batch that succeeds, a whole batch failing or expiring, a cancel, a restart that must find its batch again by
listing, a results URL on another host. `serve_batch(provider)` serves one provider at `fake.url` (the base_url a
client config uses) and records what reaches it; the replies are fakeserver's, so a client can share its parsers.
The fake's own tests are tests/test_fakebatch.py. Its shapes come from the public documentation:
- OpenAI: https://platform.openai.com/docs/guides/batch (input, output and error lines; statuses; the
  batch_expired line; cancel; list with limit, after) and https://platform.openai.com/docs/api-reference/batch
  (the Batch object; errors {object, data[{code, message, param, line}]}; a cancelled batch keeps "partial results
  (if any) in the output file"; /batch/request-output), https://platform.openai.com/docs/api-reference/files.
- Anthropic: https://docs.anthropic.com/en/api/creating-message-batches, and the pages beside it:
  retrieving-message-batches, listing-message-batches (newest first; after_id, before_id, limit -> data, has_more,
  first_id, last_id), canceling-message-batches, retrieving-message-batch-results (succeeded; errored, with the
  nested {type: "error", error: {type, message}}; canceled; expired) and errors.
- Gemini: https://ai.google.dev/api/batch-api (batchGenerateContent; InlinedRequest {request, metadata};
  GenerateContentBatch, BatchStats, BatchState; Operation {name, metadata, done, error | response}, the response a
  GenerateContentBatchOutput {inlinedResponses: {inlinedResponses: [{metadata, response | error}]}}; batches.list
  with pageSize, pageToken -> {operations, nextPageToken}; batches.cancel -> {}) and the guide
  https://ai.google.dev/gemini-api/docs/batch-api (x-goog-api-key; .done, .metadata.state, .response).
Departures, so that no client gets by on luck: results come back shuffled (Gemini documents input order); an
OpenAI input file is checked when its batch is created, answering 400 (the service fails such a batch later);
and no clock moves a batch on: retrieving it `polls` times in one status does.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from .fakeserver import RESPONSES, edited

API_KEY = DEFAULT_KEY = "sk-fake-batch-key-0123456789abcdef"  # fake.api_key unless serve_batch(api_key=)
BASES = {"openai": "/v1", "anthropic": "/v1", "gemini": "/v1beta"}
ENDPOINT = "/v1/chat/completions"
G = "BATCH_STATE_"
PATHS = {"openai": ["validating", "in_progress", "finalizing", "completed"], "anthropic": ["in_progress", "ended"],
         "gemini": [G + "PENDING", G + "RUNNING", G + "SUCCEEDED"]}
DOOMED = {("openai", "failed"): ["validating", "failed"],
          ("openai", "expired"): ["validating", "in_progress", "expired"],
          ("gemini", "failed"): [G + "PENDING", G + "FAILED"],
          ("gemini", "expired"): [G + "PENDING", G + "RUNNING", G + "EXPIRED"]}  # Anthropic: see _enter
CANCEL_TAIL = {"openai": ["cancelling", "cancelled"], "anthropic": ["canceling", "ended"],
               "gemini": [G + "CANCELLED"]}  # Gemini's BatchState has no "cancelling"
SETTLED = {"finalizing", "failed", "expired", "cancelled", "ended", G + "SUCCEEDED", G + "FAILED", G + "EXPIRED",
           G + "CANCELLED"}  # entering one of these decides every request's outcome
KINDS = {"errored", "expired", "canceled"}
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
GEMINI_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main."
GEMINI_ENDS = {G + "FAILED": {"code": 13, "message": "Batch failed (the fake's batch_failure)."},
               G + "EXPIRED": {"code": 4, "message": "Batch expired before it finished (batch_failure)."},
               G + "CANCELLED": {"code": 1, "message": "Batch was cancelled."}}  # codes: google.rpc.Code
ERRORED = {"openai": {"code": "server_error", "message": "The server had an error while processing your request."},
           "anthropic": {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
           "gemini": {"code": 13, "message": "Internal error encountered.", "status": "INTERNAL"}}
EXPIRED = {"openai": {"code": "batch_expired",
                      "message": "This request could not be executed before the completion window expired."},
           "gemini": {"code": 4, "message": "The request expired before it ran.", "status": "DEADLINE_EXCEEDED"}}
ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}
GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND"}


class ApiError(Exception):
    """A request the provider would refuse; rendered in that provider's error JSON."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code


class Batch:
    """One batch: its requests in input order, as (custom_id, message, model, metadata), where it is on its path
    of statuses, and once settled each request's outcome: "succeeded", "errored", "expired", "canceled" or None."""

    def __init__(self, number: int, bid: str, requests: list, path: list[str], doom: str | None, info: dict):
        self.number, self.id, self.requests, self.path, self.doom, self.info = number, bid, requests, path, doom, info
        self.stage = self.gets = 0  # gets: retrievals in the current status
        self.created = time.time()
        self.times = {path[0]: self.created}  # status -> when the batch entered it
        self.cancelled, self.done = False, set()  # done: the requests that ran before a cancel
        self.outcomes: list | None = None
        self.order = list(range(len(requests)))  # the order results are served in
        self.files: dict[str, str] = {}  # OpenAI: "output"/"error" -> file id

    @property
    def status(self) -> str:
        return self.path[self.stage]

    @property
    def finished(self) -> bool:
        return self.stage == len(self.path) - 1


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):  # a client killed mid-request: expected here
        pass


class FakeBatchServer(_Quiet):
    def __init__(self, provider: str, *, polls: int, shuffle: bool, fail: dict | None, batch_failure: str | None,
                 foreign_results: bool, seed: int, api_key: str, port: int = 0):
        unknown = set((fail or {}).values()) - KINDS
        if provider not in BASES or batch_failure not in (None, "failed", "expired") or unknown:
            raise ValueError(f"bad provider {provider!r}, batch_failure {batch_failure!r} or fail kinds {fail!r}")
        super().__init__(("127.0.0.1", port), _Handler)  # loopback only, whatever the port
        self.provider, self.polls, self.shuffle, self.seed, self.api_key = provider, polls, shuffle, seed, api_key
        self.fail, self.batch_failure, self.rng = dict(fail or {}), batch_failure, random.Random(seed)
        self.lock = threading.Lock()
        self.received: list[dict] = []  # every request: method, path (with the query), headers, body, at
        self.submitted: list[tuple[str, list[str]]] = []  # per batch created: (id, its custom_ids in input order)
        self.foreign_received: list[dict] = []  # whatever reached the foreign results host (nothing should)
        self.batches: dict[str, Batch] = {}  # in creation order
        self.files: dict[str, dict] = {}  # OpenAI: file id -> {"object": File object, "data": bytes}
        self.seen: Counter = Counter()  # message text -> times processed, for `fail`
        self.foreign = _Foreign(self) if foreign_results and provider == "anthropic" else None
        self.holds: list[tuple] = []  # (pattern, after_done, held event, released event): see `hold`

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{BASES[self.provider]}"

    @contextlib.contextmanager
    def hold(self, pattern: str, *, after_done: bool = False):
        """Hold the answer to calls whose "METHOD path" (no query) matches `pattern`, after the work is done,
        until the block ends: a client killed meanwhile has had its call served but never heard the answer.
        `after_done`: only answers that show a finished batch (Gemini's results come with its status).
        The yielded event is set when a call is held."""
        held = threading.Event()
        entry = (re.compile(pattern), after_done, held, threading.Event())
        with self.lock:
            self.holds.append(entry)
        try:
            yield held
        finally:
            entry[3].set()
            with self.lock:
                self.holds.remove(entry)

    def pause(self, method: str, target: str, data: bytes) -> None:
        """Called by the handler before it answers: wait while a hold matches this call."""
        call = f"{method} {urlsplit(target).path}"
        with self.lock:
            matching = [entry for entry in self.holds if entry[0].search(call)]
        for _, after_done, held, released in matching:
            if after_done and not _finished(data):
                continue
            held.set()
            released.wait(60)

    def count(self, pattern: str) -> int:
        """How many calls received so far have a "METHOD path" (no query) matching `pattern`."""
        with self.lock:
            return sum(bool(re.search(pattern, f"{call['method']} {urlsplit(call['path']).path}"))
                       for call in self.received)

    def submissions_per_custom_id(self) -> Counter:
        with self.lock:
            return Counter(cid for _, ids in self.submitted for cid in ids)

    def dispatch(self, method: str, target: str, headers, body: bytes) -> tuple[int, str, bytes]:
        parts, base = urlsplit(target), BASES[self.provider]
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        route = parts.path[len(base):] if parts.path.startswith(base + "/") else ""
        with self.lock:
            self.received.append({"method": method, "path": target, "headers": dict(headers), "body": body,
                                  "at": time.time()})
            try:
                self._authorise(headers)
                for verb, pattern, name in ROUTES[self.provider]:
                    if verb == method and (match := re.fullmatch(pattern, route)):
                        result = getattr(self, name)(*match.groups(), query=query, headers=headers, body=body)
                        return result if isinstance(result, tuple) else (200, "application/json", _dumps(result))
                raise ApiError(404, f"Unknown request URL: {method} {parts.path}")
            except ApiError as exc:
                return exc.status, "application/json", _dumps(self._error_body(exc))
            except Exception as exc:  # a bug in the fake: say so rather than drop the connection
                return 500, "application/json", _dumps(self._error_body(ApiError(500, f"fake bug: {exc!r}")))

    def _authorise(self, headers):
        key = {"openai": (headers.get("Authorization") or "").removeprefix("Bearer "),
               "anthropic": headers.get("x-api-key"), "gemini": headers.get("x-goog-api-key")}[self.provider]
        if key != self.api_key:
            raise ApiError(401, "Incorrect or missing API key (the fake's api_key).")
        if self.provider == "anthropic" and not headers.get("anthropic-version"):
            raise ApiError(400, "anthropic-version: header is required")

    def _error_body(self, exc: ApiError) -> dict:
        if self.provider == "openai":
            return {"error": {"message": exc.message, "type": "server_error" if exc.status >= 500 else
                              "invalid_request_error", "param": exc.param,
                              "code": exc.code or ("invalid_api_key" if exc.status == 401 else None)}}
        if self.provider == "anthropic":
            return {"type": "error", "error": {"type": ANTHROPIC_TYPES.get(exc.status, "api_error"),
                                               "message": exc.message}, "request_id": f"req_{len(self.received):08d}"}
        return {"error": {"code": exc.status, "message": exc.message,
                          "status": GOOGLE_STATUS.get(exc.status, "INTERNAL")}}

    # --- the life of a batch, the same for every provider --------------------------------------------

    def _create(self, requests: list, info: dict) -> Batch:
        number, tag = len(self.batches), f"{self.rng.getrandbits(96):024x}"
        doom = self.batch_failure if number == 0 else None
        bid = {"openai": f"batch_{tag}", "anthropic": f"msgbatch_{tag}", "gemini": f"batches/{tag[:16]}"}[self.provider]
        batch = Batch(number, bid, requests, list(DOOMED.get((self.provider, doom), PATHS[self.provider])), doom, info)
        if self.shuffle and len(requests) > 1:
            random.Random(f"{self.seed}:{number}").shuffle(batch.order)
            if batch.order == sorted(batch.order):  # never input order
                batch.order = batch.order[1:] + batch.order[:1]
        self.batches[batch.id] = batch
        self.submitted.append((batch.id, [request[0] for request in requests]))
        return batch

    def _batch(self, bid: str) -> Batch:
        if (batch := self.batches.get(f"batches/{bid}" if self.provider == "gemini" else bid)) is None:
            raise ApiError(404, f"No batch found with id '{bid}'.")
        return batch

    def _enter(self, batch: Batch, stage: int):
        batch.stage, batch.gets = stage, 0
        batch.times[batch.status] = time.time()
        if batch.status in SETTLED and batch.outcomes is None:  # decide the outcomes, in input order
            every = range(len(batch.requests))
            if batch.cancelled:
                batch.outcomes = [self._process(batch, i) if i in batch.done else "canceled" for i in every]
            elif batch.doom == "failed" and self.provider != "anthropic":
                batch.outcomes = [None for _ in every]  # failed as a whole: nothing ran
            else:  # Anthropic has no whole-batch failure: a doomed batch ends with every request expired
                batch.outcomes = ["expired" for _ in every] if batch.doom else [self._process(batch, i) for i in every]
            if self.provider == "openai":
                self._write_openai_files(batch)

    def _process(self, batch: Batch, index: int) -> str:
        """Run one request: `fail` applies the first time a message is processed, counted per message text."""
        message = batch.requests[index][1]
        first, self.seen[message] = self.seen[message] == 0, self.seen[message] + 1
        kind = next((kind for part, kind in self.fail.items() if part in message), None) if first else None
        return ("errored" if kind == "canceled" and self.provider != "anthropic" else kind) or "succeeded"

    def get(self, bid: str, **_):
        """Retrieve a batch: the `polls`-th retrieval in a status moves it on, before the next one answers."""
        batch = self._batch(bid)
        while not batch.finished and batch.gets >= self.polls:
            self._enter(batch, batch.stage + 1)
        batch.gets += 1
        return self._render(batch)

    def cancel(self, bid: str, **_):
        if (batch := self._batch(bid)).finished or batch.cancelled:
            raise ApiError(400, f"Cannot cancel a batch with status '{batch.status}'.")
        batch.cancelled = True
        if batch.status not in ("validating", G + "PENDING") and self.provider != "gemini":  # half of them ran
            count = len(batch.requests)
            batch.done = set(random.Random(f"{self.seed}:cancel:{batch.number}").sample(range(count), count // 2))
        batch.path = batch.path[:batch.stage + 1] + CANCEL_TAIL[self.provider]
        self._enter(batch, batch.stage + 1)
        return {} if self.provider == "gemini" else self._render(batch)

    def _render(self, batch: Batch) -> dict:
        return {"openai": self._openai_batch, "anthropic": self._anthropic_batch,
                "gemini": self._gemini_operation}[self.provider](batch)

    def _page(self, limit: str | None, most: int, after: str | None = None, before: str | None = None):
        """A page of batches, newest first, after (or before) the one with that id: (page, has_more)."""
        items, limit = list(reversed(self.batches.values())), _limit(limit, 20, most)
        ids = [batch.id for batch in items]
        if (cursor := before or after) is not None and cursor not in ids:
            raise ApiError(400, f"Invalid cursor: no batch '{cursor}'.", param="before_id" if before else "after")
        if before:
            end = ids.index(before)
            return items[max(0, end - limit):end], end > limit
        start = ids.index(after) + 1 if after else 0
        return items[start:start + limit], start + limit < len(items)

    def _answer(self, batch: Batch, index: int) -> dict:
        """The model's reply to one request, fakeserver's shape with its own ids and word-count usage."""
        _, message, model, _ = batch.requests[index]
        reply, tag = RESPONSES[self.provider]({"model": model}, message, "ok"), f"{batch.number:03d}{index:06d}"
        asked, said = max(1, len(message.split())), len(edited(message).split())
        if self.provider == "openai":
            reply.update(id=f"chatcmpl-{tag}", created=int(time.time()), system_fingerprint="fp_fakebatch",
                         usage={"prompt_tokens": asked, "completion_tokens": said, "total_tokens": asked + said})
        elif self.provider == "anthropic":
            reply.update(id=f"msg_{tag}", usage={"input_tokens": asked, "output_tokens": said})
        else:
            reply.update(responseId=f"resp-{tag}", modelVersion=model, usageMetadata={
                "promptTokenCount": asked, "candidatesTokenCount": said, "totalTokenCount": asked + said})
        return reply

    # --- OpenAI ------------------------------------------------------------------------------------

    def openai_upload(self, *, headers, body, **_):
        fields = _multipart(headers.get("Content-Type") or "", body)
        purpose = fields.get("purpose", (None, b""))[1].decode()
        if "file" not in fields or purpose not in ("batch", "fine-tune", "assistants", "vision", "user_data"):
            raise ApiError(400, "Expected multipart fields 'file' and 'purpose' (e.g. purpose=batch).", param="file")
        return self._store_file(fields["file"][1], fields["file"][0] or "upload.jsonl", purpose)

    def _store_file(self, data: bytes, filename: str, purpose: str) -> dict:
        file = {"id": f"file-{self.rng.getrandbits(96):024x}", "object": "file", "bytes": len(data), "purpose": purpose,
                "created_at": int(time.time()), "filename": filename, "status": "processed", "expires_at": None,
                "status_details": None}
        self.files[file["id"]] = {"object": file, "data": data}
        return file

    def openai_content(self, file_id: str, **_):
        if file_id not in self.files:
            raise ApiError(404, f"No such File object: {file_id}", param="id")
        return 200, "application/octet-stream", self.files[file_id]["data"]

    def openai_create(self, *, body, **_):
        request = _json_body(body)
        metadata, stored = request.get("metadata"), self.files.get(request.get("input_file_id"))
        if request.get("endpoint") != ENDPOINT:
            raise ApiError(400, f"endpoint must be '{ENDPOINT}' (the only one this fake serves).", param="endpoint")
        if request.get("completion_window") != "24h":
            raise ApiError(400, "completion_window must be '24h'.", param="completion_window")
        if metadata is not None and not (isinstance(metadata, dict) and len(metadata) <= 16 and all(
                isinstance(k, str) and isinstance(v, str) and len(k) <= 64 and len(v) <= 512
                for k, v in metadata.items())):
            raise ApiError(400, "metadata: at most 16 pairs of strings (keys <= 64, values <= 512).", param="metadata")
        if stored is None or stored["object"]["purpose"] != "batch":
            raise ApiError(400, f"No file with purpose 'batch': {request.get('input_file_id')!r}.",
                           param="input_file_id")
        requests, ids = [], set()
        for number, line in enumerate(stored["data"].decode("utf-8", "replace").splitlines(), 1):
            if line.strip():
                requests.append(_input_line(number, line, ids))
        if not requests:
            raise ApiError(400, "The input file has no requests.", param="input_file_id")
        info = {"metadata": metadata, "input_file_id": stored["object"]["id"]}
        return self._openai_batch(self._create(requests, info))

    def openai_list(self, *, query, **_):
        page, more = self._page(query.get("limit"), 100, after=query.get("after"))
        return {"object": "list", "data": [self._openai_batch(batch) for batch in page], "has_more": more,
                "first_id": page[0].id if page else None, "last_id": page[-1].id if page else None}

    def _write_openai_files(self, batch: Batch):
        lines: dict[str, list[bytes]] = {"output": [], "error": []}
        for i in batch.order:  # requests cancelled before they ran are simply absent
            (custom_id, *_), kind, tag = batch.requests[i], batch.outcomes[i], f"{batch.number:03d}{i:06d}"
            if kind in ("succeeded", "errored", "expired"):
                line = {"id": f"batch_req_{tag}", "custom_id": custom_id, "response": None, "error": None}
                if kind == "succeeded":
                    line["response"] = {"status_code": 200, "request_id": f"req_{tag}", "body": self._answer(batch, i)}
                else:
                    line["error"] = (EXPIRED if kind == "expired" else ERRORED)["openai"]
                lines["output" if kind == "succeeded" else "error"].append(_dumps(line))
        for name, found in lines.items():
            if found:
                data = b"\n".join(found) + b"\n"
                batch.files[name] = self._store_file(data, f"{batch.id}_{name}.jsonl", "batch_output")["id"]

    def _openai_batch(self, batch: Batch) -> dict:
        counts, started = Counter(batch.outcomes or []), "in_progress" in batch.times or batch.cancelled
        stamps = {f"{status}_at": int(batch.times[status]) if status in batch.times else None for status in (
            "in_progress", "finalizing", "completed", "failed", "expired", "cancelling", "cancelled")}
        errors = {"object": "list", "data": [{"code": "token_limit_exceeded", "line": None, "param": None, "message":
                                              "Enqueued token limit reached (the fake's batch_failure); retry later."}]}
        return {"id": batch.id, "object": "batch", "endpoint": ENDPOINT, "model": batch.requests[0][2],
                "errors": errors if batch.status == "failed" else None, "input_file_id": batch.info["input_file_id"],
                "completion_window": "24h", "status": batch.status,
                "output_file_id": batch.files.get("output") if batch.finished else None,
                "error_file_id": batch.files.get("error") if batch.finished else None,
                "created_at": int(batch.created), "expires_at": int(batch.created) + 86400, **stamps,
                "request_counts": {"total": len(batch.requests) if started else 0, "completed": counts["succeeded"],
                                   "failed": counts["errored"] + counts["expired"]}, "metadata": batch.info["metadata"]}

    # --- Anthropic ---------------------------------------------------------------------------------

    def anthropic_create(self, *, body, **_):
        if not isinstance(items := _json_body(body).get("requests"), list) or not items:
            raise ApiError(400, "requests: a non-empty list is required")
        requests, ids = [], set()
        for index, item in enumerate(items):
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
                raise ApiError(400, f"requests.{index}.custom_id: should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
            if custom_id in ids:
                raise ApiError(400, f"requests.{index}.custom_id: '{custom_id}' is not unique within the batch")
            if not isinstance(params := item.get("params"), dict):
                raise ApiError(400, f"requests.{index}.params: Field required")
            ids.add(custom_id)
            requests.append((custom_id, _first_user(params.get("messages"), "content"), params.get("model", ""), None))
        return self._anthropic_batch(self._create(requests, {}))

    def anthropic_list(self, *, query, **_):
        page, more = self._page(query.get("limit"), 1000, after=query.get("after_id"), before=query.get("before_id"))
        return {"data": [self._anthropic_batch(batch) for batch in page], "has_more": more,
                "first_id": page[0].id if page else None, "last_id": page[-1].id if page else None}

    def anthropic_results(self, bid: str, **_):
        if (batch := self._batch(bid)).status != "ended":
            raise ApiError(400, f"Message Batch {bid} has not ended; its results are available once it has.")
        return 200, "application/x-jsonl", self.results_jsonl(batch)

    def results_jsonl(self, batch: Batch) -> bytes:
        lines = []
        for i in batch.order:
            result, kind = {"type": batch.outcomes[i]}, batch.outcomes[i]
            if kind == "succeeded":
                result["message"] = self._answer(batch, i)
            elif kind == "errored":
                result["error"] = {**ERRORED["anthropic"], "request_id": f"req_{batch.number:03d}{i:06d}"}
            lines.append(_dumps({"custom_id": batch.requests[i][0], "result": result}) + b"\n")
        return b"".join(lines)

    def _anthropic_batch(self, batch: Batch) -> dict:
        ended, times = batch.status == "ended", batch.times
        counts = Counter(batch.outcomes if ended else [])
        host = f"http://localhost:{self.foreign.server_address[1]}/v1" if self.foreign else self.url
        return {"id": batch.id, "type": "message_batch", "processing_status": batch.status,
                "request_counts": {"processing": 0 if ended else len(batch.requests),
                                   **{kind: counts[kind] for kind in ("succeeded", "errored", "canceled", "expired")}},
                "ended_at": _rfc3339(times["ended"]) if ended else None, "created_at": _rfc3339(batch.created),
                "expires_at": _rfc3339(batch.created + 86400), "archived_at": None,
                "cancel_initiated_at": _rfc3339(times["canceling"]) if "canceling" in times else None,
                "results_url": f"{host}/messages/batches/{batch.id}/results" if ended else None}

    # --- Gemini ------------------------------------------------------------------------------------

    def gemini_create(self, model: str, *, body, **_):
        spec = _json_body(body).get("batch")
        spec = spec if isinstance(spec, dict) else {}
        config = spec.get("inputConfig", spec.get("input_config"))
        name = spec.get("displayName", spec.get("display_name"))
        inlined = config.get("requests") if isinstance(config, dict) else None
        if not isinstance(items := inlined.get("requests") if isinstance(inlined, dict) else None, list) or not items \
                or not isinstance(name, str):
            raise ApiError(400, "batch.display_name and batch.input_config.requests.requests[] are required "
                                "(this fake takes inlined requests only)")
        requests = []
        for index, item in enumerate(items):
            if not isinstance(request := item.get("request") if isinstance(item, dict) else None, dict):
                raise ApiError(400, f"batch.input_config.requests.requests[{index}].request is required")
            metadata = item.get("metadata")
            key = metadata.get("key") if isinstance(metadata, dict) else None
            requests.append((key if isinstance(key, str) else str(index), _first_user(request.get("contents"), "parts"),
                             model, metadata))
        return self._gemini_operation(self._create(requests, {"display_name": name, "model": model}))

    def gemini_list(self, *, query, **_):
        if not re.fullmatch(r"p\d+", token := query.get("pageToken") or "p0"):
            raise ApiError(400, "Invalid pageToken.")
        items, start = list(reversed(self.batches.values())), int(token[1:])
        size = _limit(query.get("pageSize"), 50, 1000)
        found = {"operations": [self._gemini_operation(batch) for batch in items[start:start + size]]}
        if start + size < len(items):
            found["nextPageToken"] = f"p{start + size}"
        return found

    def _gemini_operation(self, batch: Batch) -> dict:
        counts, total = Counter(batch.outcomes or []), len(batch.requests)
        good, bad = counts["succeeded"], counts["errored"] + counts["expired"]
        metadata = {"@type": GEMINI_TYPE + "GenerateContentBatch", "model": f"models/{batch.info['model']}",
                    "name": batch.id, "displayName": batch.info["display_name"], "createTime": _rfc3339(batch.created),
                    "updateTime": _rfc3339(batch.times[batch.status]), "state": batch.status,
                    "batchStats": {"requestCount": str(total), "successfulRequestCount": str(good),
                                   "failedRequestCount": str(bad), "pendingRequestCount": str(total - good - bad)}}
        operation = {"name": batch.id, "metadata": metadata, "done": batch.finished}
        if batch.finished:
            metadata["endTime"] = metadata["updateTime"]
        if batch.status == G + "SUCCEEDED":  # the output, in the response and (where the SDK reads it) the metadata
            lines = []
            for i in batch.order:
                echoed, kind = batch.requests[i][3], batch.outcomes[i]
                line = {} if echoed is None else {"metadata": echoed}
                if kind == "succeeded":
                    line["response"] = self._answer(batch, i)
                else:  # a google.rpc.Status, with the name of its code as `status`
                    line["error"] = (EXPIRED if kind == "expired" else ERRORED)["gemini"]
                lines.append(line)
            metadata["output"] = {"inlinedResponses": {"inlinedResponses": lines}}
            operation["response"] = {"@type": GEMINI_TYPE + "GenerateContentBatchOutput", **metadata["output"]}
        elif batch.finished:
            operation["error"] = GEMINI_ENDS[batch.status]
        return operation


ROUTES = {  # (method, path after the base, handler); ids are [\w-]+, so "/cancel" and ":cancel" never match one
    "openai": [("POST", r"/files", "openai_upload"), ("GET", r"/files/([\w-]+)/content", "openai_content"),
               ("POST", r"/batches", "openai_create"), ("GET", r"/batches", "openai_list"),
               ("GET", r"/batches/([\w-]+)", "get"), ("POST", r"/batches/([\w-]+)/cancel", "cancel")],
    "anthropic": [("POST", r"/messages/batches", "anthropic_create"), ("GET", r"/messages/batches", "anthropic_list"),
                  ("GET", r"/messages/batches/([\w-]+)", "get"),
                  ("POST", r"/messages/batches/([\w-]+)/cancel", "cancel"),
                  ("GET", r"/messages/batches/([\w-]+)/results", "anthropic_results")],
    "gemini": [("POST", r"/models/([^/:]+):batchGenerateContent", "gemini_create"), ("GET", r"/batches", "gemini_list"),
               ("GET", r"/batches/([\w-]+)", "get"), ("POST", r"/batches/([\w-]+):cancel", "cancel")],
}


def _input_line(number: int, line: str, ids: set) -> tuple:
    """One line of an OpenAI batch input file, checked as the Batch guide describes it."""
    try:
        item = json.loads(line)
    except ValueError:
        item = None
    if not (isinstance(item, dict) and isinstance(item.get("custom_id"), str) and isinstance(item.get("body"), dict)):
        raise ApiError(400, f"Line {number}: not a JSON object with custom_id, method, url and body.",
                       code="invalid_json_line")
    if item.get("method") != "POST" or item.get("url") != ENDPOINT:
        raise ApiError(400, f"Line {number}: method must be POST and url '{ENDPOINT}', the batch's endpoint.",
                       param="url", code="mismatched_endpoint")
    if item["custom_id"] in ids:
        raise ApiError(400, f"Line {number}: duplicate custom_id '{item['custom_id']}'; each must be unique.",
                       param="custom_id", code="duplicate_custom_id")
    ids.add(item["custom_id"])
    return item["custom_id"], _first_user(item["body"].get("messages"), "content"), item["body"].get("model", ""), None


def _first_user(turns, field: str) -> str:
    """The text of the first user turn (messages[0] in a plain chat; a system message before it is skipped), its
    `field` ("content", or Gemini's "parts") a string or a list of blocks with text."""
    turns = turns if isinstance(turns, list) else []
    content = next((t for t in turns if isinstance(t, dict) and t.get("role", "user") == "user"), {}).get(field)
    if isinstance(content, list):
        return "".join(block.get("text", "") for block in content if isinstance(block, dict))
    return content if isinstance(content, str) else ""


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """multipart/form-data fields, name -> (filename, bytes); parsed by hand so that the bytes stay exact."""
    if not (boundary := re.search(r'boundary="?([^";]+)"?', content_type)) or "multipart/form-data" not in content_type:
        raise ApiError(400, "Expected a multipart/form-data body.")
    fields = {}
    for part in body.split(b"--" + boundary.group(1).encode())[1:]:
        if part.startswith(b"--"):
            break
        head, _, data = part.partition(b"\r\n\r\n")
        if name := re.search(rb'\bname="([^"]*)"', head):
            filename = re.search(rb'filename="([^"]*)"', head)
            fields[name.group(1).decode()] = (filename and filename.group(1).decode(), data.removesuffix(b"\r\n"))
    return fields


def _json_body(body: bytes) -> dict:
    try:
        value = json.loads(body or b"null")
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ApiError(400, "The request body must be a JSON object.")
    return value


def _limit(value: str | None, default: int, most: int) -> int:
    if value is not None and (not value.isdigit() or not 1 <= int(value) <= most):
        raise ApiError(400, f"limit must be an integer from 1 to {most}.", param="limit")
    return default if value is None else int(value)


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _dumps(value) -> bytes:
    return json.dumps(value).encode()


def _finished(data: bytes) -> bool:
    """Whether an answer shows a finished batch: Gemini `done`, OpenAI's or Anthropic's end states."""
    try:
        value = json.loads(data)
    except ValueError:
        return False
    return isinstance(value, dict) and (value.get("done") is True or value.get("processing_status") == "ended"
                                        or value.get("status") in ("completed", "failed", "expired", "cancelled"))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else each reply's body waits ~40 ms for the client's delayed ACK

    def log_message(self, *args):
        pass

    def _serve(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, content_type, data = self.server.dispatch(self.command, self.path, self.headers, body)
        if hasattr(self.server, "pause"):
            self.server.pause(self.command, self.path, data)
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client left (or was killed) before the reply
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = _serve


class _Foreign(_Quiet):
    """The other host a foreign `results_url` names: it records what reaches it (nothing should) and answers
    with the real results, so that only the record shows a client that followed it."""

    def __init__(self, owner: FakeBatchServer):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner

    def dispatch(self, method: str, target: str, headers, body: bytes) -> tuple[int, str, bytes]:
        with (owner := self.owner).lock:
            owner.foreign_received.append({"method": method, "path": target, "headers": dict(headers), "body": body,
                                           "at": time.time()})
            match = re.fullmatch(r"/v1/messages/batches/([\w-]+)/results", urlsplit(target).path)
            batch = owner.batches.get(match.group(1)) if match else None
            data = owner.results_jsonl(batch) if batch is not None and batch.status == "ended" else b""
        return 200 if data else 404, "application/x-jsonl", data


@contextlib.contextmanager
def serve_batch(provider: str, *, polls: int = 2, shuffle: bool = True, fail: dict[str, str] | None = None,
                batch_failure: str | None = None, foreign_results: bool = False, seed: int = 0,
                api_key: str = API_KEY, port: int = 0):
    """Serve a fake batch API for `provider` ("openai", "anthropic", "gemini") for the duration of a `with` block.

    polls: retrievals of a batch in each status before it moves on. shuffle: results in a seeded random order,
    never input order. fail: {substring of a user message: "errored" | "expired" | "canceled"}, applied the first
    time a message containing it is processed, so that a resubmission succeeds. batch_failure: "failed" or
    "expired", for the first batch created. foreign_results (Anthropic): results_url names another host.
    port: the port on 127.0.0.1 (0: any free one; scripts/fake_batch_server.py serves this for users).
    """
    fake = FakeBatchServer(provider, polls=polls, shuffle=shuffle, fail=fail, batch_failure=batch_failure,
                           foreign_results=foreign_results, seed=seed, api_key=api_key, port=port)
    servers = [fake] + ([fake.foreign] if fake.foreign else [])
    for server in servers:
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield fake
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
