"""A wrong address stops a run at once in one line, with nothing recorded; `--check-connection` sends one real
request and says what came back; `--batch` against a server without a batch API says so; and the fake batch
server a user can start (scripts/fake_batch_server.py) serves a batch end to end."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
from support.fakeserver import config_keys, serve, toml_text
from support.samples import make_requests, write_requests

import seam
from common.traces import read_final
from runner import providers
from runner.ask import ask
from runner.config import load_config
from runner.retry import RetryPolicy

ROOT = Path(__file__).resolve().parents[1]
KEY, VARIABLE = "sk-SEAM-FAILFAST-KEY-9e3c1b7a55", "SEAM_TEST_FAILFAST_KEY"
FAST = RetryPolicy(max_retries=2, base_s=0.01, cap_s=0.02)


def closed_port() -> int:
    with socket.socket() as sock:  # bound then closed: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _config(tmp_path, base_url: str, **keys) -> Path:
    path = tmp_path / "m.toml"
    values = {"name": "m", "provider": "openai", "model": "m", "base_url": base_url, "max_tokens": 64,
              "timeout_s": 5, "concurrency": 2, **keys}
    path.write_text(toml_text(values), encoding="utf-8")
    return path


def _requests(tmp_path, count=6) -> Path:
    path = tmp_path / "requests.jsonl"
    write_requests(path, make_requests(count))
    return path


def test_a_closed_port_stops_the_run_at_once_in_one_line_with_nothing_recorded(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(VARIABLE, KEY)
    port = closed_port()
    config = _config(tmp_path, f"http://127.0.0.1:{port}/v1", api_key_env=VARIABLE)
    out = tmp_path / "t.jsonl"
    started = time.monotonic()
    code = seam.main(["run", str(config), "--requests", str(_requests(tmp_path)), "--out", str(out)])
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 2 and took < 5, (took, err)  # not a minute of retries
    (line,) = err.splitlines()  # no progress line, no "wrote 0 rows", no traceback
    assert line.startswith(f"seam.py run: error: cannot reach 127.0.0.1:{port} (connection refused), the "
                           f"base_url of {config}")
    assert "nothing was sent and nothing recorded" in line and "is the server running" in line
    assert KEY not in line and "retry-failed" not in line
    assert not out.exists() or out.read_bytes() == b""  # no failed rows to ask again
    assert not Path(f"{out}.sent").exists()  # nothing went out, so nothing is counted as sent


def test_an_unknown_host_stops_the_run_at_once_naming_host_and_port(tmp_path, monkeypatch, capsys):
    def no_such_host(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)  # no DNS query leaves the machine
    config = _config(tmp_path, "https://no-such-host.invalid:8443/v1")
    out = tmp_path / "t.jsonl"
    code = seam.main(["run", str(config), "--requests", str(_requests(tmp_path)), "--out", str(out)])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == 2
    assert "cannot reach no-such-host.invalid:8443 (unknown host (the name does not resolve))" in line
    assert "is the host name right?" in line
    assert not out.exists() or out.read_bytes() == b""


def test_an_address_that_drops_the_packets_stops_the_run_after_the_connect_timeout(tmp_path, monkeypatch, capsys):
    """No answer to the connection attempt at all (a firewall dropping SYNs, a wrong address): it used to be retried
    for timeout_s per attempt, minutes in all; now one connect timeout, then one line, as for a refused one."""
    import urllib3.util.connection

    from runner import transport

    waits = []

    def dropped(address, timeout=None, *args, **kwargs):
        waits.append(timeout)
        raise TimeoutError("timed out")  # what socket.connect raises when no answer comes in time

    monkeypatch.setattr(urllib3.util.connection, "create_connection", dropped)
    config = _config(tmp_path, "http://192.0.2.7:8080/v1", timeout_s=600)
    out = tmp_path / "t.jsonl"
    code = seam.main(["run", str(config), "--requests", str(_requests(tmp_path)), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith("seam.py run: error: cannot reach 192.0.2.7:8080 (no answer to the connection attempt "
                           f"within {transport.CONNECT_TIMEOUT_S:g} s: the packets are dropped")
    assert "is the server running, at that address and port?" in line
    assert set(waits) == {transport.CONNECT_TIMEOUT_S}  # the connect timeout, not the config's 600 s
    assert not out.exists() or out.read_bytes() == b""


def test_a_connect_timeout_meeting_one_connection_keeps_the_rows_others_got_and_says_so(tmp_path, monkeypatch,
                                                                                       capsys):
    """A connect timeout can meet some connections and not others (a firewall dropping some packets): the run
    stops, but a request already in flight on another connection keeps its row, and the line no longer says
    that nothing was recorded."""
    import urllib3.util.connection

    rows = make_requests(2)
    real = urllib3.util.connection.create_connection
    calls = []

    def second_dropped(address, *args, **kwargs):
        calls.append(address)
        if len(calls) == 2:
            raise TimeoutError("timed out")
        return real(address, *args, **kwargs)

    monkeypatch.setattr(urllib3.util.connection, "create_connection", second_dropped)
    with serve({rows[0].message: ["slow:1"], rows[1].message: ["slow:1"]}) as server:
        path = tmp_path / "m.toml"
        path.write_text(toml_text(config_keys(server, "openai", concurrency=2)))
        requests_file = tmp_path / "requests.jsonl"
        write_requests(requests_file, rows)
        out = tmp_path / "t.jsonl"
        code = seam.main(["run", str(path), "--requests", str(requests_file), "--out", str(out)])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == 2 and "no answer to the connection attempt" in line
    assert "nothing recorded" not in line
    assert line.endswith("1 row other requests got before the run stopped are kept: rerun to ask the rest once it "
                         "answers")
    assert [row.status for row in read_final(out).final.values()] == ["ok"]


def test_a_refused_connection_once_the_server_answered_is_retried_as_before(tmp_path):
    """Only before any answer: afterwards a refused connection is a server restarting, retried and recorded."""
    port = closed_port()
    config = load_config(_config(tmp_path, f"http://127.0.0.1:{port}/v1"))
    notes, withdrawn = [], []

    def note_send():
        notes.append(1)
        return lambda: withdrawn.append(1)

    def asked(reached):
        return ask(session=requests.Session(), provider=providers.get("openai"), config=config, message="hi",
                   api_key=None, request_id="x/clean", policy=FAST, pace=lambda: True, sleep=lambda s: True,
                   note_send=note_send, reached=reached)

    first = asked(threading.Event())
    assert first.unreachable == "connection refused" and len(first.attempts) == 1
    assert (len(notes), len(withdrawn)) == (1, 1)  # nothing was sent: the note is withdrawn
    answered = threading.Event()
    answered.set()
    later = asked(answered)
    assert later.unreachable is None and later.status == "failed" and later.exhausted
    assert len(later.attempts) == 3 and later.attempts[0].error.startswith("connection error")
    assert len(withdrawn) == 1  # those attempts stay noted


def test_a_run_that_reached_its_server_still_records_what_it_got(tmp_path):
    rows = make_requests(2)
    with serve({rows[0].message: ["drop", "ok"]}) as server:
        path = tmp_path / "m.toml"
        path.write_text(toml_text(config_keys(server, "openai", concurrency=1)))
        from runner.run import run

        summary = run(load_config(path), rows, tmp_path / "t.jsonl", log=None, policy=FAST)
    assert summary.counts == {"ok": 2} and not summary.unreachable


def test_check_connection_sends_one_request_and_says_what_came_back(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(VARIABLE, KEY)
    requests_file = _requests(tmp_path, 4)
    out = tmp_path / "t.jsonl"
    with serve() as server:
        config = _config(tmp_path, server.url + "/v1", api_key_env=VARIABLE)
        code = seam.main(["run", str(config), "--requests", str(requests_file), "--out", str(out),
                          "--check-connection"])
    captured = capsys.readouterr()
    assert code == 0 and len(server.received) == 1 and captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith(f"run: connection check: POST {server.url}/v1/chat/completions (synthetic-000/clean) "
                           "answered HTTP 200 in ")
    assert "a usable reply; served model 'served-m', finish reason 'stop'" in line and "'EDITED<Fix" in line
    assert "the connection works; nothing was recorded" in line
    assert not out.exists() and KEY not in captured.err


def test_check_connection_with_dry_run_prints_the_bodies_too(tmp_path, capsys):
    with serve() as server:
        config = _config(tmp_path, server.url + "/v1")
        code = seam.main(["run", str(config), "--requests", str(_requests(tmp_path, 3)), "--dry-run",
                          "--check-connection"])
    captured = capsys.readouterr()
    assert code == 0 and len(server.received) == 1 and len(captured.out.splitlines()) == 3
    assert "run: dry run, 3 requests printed, none sent" in captured.err and "the connection works" in captured.err


@pytest.mark.parametrize(("step", "expected"), [
    ("401", r"answered HTTP 401 in \S+ s: HTTP 401: .*<redacted>.*check the API key in the environment variable "
            r"SEAM_TEST_FAILFAST_KEY\); nothing was recorded"),
    ("404", r"answered HTTP 404 in .*check the model name 'm' and base_url"),
    ("503", r"answered HTTP 503 in .*\(a run would retry it\); nothing was recorded"),
])
def test_check_connection_says_what_an_error_was_in_one_line(tmp_path, monkeypatch, capsys, step, expected):
    monkeypatch.setenv(VARIABLE, KEY)
    rows = make_requests(1)
    requests_file = tmp_path / "requests.jsonl"
    write_requests(requests_file, rows)
    with serve({rows[0].message: [step]}) as server:  # its error body echoes the key it got
        config = _config(tmp_path, server.url + "/v1", api_key_env=VARIABLE)
        code = seam.main(["run", str(config), "--requests", str(requests_file), "--check-connection"])
    err = capsys.readouterr().err
    assert code == 2 and len(server.received) == 1
    (line,) = err.splitlines()
    assert line.startswith("seam.py run: error: run: connection check: POST ")
    assert re.search(expected, line), line
    assert KEY not in err


def test_check_connection_against_a_closed_port(tmp_path, capsys):
    port = closed_port()
    config = _config(tmp_path, f"http://127.0.0.1:{port}/v1")
    code = seam.main(["run", str(config), "--requests", str(_requests(tmp_path, 1)), "--check-connection"])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == 2 and f"cannot reach 127.0.0.1:{port} (connection refused)" in line


def test_batch_against_a_server_without_a_batch_api_says_so_in_one_line(tmp_path, capsys):
    with serve() as server:  # the synchronous fake: POST /files is a 404 there
        config = _config(tmp_path, server.url + "/v1")
        out = tmp_path / "t.jsonl"
        code = seam.main(["run", str(config), "--requests", str(_requests(tmp_path, 2)), "--out", str(out),
                          "--batch"])
    err = capsys.readouterr().err
    assert code == 2
    line = err.splitlines()[-1]
    assert line.startswith("seam.py run: error: POST /files: HTTP 404: ")
    assert f"the server at {server.url}/v1 has no batch API, so nothing was submitted; run without --batch" in line
    assert "fake batch server" in line


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_fake_batch_server_script_serves_a_batch_end_to_end(tmp_path, provider):
    port = _free_port()
    config = tmp_path / "fake-batch.toml"
    server = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "fake_batch_server.py"), "--port", str(port),
                               "--provider", provider, "--polls", "1", "--config", str(config)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = server.stdout.readline()  # printed once it listens
        assert ready.startswith(f"fake-batch: serving a fake {provider} batch API at http://127.0.0.1:{port}/"), (
            ready, server.poll())
        key_line = server.stdout.readline()
        key = key_line.rsplit("=", 1)[1].strip()
        assert key_line.startswith("fake-batch: its key (the fake's, no secret): export SEAM_FAKE_BATCH_KEY=")
        out = tmp_path / "t.jsonl"
        env = {**os.environ, "SEAM_FAKE_BATCH_KEY": key}
        done = subprocess.run([sys.executable, str(ROOT / "seam.py"), "run", str(config), "--first", "2", "--only",
                               "clean", "--out", str(out), "--batch", "--batch-poll", "0.05"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        final = read_final(out).final
        assert len(final) == 2 and {row.status for row in final.values()} == {"ok"}
        assert all(row.output.startswith("EDITED<") and row.request["batch"] is True for row in final.values())
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        server.stdout.close()
        server.stderr.close()
    assert server.returncode == 0


def test_the_fake_batch_server_script_refuses_a_taken_port(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        done = subprocess.run([sys.executable, str(ROOT / "scripts" / "fake_batch_server.py"), "--port", str(port)],
                              capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"fake_batch_server.py: error: cannot serve on 127.0.0.1:{port}: ")
