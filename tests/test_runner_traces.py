"""Writing the trace file: whole lines only, torn tails moved aside on request, history kept on a re-ask.

Reading it is common.traces (tests/test_common_traces.py).
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support.fakeserver import serve, write_config
from support.samples import make_requests, trace_row

from common import jsonl
from common.errors import UserError
from common.traces import read_final, scan
from runner import traces
from runner.run import run

ROOT = Path(__file__).resolve().parents[1]


def write_lines(path, rows, tail=b""):
    path.write_bytes(b"".join(jsonl.dumps(r).encode() for r in rows) + tail)


def test_move_torn_keeps_the_bytes_aside_and_cuts_them(tmp_path):
    path = tmp_path / "t.jsonl"
    tail = b'{"id": "c", "stat\xc3'  # cut inside a UTF-8 sequence, too
    write_lines(path, [trace_row("s-001/clean")], tail)
    before = path.read_bytes()
    aside = traces.move_torn(path, scan(path).torn)
    assert aside.name.startswith("t.jsonl.torn-") and aside.read_bytes() == tail
    assert path.read_bytes() + aside.read_bytes() == before
    assert scan(path).torn is None and list(read_final(path).final) == ["s-001/clean"]


def test_writer_appends_whole_lines_only(tmp_path):
    with traces.TraceWriter(tmp_path / "sub" / "t.jsonl") as writer:
        writer.append(jsonl.dumps(trace_row()))
        with pytest.raises(ValueError):
            writer.append('{"id": "b"}\n{"id": "c"}\n')
        with pytest.raises(ValueError):
            writer.append('{"id": "b"}')
    assert (tmp_path / "sub" / "t.jsonl").read_text() == jsonl.dumps(trace_row())


def test_run_refuses_a_torn_trace_then_moves_it_aside_on_request(tmp_path):
    rows = make_requests(4)
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
    assert sorted(line["id"] for line in lines) == sorted(r.id for r in rows)
    (aside,) = tmp_path.glob("t.jsonl.torn-*")
    assert aside.read_bytes() == data[last: last + 25]


def test_a_trace_path_that_is_a_directory_is_a_clear_error(tmp_path):
    (tmp_path / "out.jsonl").mkdir()
    with serve() as server:
        config = write_config(tmp_path / "m.toml", server, "openai")
        with pytest.raises(UserError, match=r"out\.jsonl: is a directory, expected a trace file"):
            run(config, make_requests(1), tmp_path / "out.jsonl", log=io.StringIO())
        assert server.received == []


def test_each_re_ask_carries_the_earlier_rows_as_written_without_their_own_history(tmp_path):
    rows = make_requests(1)
    out = tmp_path / "t.jsonl"
    with serve({rows[0].message: ["empty", "truncated"]}) as server:
        config = write_config(tmp_path / "m.toml", server, "openai")
        for _ in range(3):
            run(config, rows, out, retry_unusable=True, log=io.StringIO())
    first, second, third = (json.loads(line) for line in out.read_text().splitlines())
    assert [first["status"], second["status"], third["status"]] == ["unusable", "unusable", "ok"]
    assert first["previous"] == [] and second["previous"] == [{k: v for k, v in first.items() if k != "previous"}]
    assert third["previous"] == [*second["previous"], {k: v for k, v in second.items() if k != "previous"}]
    assert read_final(out).final[rows[0].id].to_row() == third


@pytest.mark.parametrize("batch", [False, True], ids=["run", "run --batch"])
def test_an_out_that_is_a_fifo_is_refused_without_waiting(tmp_path, batch):
    """`seam.py run --out FIFO` opened the FIFO for writing, which waits for a reader: the run hung forever. An
    --out that exists and is not a regular file is refused in one line before it is opened (both paths write the
    trace through `TraceWriter`)."""
    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    with serve() as server:
        write_config(tmp_path / "m.toml", server, "openai")
        argv = [sys.executable, str(ROOT / "seam.py"), "run", "m.toml", "--first", "1", "--out", str(fifo)]
        done = subprocess.run(argv + (["--batch"] if batch else []), cwd=tmp_path, capture_output=True, text=True,
                              timeout=30)
        assert server.received == []
    assert "Traceback" not in done.stderr
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"seam.py run: error: {fifo}: a FIFO (named pipe), not a regular file"), done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_trace_writer_refuses_what_is_not_a_regular_file(tmp_path):
    with pytest.raises(UserError, match=r"a character device, not a regular file"):
        traces.TraceWriter("/dev/null")
    assert not list(tmp_path.iterdir())


def test_an_out_that_links_to_a_regular_file_is_appended_through_the_link(tmp_path):
    rows = make_requests(2)
    target = tmp_path / "real.jsonl"
    link = tmp_path / "t.jsonl"
    link.symlink_to(target)
    with serve() as server:
        config = write_config(tmp_path / "m.toml", server, "openai")
        run(config, rows[:1], link, log=io.StringIO())
        run(config, rows, link, log=io.StringIO())
    assert link.is_symlink() and list(read_final(target).final) == [row.id for row in rows]


@pytest.mark.parametrize("change", ["removed", "replaced"])
def test_a_trace_removed_or_replaced_between_open_and_lock_is_refused_not_appended_to(tmp_path, monkeypatch, change):
    """Rows appended to a file no path leads to any more would reach no one (a join of shard files, which
    removes the shard file, can fall between a runner's open and its lock: scripts/shards.py)."""
    path = tmp_path / "t.jsonl"
    path.write_text("")
    real = traces._lock

    def lock_after_a_join(fd):
        path.unlink()
        if change == "replaced":
            path.write_text("")
        real(fd)

    monkeypatch.setattr(traces, "_lock", lock_after_a_join)
    with pytest.raises(traces.TraceLocked, match="was removed or replaced while it was being opened"):
        traces.TraceWriter(path)
