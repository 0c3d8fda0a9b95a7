"""The trace file: final rows, torn tails (refused, or moved aside on request), damaged lines."""

from __future__ import annotations

import io
import json

import pytest
from test_runner_fakeserver import make_rows, serve, write_config

from common import jsonl
from common.errors import UserError
from runner import traces
from runner.run import run


def row(request_id, status="ok", output="x"):
    return {"id": request_id, "status": status, "output": output, "model": "m"}


def write_lines(path, rows, tail=b""):
    path.write_bytes(b"".join(jsonl.dumps(r).encode() for r in rows) + tail)


def test_last_row_per_id_is_final(tmp_path):
    path = tmp_path / "t.jsonl"
    write_lines(path, [row("a", "unusable", ""), row("b"), row("a", "ok", "second")])
    final = traces.final_rows(path)
    assert sorted(final) == ["a", "b"] and final["a"]["output"] == "second"
    assert traces.scan(path).lines == {"a": 3, "b": 2}


@pytest.mark.parametrize("tail", [b'{"id": "c", "status": "o', jsonl.dumps(row("c")).encode()[:-1]])
def test_a_torn_tail_is_reported_with_file_and_line_never_kept(tmp_path, tail):
    path = tmp_path / "t.jsonl"
    write_lines(path, [row("a"), row("b")], tail)
    with pytest.raises(UserError, match=rf"t\.jsonl:3: the last line is torn \({len(tail)} bytes without a "
                                        r"final newline.*--move-torn"):
        traces.final_rows(path)
    state = traces.scan(path)
    assert sorted(state.final) == ["a", "b"] and state.torn.line == 3 and state.torn.size == len(tail)


def test_move_torn_keeps_the_bytes_aside_and_cuts_them(tmp_path):
    path = tmp_path / "t.jsonl"
    tail = b'{"id": "c", "stat\xc3'  # cut inside a UTF-8 sequence, too
    write_lines(path, [row("a")], tail)
    before = path.read_bytes()
    aside = traces.move_torn(path, traces.scan(path).torn)
    assert aside.name.startswith("t.jsonl.torn-") and aside.read_bytes() == tail
    assert path.read_bytes() + aside.read_bytes() == before
    assert traces.scan(path).torn is None and list(traces.final_rows(path)) == ["a"]


@pytest.mark.parametrize(("line", "expected"), [
    (b"not json", r"t\.jsonl:2: expected one JSON trace row per line"),
    (b"[1, 2]", r"t\.jsonl:2: expected a JSON object, found list"),
    (b'{"status": "ok"}', r"t\.jsonl:2: expected a trace row with a string 'id'"),
    (b'{"id": "x", "status": "done"}', r"t\.jsonl:2: .*'status' of ok, unusable, failed"),
    (b"", r"t\.jsonl:2: expected one JSON trace row per line"),
])
def test_a_damaged_line_in_the_middle_is_an_error(tmp_path, line, expected):
    path = tmp_path / "t.jsonl"
    path.write_bytes(jsonl.dumps(row("a")).encode() + line + b"\n" + jsonl.dumps(row("b")).encode())
    with pytest.raises(UserError, match=expected):
        traces.final_rows(path)


def test_missing_trace_file(tmp_path):
    with pytest.raises(UserError, match=r"nope\.jsonl: no such trace file"):
        traces.final_rows(tmp_path / "nope.jsonl")
    assert traces.scan(tmp_path / "nope.jsonl").final == {}


def test_writer_appends_whole_lines_only(tmp_path):
    with traces.TraceWriter(tmp_path / "sub" / "t.jsonl") as writer:
        writer.append(jsonl.dumps(row("a")))
        with pytest.raises(ValueError):
            writer.append('{"id": "b"}\n{"id": "c"}\n')
        with pytest.raises(ValueError):
            writer.append('{"id": "b"}')
    assert (tmp_path / "sub" / "t.jsonl").read_text() == jsonl.dumps(row("a"))


def test_run_refuses_a_torn_trace_then_moves_it_aside_on_request(tmp_path):
    rows = make_rows(4)
    out = tmp_path / "t.jsonl"
    with serve() as server:
        config = write_config(tmp_path / "m.toml", server, "openai")
        run(config, rows[:3], out, log=io.StringIO())
        data = out.read_bytes()
        last = data[:-1].rfind(b"\n") + 1
        out.write_bytes(data[: last + 25])  # the third row, cut mid-write by a "crash"
        sent = len(server.received)
        with pytest.raises(UserError, match=r"t\.jsonl:3: the last line is torn"):
            run(config, rows, out, log=io.StringIO())
        assert len(server.received) == sent  # refused before sending anything
        log = io.StringIO()
        summary = run(config, rows, out, log=log, move_torn=True)
    assert summary.moved_torn and f"moved the torn last line of {out} (line 3, 25 bytes)" in log.getvalue()
    assert summary.asked == 2  # the torn row's request and the fourth
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(line["id"] for line in lines) == sorted(r["id"] for r in rows)
    (aside,) = tmp_path.glob("t.jsonl.torn-*")
    assert aside.read_bytes() == data[last: last + 25]


def test_a_trace_path_that_is_a_directory_is_a_clear_error(tmp_path):
    (tmp_path / "out.jsonl").mkdir()
    with serve() as server:
        config = write_config(tmp_path / "m.toml", server, "openai")
        with pytest.raises(UserError, match=r"out\.jsonl: is a directory, expected a trace file"):
            run(config, make_rows(1), tmp_path / "out.jsonl", log=io.StringIO())
        assert server.received == []
