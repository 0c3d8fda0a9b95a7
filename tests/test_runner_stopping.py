"""Stopping a run: SIGTERM (`kill PID`) and Ctrl+C say how to resume; a request in flight when a run is stopped
(killed too) is counted by `seam.py usage` as sent with its cost unknown; `--estimate --max-cost` says
whether the run would be refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.fakeserver import config_keys, serve, toml_text
from support.samples import make_requests, write_requests

import seam
from common.traces import read_final
from stats.usage import ALL, usage_table

ROOT = Path(__file__).resolve().parents[1]
ROWS = 6


def start(config, requests, out, *extra):
    command = [sys.executable, str(ROOT / "seam.py"), "run", str(config), "--requests", str(requests),
               "--out", str(out), "--move-torn", *extra]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(condition, process, what: str, deadline_s: float = 60) -> None:
    give_up = time.monotonic() + deadline_s
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < give_up, f"{what}: not in time"
        time.sleep(0.01)


def rows_in(out: Path) -> int:
    return out.read_bytes().count(b"\n") if out.exists() else 0


def setup(tmp_path, server, rows):
    requests = tmp_path / "requests.jsonl"
    write_requests(requests, rows)
    config = tmp_path / "m.toml"
    config.write_text(toml_text(config_keys(server, "openai", concurrency=1)))
    return config, requests, tmp_path / "traces.jsonl"


@pytest.mark.parametrize(("sent", "how", "status"), [(signal.SIGTERM, "SIGTERM", 143),
                                                      (signal.SIGINT, "Ctrl+C", 130)])
def test_a_stopped_run_says_how_to_resume_and_the_rerun_finishes(tmp_path, sent, how, status):
    rows = make_requests(ROWS)
    with serve(delay_s=0.3) as server:
        config, requests, out = setup(tmp_path, server, rows)
        process = start(config, requests, out)
        wait_for(lambda: rows_in(out) >= 1 and server.in_flight, process, "a row, and a request in flight")
        process.send_signal(sent)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == status, stderr
        assert (f"run: stopped by {how}; the rows written so far are kept in {out}, and requests in flight are "
                f"asked again (seam.py usage counts them as sent): run the same command again to resume") in stderr
        assert "Traceback" not in stderr
        stopped_at = rows_in(out)
        assert 1 <= stopped_at < ROWS
        finish = start(config, requests, out)
        _, stderr = finish.communicate(timeout=120)
    assert finish.returncode == 0, stderr
    assert sorted(json.loads(line)["id"] for line in out.read_text().splitlines()) == sorted(r.id for r in rows)
    assert not Path(f"{out}.sent").exists()  # every note accounted for, the file gone


@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGTERM])
def test_a_request_in_flight_at_a_kill_is_counted_as_sent_with_its_cost_unknown(tmp_path, kill):
    from runner.sent import LOST, is_lost

    rows = make_requests(ROWS)
    with serve(delay_s=0.3) as server:
        config, requests, out = setup(tmp_path, server, rows)
        process = start(config, requests, out)
        wait_for(lambda: rows_in(out) >= 2 and server.in_flight, process, "two rows, and a request in flight")
        in_flight = server.received[-1]["body"]["messages"][0]["content"]
        process.send_signal(kill)
        process.communicate(timeout=30)
        assert Path(f"{out}.sent").exists()
        finish = start(config, requests, out)
        _, stderr = finish.communicate(timeout=120)
    assert finish.returncode == 0, stderr
    asked = [r for r in server.received if r["body"]["messages"][0]["content"] == in_flight]
    assert len(asked) == 2  # asked again, and paid twice
    final = read_final(out).final
    (lost,) = [row for row in final.values() if row.attempts[0].error == LOST]
    assert lost.id == next(r.id for r in rows if r.message == in_flight)
    assert [is_lost(a) for a in lost.attempts] == [True, False] and lost.status == "ok"
    assert lost.attempts[0].http_status is None and lost.attempts[0].latency_s is None
    assert sum(is_lost(a) for row in final.values() for a in row.attempts) == 1
    table = usage_table(list(final.values()), ("clean", "newline"))
    total = next(row for row in table.rows if row[1] == ALL)
    assert (total[2], total[3]) == (ROWS, 1)  # requests, usage unknown: the lost attempt
    assert total[4] == 10 * ROWS  # the tokens of the replies recorded (the fake's usage: 10 prompt tokens)
    assert any("1 requests were sent by a run stopped" in note for note in table.notes)
    assert not Path(f"{out}.sent").exists()
    # a third run changes nothing: the lost attempt is recorded once, in its row
    assert seam.main(["run", str(config), "--requests", str(requests), "--out", str(out)]) == 0
    assert sum(is_lost(a) for row in read_final(out).final.values() for a in row.attempts) == 1


def test_notes_a_row_accounts_for_are_not_counted_again(tmp_path):
    """A kill right after rows were written (before the notes were tidied): the next run finds their notes
    inside those rows' times and records no lost attempt."""
    from runner.sent import SentNotes, path_for

    rows = make_requests(2)
    with serve() as server:
        config, requests, out = setup(tmp_path, server, rows)
        assert seam.main(["run", str(config), "--requests", str(requests), "--out", str(out)]) == 0
    final = read_final(out).final
    notes = path_for(out)
    assert not notes.exists()
    notes.write_text("".join(json.dumps({"id": row.id, "sent_at": row.attempts[0].started_at}) + "\n"
                             for row in final.values()) + '{"id": "torn', encoding="utf-8")
    from common.traces import scan

    sent = SentNotes(out, scan(out))
    assert sent.unaccounted == [] and all(sent.lost(row_id) == () for row_id in final)
    sent.tidy(set())
    assert not notes.exists()


