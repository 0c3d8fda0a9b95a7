"""SIGKILL `seam.py run --batch` at every phase of a batch, run the same command again: 1,800 requests end with
exactly one row per id and exactly one submission per id, for each provider's fake (tests/support/fakebatch.py).

The phases: while the requests are uploaded (OpenAI's input file), just after the provider created the batch
but before its answer arrived (so before the journal could name it), while polling, while the results are
downloaded, and while the rows are being written. A held answer (`fake.hold`) is how the kill is made to
land inside a call: the server has done the work, the runner is waiting for the reply.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from support.fakebatch import DEFAULT_KEY, serve_batch
from support.fakeserver import toml_text
from support.samples import make_requests, write_requests

from common.traces import read_final
from runner.batch import ids

ROOT = Path(__file__).resolve().parents[1]
REQUESTS = 1800
KEY_ENV = "SEAM_TEST_BATCH_KEY"
# Where each provider's calls go: the upload, the creation, a status check, the results.
CALLS = {
    "openai": {"upload": r"^POST /v1/files$", "create": r"^POST /v1/batches$", "status": r"^GET /v1/batches/[^/?]+$",
               "results": r"^GET /v1/files/[^/]+/content$"},
    "anthropic": {"create": r"^POST /v1/messages/batches$", "status": r"^GET /v1/messages/batches/[^/?]+$",
                  "results": r"^GET /v1/messages/batches/[^/]+/results"},
    "gemini": {"create": r":batchGenerateContent$", "status": r"^GET /v1beta/batches/[^/?:]+$",
               "results": r"^GET /v1beta/batches/[^/?:]+$"},
}


def start(config: Path, requests: Path, out: Path) -> subprocess.Popen:
    command = [sys.executable, str(ROOT / "seam.py"), "run", str(config), "--requests", str(requests), "--out",
               str(out), "--batch", "--batch-poll", "0.02", "--move-torn"]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, KEY_ENV: DEFAULT_KEY})


def kill(process: subprocess.Popen) -> str:
    """SIGKILL the runner; what it had said on stderr."""
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    said = process.stderr.read().decode()
    process.stderr.close()
    return said


def wait_for(condition, process, what: str, deadline_s: float = 120) -> None:
    give_up = time.monotonic() + deadline_s
    while not condition():
        if process.poll() is not None:
            raise AssertionError(f"the runner ended before {what}: {process.stderr.read().decode()[-2000:]}")
        assert time.monotonic() < give_up, f"timed out waiting for {what}"
        time.sleep(0.002)


def rows_in(out: Path) -> int:
    return out.read_bytes().count(b"\n") if out.exists() else 0


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_sigkill_at_every_phase_then_resume_gives_one_row_and_one_submission_per_id(tmp_path, provider):
    requests = make_requests(REQUESTS)
    request_file = tmp_path / "requests.jsonl"
    write_requests(request_file, requests)
    out = tmp_path / "trace.jsonl"
    calls = CALLS[provider]
    killed = []
    with serve_batch(provider, polls=4, shuffle=True) as fake:
        config = tmp_path / "config.toml"
        config.write_text(toml_text({"name": f"fake-{provider}", "provider": provider, "model": "fake-model",
                                     "base_url": fake.url, "max_tokens": 64, "timeout_s": 30,
                                     "api_key_env": KEY_ENV}), encoding="utf-8")

        def held_call(phase: str) -> str:
            """Kill the runner while the server holds its answer to the phase's call (the work done)."""
            with fake.hold(calls[phase]) as held:
                process = start(config, request_file, out)
                wait_for(held.is_set, process, f"the {phase} call")
                said = kill(process)
            killed.append(phase)
            return said

        if "upload" in calls:
            held_call("upload")
        said = held_call("create")
        if "upload" in calls:  # the file went up, no batch was made of it: the submission is made afresh
            assert "stopped before the provider created it; they are submitted again" in said
            assert fake.count(calls["upload"]) == 2
        assert len(fake.submitted) == 1  # created at the provider; the runner never heard its id

        process = start(config, request_file, out)  # polling: killed after a few status checks
        seen = fake.count(calls["status"])
        wait_for(lambda: fake.count(calls["status"]) >= seen + 2, process, "two status checks")
        said = kill(process)
        assert f"found batch {fake.submitted[0][0]} again" in said
        killed.append("poll")

        with fake.hold(calls["results"], after_done=provider == "gemini") as held:  # downloading the results
            process = start(config, request_file, out)
            wait_for(held.is_set, process, "the results call")
            kill(process)
        killed.append("download")

        process = start(config, request_file, out)  # writing the rows: killed partway
        wait_for(lambda: rows_in(out) >= 50, process, "the first rows")
        kill(process)
        killed.append("collect")
        assert 50 <= rows_in(out) < REQUESTS, "the kill did not land while the rows were written"

        process = start(config, request_file, out)
        _, errors = process.communicate(timeout=300)
        assert process.returncode == 0, errors.decode()[-2000:]

    assert killed == [*(["upload"] if "upload" in calls else []), "create", "poll", "download", "collect"]
    lines = out.read_bytes().split(b"\n")[:-1]
    final = read_final(out).final
    assert set(final) == {request.id for request in requests}
    assert all(row.status == "ok" for row in final.values())
    torn = len(list(tmp_path.glob("trace.jsonl.torn-*")))
    assert len(lines) == REQUESTS  # exactly one row per id: none written twice
    assert torn <= 1
    per_id = Counter(ids.parse(custom)[1] for _, customs in fake.submitted for custom in customs)
    assert len(fake.submitted) == 1 and set(per_id.values()) == {1}
    assert set(per_id) == {request.id for request in requests}
