"""scripts/replay_server.py: a message gets the reply its trace row kept; anything else an error, never a guess."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT / "data" / "traces" / "smollm2-135m.jsonl"


def load_script():
    spec = importlib.util.spec_from_file_location("replay_server", ROOT / "scripts" / "replay_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    rows = [json.loads(line) for line in RELEASED.read_text(encoding="utf-8").splitlines()[:3]]
    rows[2] = {**rows[2], "status": "failed", "reason": "HTTP 500", "output": None, "response": None,
               "finish_reason": None, "usage": None, "served_model": None, "response_id": None}
    trace = tmp_path_factory.mktemp("replay") / "three.jsonl"
    trace.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows), encoding="utf-8")
    module = load_script()
    log = io.StringIO()
    server = module.make_server(module.Replies(trace), 0, log=log)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions", rows, log
    server.shutdown()
    server.server_close()


def ask(url: str, body) -> tuple[int, dict]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def logged(log, text: str, wait_s: float = 10) -> str:
    """The server's log once it holds `text`: each line is written just after its answer is sent, so the client
    can read the answer first (a flake under load on a CI run)."""
    deadline = time.monotonic() + wait_s
    while text not in log.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    return log.getvalue()


def message_of(row: dict) -> str:
    from benchmark.dataset import requests

    return next(request.message for request in requests(limit=1) if request.id == row["id"])


def test_a_message_gets_the_reply_its_row_kept(served):
    url, rows, log = served
    status, reply = ask(url, {"model": "any", "messages": [{"role": "user", "content": message_of(rows[0])}]})
    assert status == 200 and reply == rows[0]["response"]
    assert f"replay: 200 {rows[0]['id']}" in logged(log, rows[0]["id"])
    assert message_of(rows[0])[:20] not in log.getvalue()  # the log names the id, never the text


def test_text_parts_are_read_as_one_message(served):
    url, rows, _ = served
    text = message_of(rows[1])
    parts = [{"type": "text", "text": text[:10]}, {"type": "text", "text": text[10:]}]
    assert ask(url, {"messages": [{"role": "user", "content": parts}]}) == (200, rows[1]["response"])


def test_a_failed_row_an_unknown_message_and_another_shape_are_errors(served):
    url, rows, _ = served
    status, body = ask(url, {"messages": [{"role": "user", "content": message_of(rows[2])}]})
    assert status == 500 and "the trace's request failed" in body["error"]["message"]
    status, body = ask(url, {"messages": [{"role": "user", "content": "not a SEAM message"}]})
    assert status == 500 and "not in the trace" in body["error"]["message"]
    for shape in ({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]},
                  {"messages": [{"role": "user", "content": "x"}, {"role": "system", "content": "y"},
                                {"role": "user", "content": "z"}]},
                  {"messages": []}, {"messages": "text"}, [1, 2]):
        assert ask(url, shape)[0] == 400


def test_a_conversation_is_found_by_its_fingerprint(tmp_path):
    """A request with a condition's system prompt and earlier turns: the trace's message_sha256 is the
    conversation's, and only that conversation gets the row's reply."""
    from common.conversation import Conversation, Turn

    row = json.loads(RELEASED.read_text(encoding="utf-8").splitlines()[0])
    conversation = Conversation("Shorter.", "Be brief.", (Turn("user", message_of(row)), Turn("assistant", "x")))
    trace = tmp_path / "turns.jsonl"
    trace.write_text(json.dumps({**row, "message_sha256": conversation.sha256}, sort_keys=True) + "\n",
                     encoding="utf-8")
    module = load_script()
    sent = {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": message_of(row)},
                         {"role": "assistant", "content": "x"}, {"role": "user", "content": "Shorter."}]}
    replies = module.Replies(trace)
    assert replies.find(module.conversation_of(json.dumps(sent).encode())) == (row["id"], row["response"])
    assert replies.find(module.conversation_of(json.dumps({"messages": sent["messages"][1:]}).encode()))[0] is None


def exchange(url: str, data: bytes) -> bytes:
    """What the server answers to raw bytes on one connection, until it closes it or goes quiet."""
    import socket

    host, port = url.split("//")[1].split("/")[0].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(data)
        found = b""
        try:
            while chunk := sock.recv(65536):
                found += chunk
        except TimeoutError:
            pass
    return found


def test_a_content_length_that_is_no_number_is_a_400_not_a_traceback(served):
    url, _, log = served
    answer = exchange(url, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}")
    assert answer.startswith(b"HTTP/1.1 400 ") and b"Content-Length is not a number" in answer
    assert b"Connection: close" in answer and "replay: 400 -" in logged(log, "replay: 400 -")


def test_the_body_of_a_404_is_read_so_the_connection_serves_the_next_request(served):
    """A 404's body left unread would be read as the next request (`{"x": 1}POST ...`): it is read and dropped."""
    url, rows, _ = served
    other = json.dumps({"x": 1}).encode()
    body = json.dumps({"messages": [{"role": "user", "content": message_of(rows[0])}]}).encode()
    answer = exchange(url, b"POST /v1/other HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(other), other)
                      + b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d"
                        b"\r\n\r\n%s" % (len(body), body))
    assert answer.startswith(b"HTTP/1.1 404 ") and answer.count(b"HTTP/1.1 200 OK") == 1
    assert json.loads(answer.rsplit(b"\r\n\r\n", 1)[1]) == rows[0]["response"]


def test_the_docstring_names_the_script_that_uses_it():
    text = (ROOT / "scripts" / "replay_server.py").read_text(encoding="utf-8")
    assert "harness_replay_check.sh" not in text and (ROOT / "scripts" / "harness_replay_check.py").exists()
    assert "scripts/harness_replay_check.py" in text


@pytest.mark.parametrize("work", [".", "runs", "..", "/tmp", "data", "runs/../data/x"])
def test_the_replay_check_deletes_only_a_folder_under_runs(work, capsys):
    """scripts/harness_replay_check.py deletes --work and writes it anew: anything but a folder under runs/ is
    refused before anything is deleted (`--work .` was the repository)."""
    spec = importlib.util.spec_from_file_location("harness_replay_check", ROOT / "scripts" / "harness_replay_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    before = sorted(path.name for path in ROOT.iterdir())
    with pytest.raises(SystemExit) as stopped:
        module.main(["--work", work])
    assert "expected a folder under" in str(stopped.value) and "runs" in str(stopped.value)
    assert sorted(path.name for path in ROOT.iterdir()) == before
