"""OpenAI Batch API files: the input file (`custom_id`, `method`, `url`, `body`), which holds the prompts, and the
output and error files (`custom_id`, `response.status_code`, `response.body`, `error.code`, `error.message`).

Each file is JSON Lines, read a line at a time (a line longer than `MAX_LINE_BYTES` is refused), and told apart
by its first line: an input line has a `body`, a result line a `response` or an `error`. A result is judged as
`seam.py run --batch` judges one (`runner.batch.openai`): an error line fails its request with `batch error
CODE: MESSAGE`; a response's body is read by the runner's own code (`harness.rows.judged`) at its
`status_code`. The output file keeps no times: a row's time is the reply's `created`, else the file's
modification time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.records import Attempt, shown
from harness.rows import Collected, config_for, cut, failed, judged, utc

MAX_LINE_BYTES = 64 << 20
ENDPOINT = "/v1/chat/completions"


@dataclass(frozen=True)
class Asked:
    """One line of an input file: what was sent for a request."""

    where: str
    body: dict


def lines(path: Path) -> Iterator[tuple[str, dict]]:
    """("FILE:line", object) for each non-blank line of a Batch API file, read a line at a time."""
    for where, value in jsonl.stream(path, "a Batch API file", max_line_bytes=MAX_LINE_BYTES):
        if not isinstance(value, dict) or not isinstance(value.get("custom_id"), str):
            raise UserError(f"{where}: expected a Batch API line with a custom_id, found {shown(value)}")
        yield where, value


def kind_of(path: Path) -> str:
    """"input" or "results" (output and error files alike), from the file's first line."""
    for where, line in lines(path):
        if "body" in line and "method" in line:
            return "input"
        if "response" in line or "error" in line:
            return "results"
        raise UserError(f"{where}: neither a Batch API input line (custom_id, method, url, body) nor a result line "
                        "(custom_id, response, error)")
    raise UserError(f"{path}: empty; expected a Batch API input, output or error file")


def read_inputs(paths: list[Path]) -> dict[str, Asked]:
    """Every request of the input files, by custom_id (which `seam.py export` sets to the kit's id)."""
    asked: dict[str, Asked] = {}
    for path in paths:
        for where, line in lines(path):
            body = line.get("body")
            if line.get("method") != "POST" or line.get("url") != ENDPOINT or not isinstance(body, dict):
                raise UserError(f"{where}: expected method POST, url {ENDPOINT} and a body (an object): the kit's "
                                "requests are chat completions")
            rid = line["custom_id"]
            if rid in asked:
                raise UserError(f"{where}: custom_id {shown(rid)} again (first at {asked[rid].where})")
            asked[rid] = Asked(where, body)
    return asked


def results(path: Path, asked: dict[str, Asked], model_name: str) -> Iterator[Collected]:
    """Each result line of an output or error file, as the runner would have recorded its request."""
    fallback = utc(os.stat(path).st_mtime, str(path), "the file's modification time")
    for where, line in lines(path):
        rid = line["custom_id"]
        if rid not in asked:
            raise UserError(f"{where}: custom_id {shown(rid)} is not in the input file(s) given; give the batch's "
                            "input file (DIR/batch_input.jsonl of seam.py export) with its output")
        body = dict(asked[rid].body)
        messages = body.pop("messages", None)
        config = config_for(model_name, body, where)
        response, error = line.get("response"), line.get("error")
        status = response.get("status_code") if isinstance(response, dict) else None
        status = status if isinstance(status, int) and not isinstance(status, bool) else None
        reply = response.get("body") if isinstance(response, dict) else None
        created = reply.get("created") if isinstance(reply, dict) else None
        started = utc(created, where, "the reply's created") if isinstance(created, int) else fallback
        if isinstance(error, dict):
            reason = f"batch error {error.get('code')}: {error.get('message')}"
            outcome = failed(reason, (Attempt(started_at=started, latency_s=None, http_status=status,
                                              error=cut(reason), retry_after=None, retry_wait_s=None),))
        elif status is not None and isinstance(reply, dict):
            outcome = judged(reply, status, started, None, config)
        else:
            reason = f"{where}: neither a response nor an error"
            outcome = failed(reason, (Attempt(started_at=started, latency_s=None, http_status=status, error=reason,
                                              retry_after=None, retry_wait_s=None),))
        harness = {"name": "openai-batch", "version": None, "log": path.name,
                   "input": Path(asked[rid].where.rsplit(":", 1)[0]).name,
                   "request_id": response.get("request_id") if isinstance(response, dict) else None}
        yield Collected(rid, where, 1, messages if isinstance(messages, list) else [], replace(outcome, body=body),
                        started, started, harness, batch=True)
