"""Opt-in: the runner against a live llama.cpp server (`bash scripts/serve_local.sh`).

Skipped unless SEAM_LIVE_BASE_URL points at the server's OpenAI-compatible API, e.g.

    SEAM_LIVE_BASE_URL=http://127.0.0.1:8080/v1 python -m pytest tests/test_live_llama.py

It runs a few real requests with the released config's decoding settings (a smaller
output limit, to stay quick) and checks what the trace rows record, that the same
request gets the same bytes back, and that a run killed mid-way resumes with exactly
one final row per id.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from common.traces import read_final

ROOT = Path(__file__).resolve().parents[1]
BASE_URL = os.environ.get("SEAM_LIVE_BASE_URL")
pytestmark = pytest.mark.skipif(not BASE_URL, reason="set SEAM_LIVE_BASE_URL to a running llama-server")


@pytest.fixture
def config(tmp_path):
    released = tomllib.loads((ROOT / "data" / "models" / "smollm2-135m.toml").read_text(encoding="utf-8"))
    lines = ['name = "live-check"', 'provider = "openai"', f'model = "{released["model"]}"',
             f'base_url = "{BASE_URL}"', "temperature = 0.0", "max_tokens = 48", "timeout_s = 600",
             "concurrency = 1", "max_retries = 1", "", "[params]"]
    lines += [f"{key} = {str(value).lower() if isinstance(value, bool) else value}"
              for key, value in released["params"].items()]
    path = tmp_path / "live.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(config, out, *extra) -> subprocess.Popen:
    command = [sys.executable, str(ROOT / "seam.py"), "run", str(config), "--out", str(out),
               "--sources", "fissix", *extra]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(process) -> None:
    _, err = process.communicate(timeout=900)
    assert process.returncode == 0, err.decode()


def test_rows_record_the_server_and_repeat_byte_for_byte(config, tmp_path):
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    for out in (first, second):
        finish(run(config, out, "--first", "1", "--only", "clean,newline"))
    a, b = read_final(first).final, read_final(second).final
    assert sorted(a) == sorted(b) and len(a) == 2
    for row in a.values():
        assert row.status in ("ok", "unusable")
        assert row.served_model
        assert row.finish_reason in ("stop", "length")
        assert row.usage["completion_tokens"] >= 1
        assert row.request["url"].startswith(BASE_URL)
        assert row.output == b[row.id].output


def test_a_killed_run_resumes_with_one_final_row_per_id(config, tmp_path):
    out = tmp_path / "resume.jsonl"
    process = run(config, out, "--first", "2", "--only", "clean,newline,blank", "--move-torn")
    give_up = time.monotonic() + 600
    while not (out.exists() and out.read_bytes().count(b"\n") >= 1):
        assert process.poll() is None and time.monotonic() < give_up
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate()
    finish(run(config, out, "--first", "2", "--only", "clean,newline,blank", "--move-torn"))
    lines = [line for line in out.read_text(encoding="utf-8").splitlines() if line]
    rows = read_final(out).final
    assert len(rows) == 6 and len(lines) == 6
