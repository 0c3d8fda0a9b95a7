"""The one trace reader (common.traces): final rows as `TraceRow`s, torn tails refused, damaged lines named."""

from __future__ import annotations

import pytest
from support.samples import trace_row

from common import jsonl
from common.errors import UserError
from common.records import TraceRow
from common.traces import read_final, scan


def write_lines(path, rows, tail=b""):
    path.write_bytes(b"".join(jsonl.dumps(r).encode() for r in rows) + tail)


def test_last_row_per_id_is_final_in_the_order_of_its_line(tmp_path):
    path = tmp_path / "t.jsonl"
    write_lines(path, [trace_row("s-001/clean", "unusable", ""), trace_row("s-002/clean"),
                       trace_row("s-001/clean", "ok", "second")])
    trace = read_final(path)
    assert list(trace.final) == ["s-002/clean", "s-001/clean"]  # a later row takes its id's place
    assert all(isinstance(row, TraceRow) for row in trace.final.values())
    assert trace.final["s-001/clean"].output == "second" and trace.rows == 3
    assert trace.where == {"s-001/clean": f"{path}:3", "s-002/clean": f"{path}:2"}


def test_a_row_reads_back_as_it_was_written(tmp_path):
    row = trace_row(attempts=[{"started_at": "2026-01-02T03:04:05.678Z", "latency_s": 1.25, "http_status": 429,
                               "error": "HTTP 429", "retry_after": "Wed, 21 Oct 2026 07:28:00 GMT",
                               "retry_wait_s": 0.0}], previous=[trace_row(status="failed", output=None)])
    path = tmp_path / "t.jsonl"
    write_lines(path, [row])
    assert read_final(path).final[row["id"]].to_row() == row


@pytest.mark.parametrize("tail", [b'{"id": "c", "status": "o', jsonl.dumps(trace_row("s-003/clean")).encode()[:-1]])
def test_a_torn_tail_is_reported_with_file_and_line_never_kept(tmp_path, tail):
    path = tmp_path / "t.jsonl"
    write_lines(path, [trace_row("s-001/clean"), trace_row("s-002/clean")], tail)
    with pytest.raises(UserError, match=rf"t\.jsonl:3: the last line is torn \({len(tail)} bytes without a "
                                        r"final newline.*--move-torn"):
        read_final(path)
    trace = scan(path)
    assert sorted(trace.final) == ["s-001/clean", "s-002/clean"]
    assert trace.torn.line == 3 and trace.torn.size == len(tail)


@pytest.mark.parametrize(("line", "expected"), [
    (b"not json", r"t\.jsonl:2: expected one JSON trace row per line"),
    (b"[1, 2]", r"t\.jsonl:2: expected a JSON object, found an array"),
    (jsonl.dumps({k: v for k, v in trace_row().items() if k != "id"}).encode()[:-1],
     r"t\.jsonl:2: field 'id' is missing, expected a string"),
    (jsonl.dumps(trace_row(status="done")).encode()[:-1],
     r"t\.jsonl:2: field 'status' is 'done', expected one of ok, unusable, failed"),
    (b"", r"t\.jsonl:2: expected one JSON trace row per line"),
])
def test_a_damaged_line_in_the_middle_is_an_error(tmp_path, line, expected):
    path = tmp_path / "t.jsonl"
    path.write_bytes(jsonl.dumps(trace_row("s-001/clean")).encode() + line + b"\n"
                     + jsonl.dumps(trace_row("s-002/clean")).encode())
    with pytest.raises(UserError, match=expected):
        read_final(path)


def test_missing_trace_file(tmp_path):
    with pytest.raises(UserError, match=r"nope\.jsonl: no such trace file"):
        read_final(tmp_path / "nope.jsonl")
    assert scan(tmp_path / "nope.jsonl").final == {}
