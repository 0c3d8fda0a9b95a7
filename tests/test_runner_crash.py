"""Kill the runner with SIGKILL mid-run, run the same command again: exactly one row per id, none lost,
and a wait the server asked for (Retry-After) still honoured."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.fakeserver import config_keys, serve, toml_text, write_config
from support.samples import make_requests, write_requests

from common.traces import read_final
from runner.run import run

ROOT = Path(__file__).resolve().parents[1]
ROWS = 40


def start(config, requests, out):
    command = [sys.executable, str(ROOT / "seam.py"), "run", str(config), "--requests", str(requests),
               "--out", str(out), "--move-torn"]  # --move-torn: the kill may land mid-write
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def rows_in(out: Path) -> int:
    return out.read_bytes().count(b"\n") if out.exists() else 0


def kill_after(process, out: Path, rows: int, deadline_s: float = 60) -> None:
    give_up = time.monotonic() + deadline_s
    while rows_in(out) < rows:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < give_up, "the runner wrote too few rows in time"
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    process.stdout.close()
    process.stderr.close()


def test_sigkill_twice_then_resume_gives_one_row_per_id(tmp_path):
    rows = make_requests(ROWS, conditions=("clean", "newline", "blank", "boundary"))
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    out = tmp_path / "traces.jsonl"
    with serve(delay_s=0.08) as server:
        config = tmp_path / "m.toml"
        config.write_text(toml_text(config_keys(server, "openai", concurrency=2)))
        kill_after(start(config, requests, out), out, 5)
        first = rows_in(out)
        kill_after(start(config, requests, out), out, first + 8)
        second = rows_in(out)
        assert 5 <= first < second < ROWS  # both kills landed mid-run
        finish = start(config, requests, out)
        stdout, stderr = finish.communicate(timeout=120)
    assert finish.returncode == 0, stderr.decode()
    assert f"{second} already done" in stderr.decode() or "torn" in stderr.decode()
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert sorted(ids) == sorted(row.id for row in rows)  # every id once: none lost, none twice
    assert all(json.loads(line)["status"] == "ok" for line in out.read_text().splitlines())
    assert len(server.received) >= ROWS  # requests in flight at a kill are asked again, which is fine


def test_a_retry_after_survives_a_kill(tmp_path):
    """A 429 asks for 5 s; the run is killed 0.3 s later; the rerun still waits out the 5 s, and says so."""
    rows = make_requests(3)
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    out = tmp_path / "traces.jsonl"
    with serve({rows[0].message: ["429:5"]}) as server:
        config = tmp_path / "m.toml"
        config.write_text(toml_text(config_keys(server, "openai", concurrency=1)))
        first = start(config, requests, out)
        give_up = time.monotonic() + 60
        while not server.received:
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < give_up, "the runner sent nothing in time"
            time.sleep(0.01)
        time.sleep(0.3)  # the 429 is answered, the runner is waiting out its Retry-After
        os.kill(first.pid, signal.SIGKILL)
        first.communicate()
        assert rows_in(out) == 0  # nothing finished: no row says anything about the 429
        finish = start(config, requests, out)
        _, stderr = finish.communicate(timeout=120)
    stderr = stderr.decode()
    assert finish.returncode == 0, stderr
    asked = [received["at"] for received in server.received if received["body"]["messages"][0]["content"]
             == rows[0].message]
    assert len(asked) == 2
    assert asked[1] - asked[0] >= 4.9, asked[1] - asked[0]  # not before the server said
    assert re.search(r"synthetic-000/clean.*Retry-After: 5.*waiting \d+\.\d s", stderr), stderr
    assert sorted(json.loads(line)["id"] for line in out.read_text().splitlines()) == sorted(r.id for r in rows)
    assert not Path(f"{out}.pending").exists()  # the note is gone once its request has a row


def test_retry_failed_waits_for_the_retry_after_of_the_final_row(tmp_path):
    rows = make_requests(2)
    out = tmp_path / "traces.jsonl"
    log = io.StringIO()
    with serve({rows[0].message: ["429:3"]}) as server:
        config = write_config(tmp_path / "m.toml", server, "openai", max_retries=0)
        assert run(config, rows, out, log=log).counts == {"failed": 1, "ok": 1}
        assert read_final(out).final[rows[0].id].attempts[-1].retry_after == "3"
        run(config, rows, out, retry_failed=True, log=log)
    asked = [received["at"] for received in server.received if received["body"]["messages"][0]["content"]
             == rows[0].message]
    assert len(asked) == 2 and asked[1] - asked[0] >= 2.9, asked
    assert read_final(out).final[rows[0].id].status == "ok"
    assert "Retry-After: 3" in log.getvalue() and "waiting" in log.getvalue()


def test_pending_notes_ignore_a_torn_tail_refuse_damage_and_are_tidied(tmp_path):
    from support.samples import trace_row

    from common.errors import UserError
    from common.records import TraceRow
    from runner.pending import PendingWaits, path_for
    from runner.retry import RetryPolicy

    out = tmp_path / "t.jsonl"
    notes = PendingWaits(out)
    now = time.time()
    notes.note("a/clean", now + 100, "100")
    notes.note("b/clean", now - 1, "1")
    with open(path_for(out), "ab") as f:
        f.write(b'{"id": "c/cle')  # killed mid-write
    again = PendingWaits(out)
    assert [wait.id for wait in again.waits] == ["a/clean", "b/clean"]
    wait = again.until("a/clean", None, RetryPolicy())
    assert wait.until == pytest.approx(now + 100, abs=0.01) and wait.retry_after == "100"
    later = TraceRow.from_row(trace_row("a/clean", finished_at="2999-01-01T00:00:00.000Z"), "row")
    assert again.until("a/clean", later, RetryPolicy()) is None  # that row came after the wait
    again.tidy({"b/clean"})
    assert [wait.id for wait in PendingWaits(out).waits] == ["a/clean"]
    again.tidy({"a/clean"})
    assert not path_for(out).exists()
    path_for(out).write_text('{"id": "a/clean"}\n')
    with pytest.raises(UserError, match=r"t\.jsonl\.pending:1: expected a Retry-After note"):
        PendingWaits(out)


def test_a_pending_note_at_the_edges_of_time_is_read_without_a_traceback(tmp_path):
    from runner.pending import PendingWaits, path_for

    out = tmp_path / "t.jsonl"
    path_for(out).write_text('{"id": "a/clean", "not_before": "0001-01-01T00:00:00+05:00", "retry_after": "1", '
                             '"noted_at": "9999-12-31T23:59:59-05:00"}\n')
    (wait,) = PendingWaits(out).waits
    assert wait.until < 0 < wait.noted_at


def test_released_tiers_passes_over_lines_it_cannot_read(tmp_path):
    import subprocess
    import sys

    labels = tmp_path / "l.jsonl"
    labels.write_text("[" * 100_000 + "\n" + "1" * 5000 + "\n[]\n" + '{"tiers_run": ["witness", "entailment"]}\n')
    script = Path(__file__).resolve().parents[1] / "scripts" / "released_tiers.py"
    done = subprocess.run([sys.executable, str(script), str(labels)], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "entailment\n", "")
