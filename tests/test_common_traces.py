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


# The reader checks a row at once (common.traces._trace_row) and leaves every row that fails any check to
# TraceRow.from_row, for its message: each row below must read exactly as TraceRow.from_row reads it, the same
# record or the same one-line error.
WRONG = [None, "", 0, 1, True, 1.5, [], {}, "x", "\ud800", [{}], "2026-01-02T03:04:05"]
BATCH = {"batch_id": "batch_1", "result": "succeeded"}


def rows_to_check():
    base = trace_row("s-001/newline")
    attempt = base["attempts"][0]
    yield base
    yield {**base, "source": None, "usage": {"tokens": 3}, "response": {"id": "r"}, "previous": [dict(base)]}
    yield {**base, "status": "failed", "output": None, "attempts": []}
    yield {**base, "id": "s-001/x-y", "condition": "x-y"}
    yield {**base, "model": "caf\u00e9", "cluster": "s\u00e9-1", "id": "s\u00e9-1/newline"}
    yield {**base, "condition": "a" * 41, "id": "s-001/" + "a" * 41}
    for name in base:
        yield {key: value for key, value in base.items() if key != name}
        for value in WRONG:
            yield {**base, name: value}
    for name in (*attempt, *BATCH):
        for value in WRONG:
            yield {**base, "attempts": [{**attempt, name: value}]}
            yield {**base, "attempts": [attempt, {**attempt, **BATCH, name: value}]}
        yield {**base, "attempts": [{key: value for key, value in {**attempt, **BATCH}.items() if key != name}]}
    for started in ("2026-01-02T03:04:05+01:00", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
                    "2026-13-01T00:00:00Z", "2026-01-02 03:04:05.678+00:00"):
        yield {**base, "attempts": [{**attempt, "started_at": started}]}
    for latency in (0, 2, -1.5, 10**30, float("inf"), float("-inf"), float("nan"), 10**400):
        yield {**base, "attempts": [{**attempt, "latency_s": latency, "retry_wait_s": latency,
                                     "http_status": latency if isinstance(latency, int) else 200}]}


def read_as_from_row(row, where):
    try:
        return TraceRow.from_row(row, where)
    except UserError as exc:
        return str(exc)


def read_as_the_reader(path):
    """The record of the file's second line, or the reader's error."""
    try:
        return [*read_final(path).final.values()][-1]
    except UserError as exc:
        return str(exc)


def test_the_reader_reads_every_row_as_trace_row_from_row_does(tmp_path):
    path = tmp_path / "t.jsonl"
    checked = refused = 0
    for row in rows_to_check():
        write_lines(path, [trace_row("s-000/clean"), row])
        expected = read_as_from_row(jsonl.parse(jsonl.dumps(row)), f"{path}:2")
        found = read_as_the_reader(path)
        assert found == expected, row
        assert isinstance(found, str) or found.to_row() == expected.to_row()
        checked += 1
        refused += isinstance(expected, str)
    assert checked > 300 and 0 < refused < checked


def test_the_records_the_reader_makes_are_plain_dataclasses():
    from common.records import Attempt  # made without __init__ by the reader: no __post_init__, no __slots__

    for kind in (TraceRow, Attempt):
        assert not hasattr(kind, "__post_init__") and "__slots__" not in vars(kind)


def test_a_line_that_is_not_utf8_is_named_whatever_its_place(tmp_path):
    path = tmp_path / "t.jsonl"
    good = jsonl.dumps(trace_row("s-001/clean")).encode()
    path.write_bytes(good + good.replace(b'"x"', b'"caf\xe9"') + good)
    with pytest.raises(UserError, match=r"t\.jsonl:2: expected one JSON trace row per line \(not UTF-8 \(byte 0xE9"):
        read_final(path)
