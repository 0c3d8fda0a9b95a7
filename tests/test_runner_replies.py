"""No reply crashes the runner: every 2xx, however hostile its JSON, becomes a row that reads back.

Each fault here once raised out of the worker thread (UnicodeEncodeError,
RecursionError, ValueError), left no row, and so was asked again, and crashed
again, on every rerun. Now each is a row with a status and a reason, written
as strict JSON and read back by common.traces.
"""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
from support.fakeserver import edited, serve, write_config
from support.samples import make_requests

from common.traces import read_final
from runner import providers
from runner.retry import RetryPolicy
from runner.run import run

FAST = RetryPolicy(max_retries=2, base_s=0.01, cap_s=0.02)

HOSTILE = {  # behaviour -> (status, words in the reason)
    "surrogate": ("unusable", "lone surrogate"),
    "deep": ("failed", "nested too deeply"),
    "deep:150": ("failed", "nested too deeply"),
    "bigint": ("failed", "cannot be read"),
    "nan": ("unusable", "NaN or Infinity"),
    "inf": ("unusable", "NaN or Infinity"),
}


def strict_json(line: str):
    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(line, parse_constant=refuse)


@pytest.mark.parametrize("provider", providers.NAMES)
def test_every_hostile_reply_becomes_a_row_and_a_rerun_asks_nothing(tmp_path, provider):
    rows = [dataclasses.replace(row, message=f"m-{name}") for row, name in
            zip(make_requests(len(HOSTILE) + 1, conditions=("clean",)), [*HOSTILE, "fine"], strict=True)]
    out = tmp_path / "t.jsonl"
    with serve({f"m-{name}": [name] for name in HOSTILE}) as server:
        config = write_config(tmp_path / "m.toml", server, provider)
        summary = run(config, rows, out, log=io.StringIO(), policy=FAST)
        again = run(config, rows, out, log=io.StringIO(), policy=FAST)
        assert len(server.received) == len(rows)  # none retried, none asked again
    assert summary.asked == len(rows) and summary.stopped is None
    assert (again.skipped, again.asked) == (len(rows), 0)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(rows)
    for line in lines:
        strict_json(line)  # no NaN, no Infinity: every line is JSON
    final = read_final(out).final
    by_message = {row.message: final[row.id] for row in rows}
    assert by_message["m-fine"].status == "ok" and by_message["m-fine"].reason is None
    for name, (status, words) in HOSTILE.items():
        trace = by_message[f"m-{name}"]
        assert trace.status == status, (name, trace.reason)
        assert words in trace.reason, (name, trace.reason)
        assert len(trace.attempts) == 1 and trace.attempts[-1].http_status == 200
    surrogate = by_message["m-surrogate"]
    assert surrogate.output == edited("m-surrogate") + "\ufffd"  # kept, with the replacement character
    assert "U+FFFD" in surrogate.reason and "response" in surrogate.reason
    assert by_message["m-nan"].response["extra"] == {"score": None}
    assert by_message["m-inf"].response["extra"] == {"score": None, "low": None}
    assert by_message["m-deep"].response is None and by_message["m-deep"].output is None