def test_a_damaged_note_is_one_line_naming_file_and_line(tmp_path, capsys):
    rows = make_requests(1)
    with serve() as server:
        config, requests, out = setup(tmp_path, server, rows)
        Path(f"{out}.sent").write_text('{"id": "a", "sent_at": "2026-01-02T03:04:05.678Z"}\nnot json\n')
        code = seam.main(["run", str(config), "--requests", str(requests), "--out", str(out)])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == 2 and line.startswith(f"seam.py run: error: {out}.sent:2: expected a note of a request sent")
    assert server.received == []


def _config(tmp_path):
    path = tmp_path / "model.toml"
    path.write_text('name = "my-model"\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                    "max_tokens = 512\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("budget", "expected"), [
    ("0.01", r"  --max-cost: the estimate's upper end is \$\S+ \(95th-percentile completions; \$\S+ at the median\), "
             r"over --max-cost \$0.01: nothing was sent \(see --estimate\): the run would be refused"),
    ("500", r"  --max-cost: the estimate's upper end, \$\S+, is within --max-cost \$500.00: the run would start"),
])
def test_estimate_with_max_cost_says_whether_the_run_would_be_refused(tmp_path, capsys, budget, expected):
    prices = tmp_path / "prices.toml"
    prices.write_text('[my-model]\ninput_per_mtok = 1.0\noutput_per_mtok = 4.0\n', encoding="utf-8")
    assert seam.main(["run", str(_config(tmp_path)), "--only", "clean", "--estimate", "--prices", str(prices),
                      "--max-cost", budget]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("estimate for my-model: 300 requests to send")
    import re

    assert re.fullmatch(expected, lines[-1]), lines[-1]


def test_estimate_with_max_cost_and_no_price_says_the_run_would_be_refused(tmp_path, capsys):
    assert seam.main(["run", str(_config(tmp_path)), "--only", "clean", "--estimate", "--max-cost", "5"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == ("  --max-cost: --max-cost needs a price for model 'my-model': give --prices FILE with a "
                    "[my-model] table: the run would be refused")


@pytest.mark.skipif(not (ROOT / "data" / "traces").is_dir(), reason="no released traces")
def test_the_released_traces_have_no_lost_attempt_and_their_usage_table_is_unchanged(tmp_path, capsys):
    from common import jsonl
    from runner.sent import is_lost

    paths = jsonl.files_named([ROOT / "data" / "traces"], "trace")
    rows = [row for path in paths for row in read_final(path).final.values()]
    assert rows and not any(is_lost(a) for row in rows for a in row.attempts)
    assert seam.main(["usage", str(ROOT / "data" / "traces"), "--out", str(tmp_path)]) == 0
    for name in ("usage.csv", "usage.md"):
        assert (tmp_path / name).read_bytes() == (ROOT / "data" / "tables" / name).read_bytes(), name


def test_a_torn_note_is_cut_before_the_next_is_appended(tmp_path):
    rows = make_requests(2)
    with serve() as server:
        config, requests, out = setup(tmp_path, server, rows)
        Path(f"{out}.sent").write_text(f'{{"id": "{rows[0].id}", "sent_at": "2026-01-02T03:04:05.678Z"}}\n{{"id": "to')
        assert seam.main(["run", str(config), "--requests", str(requests), "--out", str(out)]) == 0
    final = read_final(out).final
    assert final[rows[0].id].attempts[0].started_at == "2026-01-02T03:04:05.678Z"  # the complete note: lost
    assert len(final[rows[1].id].attempts) == 1
    assert not Path(f"{out}.sent").exists()


def test_a_note_that_cannot_be_written_stops_the_run_in_one_line(tmp_path, monkeypatch, capsys):
    import errno

    rows = make_requests(3)
    real_write = os.write

    def full(fd, data):
        if os.path.realpath(f"/proc/self/fd/{fd}").endswith(".sent"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    with serve() as server:
        config, requests, out = setup(tmp_path, server, rows)
        monkeypatch.setattr(os, "write", full)
        code = seam.main(["run", str(config), "--requests", str(requests), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.splitlines()[-1] == (f"seam.py run: error: could not append to {out}.sent: No space left on device; "
                                    "rows written so far are kept; rerun to continue")
    assert server.received == []  # the note comes first: nothing went out unnoted
