"""Kill the runner with SIGKILL mid-run, run the same command again: exactly one row per id, none lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from support.fakeserver import config_keys, serve, toml_text
from support.samples import make_requests, write_requests

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
