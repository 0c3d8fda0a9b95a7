"""What the runner keeps of a reply of unbounded length (issue 36, defect 2).

A reply's text longer than `common.records.MAX_OUTPUT_CHARS` is recorded cut to that length, in `output` and
in `response` alike, and the row is unusable with a reason saying so; a response body larger than
`runner.transport.MAX_BODY_BYTES` is not read further and its request fails, not retried (the server would
send it again). Both read back through the kit's trace reader.
"""

from __future__ import annotations

import dataclasses
import io

import pytest
from support.fakeserver import serve, write_config
from support.samples import make_requests

from common.records import MAX_OUTPUT_CHARS
from common.traces import read_final
from runner import providers, transport
from runner.retry import RetryPolicy
from runner.run import run

FAST = RetryPolicy(max_retries=2, base_s=0.01, cap_s=0.02)


def strings(value):
    """Every string inside a parsed JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from strings(inner)


def ask_one(tmp_path, provider: str, behaviour: str):
    (request,) = [dataclasses.replace(row, message="m-long") for row in make_requests(1, conditions=("clean",))]
    out = tmp_path / "t.jsonl"
    with serve({"m-long": [behaviour]}) as server:
        run(write_config(tmp_path / "m.toml", server, provider), [request], out, log=io.StringIO(), policy=FAST)
        asked = len(server.received)
    return read_final(out).final[request.id], asked


@pytest.mark.parametrize("provider", providers.NAMES)
def test_a_reply_longer_than_the_kit_keeps_is_recorded_cut_and_unusable(tmp_path, provider):
    row, asked = ask_one(tmp_path, provider, "say:" + "y" * (MAX_OUTPUT_CHARS + 7))
    assert asked == 1
    assert row.status == "unusable"
    assert row.output == "y" * MAX_OUTPUT_CHARS
    assert f"longer than the {MAX_OUTPUT_CHARS:,} characters a trace keeps" in row.reason
    assert "cut to" in row.reason
    assert max(map(len, strings(row.response))) == MAX_OUTPUT_CHARS  # the response's copy of the text too


def test_a_reply_of_exactly_the_limit_is_kept_whole_and_ok(tmp_path):
    row, _ = ask_one(tmp_path, "openai", "say:" + "y" * MAX_OUTPUT_CHARS)
    assert row.status == "ok" and row.reason is None and len(row.output) == MAX_OUTPUT_CHARS


def test_a_response_larger_than_the_runner_reads_fails_without_a_retry(tmp_path, monkeypatch):
    monkeypatch.setattr(transport, "MAX_BODY_BYTES", 50_000, raising=False)
    row, asked = ask_one(tmp_path, "openai", "say:" + "y" * 60_000)
    assert asked == 1  # not asked again: the same request would get the same reply
    assert row.status == "failed" and row.output is None
    assert "larger than" in row.reason and "50,000 bytes" in row.reason
    assert len(row.attempts) == 1 and row.attempts[0].http_status == 200
