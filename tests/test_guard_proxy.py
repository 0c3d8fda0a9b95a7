"""`seam.py guard serve` (guard/proxy.py, guard/relay.py, guard/upstream.py, guard/chat.py) between a client and a
fake upstream that records the exact bytes and headers it receives: each user message of an OpenAI or Anthropic
chat request arrives marked and nothing else changes; a request not marked arrives byte for byte; streams arrive
chunk by chunk while the upstream is still producing; the bounds, the failures and the logs.

Everything listens on 127.0.0.1, port 0; every wait is bounded; every server stops at the end of its test."""

from __future__ import annotations

import http.client
import io
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.fakeserver import serve, write_config

from benchmark import dataset
from guard import batch, chat
from guard.mark import guard
from guard.proxy import make_server
from runner.run import run

ROOT = Path(__file__).resolve().parents[1]
WAIT_S = 10  # the longest any step may take before the test fails
# A SEAM-like newline message: instruction, blank line, pasted text, the remark on the next line.
SEAM = "Fix the typos:\n\nTeh cat sat on teh mat.\nIt was hapy there all day long.\nbtw send it to Ann by friday"
NO_SEAM = "What is the capital of France?"
KEY = "sk-test-SECRET-key-0123456789"


# ---------------------------------------------------------------- the fake upstream


class Upstream(ThreadingHTTPServer):
    """Records (method, path, headers, body) of each request; answers as the request's X-Test-Mode says."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), UpstreamHandler)
        self.received: list[tuple[str, str, list, bytes]] = []
        self.release = threading.Event()  # the stream's last chunk waits for it
        self.stream_done = threading.Event()  # the stream's last chunk was written
        self.gone = threading.Event()  # writing an endless stream failed: the proxy closed the connection
        self.connections = 0

    def handle_error(self, request, client_address) -> None:  # a closed connection is expected here
        pass


class UpstreamHandler(BaseHTTPRequestHandler):
    server: Upstream
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.server.connections += 1

    def log_message(self, format, *args):  # noqa: A002
        pass

    def do_GET(self):  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.received.append((self.command, self.path, self.headers.items(), body))
        mode = self.headers.get("X-Test-Mode", "json")
        if mode == "slow":
            time.sleep(2)
        if mode in ("stream", "endless"):
            self._stream(mode)
            return
        reply = json.dumps({"id": "reply-1", "path": self.path, "received": len(body)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.send_header("X-Upstream", "yes")
        self.send_header("Keep-Alive", "timeout=5")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply)

    do_POST = do_HEAD = do_GET  # noqa: N815

    def _stream(self, mode: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for i in range(3 if mode == "stream" else 200):
                if mode == "stream" and i == 2:
                    self.server.release.wait(WAIT_S)
                event = f"data: {{\"chunk\": {i}}}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                if mode == "endless":
                    time.sleep(0.05)
            self.wfile.write(b"0\r\n\r\n")
            self.server.stream_done.set()
        except OSError:
            self.server.gone.set()
            self.close_connection = True


@pytest.fixture
def upstream():
    server = Upstream()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()


def start(upstream_url: str, **settings):
    server = make_server(upstream_url, 0, **settings)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


@pytest.fixture
def proxy_for(upstream):
    """proxy_for(**settings): a proxy in front of `upstream`, stopped at the end of the test."""
    started = []

    def make(url: str | None = None, **settings):
        settings.setdefault("quiet", True)
        server = start(url or f"http://127.0.0.1:{upstream.server_port}", **settings)
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


def ask(server, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    """(status, headers as a dict, body) of one request to the proxy."""
    conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=WAIT_S)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def openai_body(*messages, **extra) -> bytes:
    return json.dumps({"model": "gpt-x", "temperature": 0, "messages": list(messages), **extra},
                      ensure_ascii=False).encode()


def ordered(data: bytes):
    """The JSON with every object as its list of (key, value) pairs: equal only with the same key order."""
    return json.loads(data, object_pairs_hook=list)


# ---------------------------------------------------------------- marking


def test_an_openai_request_arrives_with_each_user_message_marked_and_all_else_unchanged(upstream, proxy_for):
    assert guard(SEAM).marked
    server = proxy_for()
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": SEAM},
                {"role": "assistant", "content": "Sure."}, {"role": "user", "content": SEAM, "name": "ann"}]
    body = openai_body(*messages, stream=False, z_last={"b": 1, "a": [1.5, None, True]})
    status, headers, _ = ask(server, "POST", "/v1/chat/completions?api-version=1", body,
                             {"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"})
    assert status == 200
    assert (headers["X-Seam-Guard"], headers.get("X-Seam-Guard-Reason")) == ("marked", None)
    method, path, received_headers, received = upstream.received[-1]
    assert (method, path) == ("POST", "/v1/chat/completions?api-version=1")
    expected = json.loads(body)
    expected["messages"][1]["content"] = expected["messages"][3]["content"] = guard(SEAM).message
    assert ordered(received) == ordered(json.dumps(expected).encode())
    assert dict(received_headers)["Content-Length"] == str(len(received))
    assert dict(received_headers)["Authorization"] == f"Bearer {KEY}"
    assert dict(received_headers)["Host"] == f"127.0.0.1:{upstream.server_port}"


def test_an_anthropic_request_has_the_last_text_part_of_each_user_message_marked(upstream, proxy_for):
    server = proxy_for()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    request = {"model": "claude-x", "max_tokens": 100, "system": SEAM,
               "messages": [{"role": "user", "content": [{"type": "text", "text": SEAM}]},
                            {"role": "assistant", "content": "ok"},
                            {"role": "user", "content": [{"type": "text", "text": "Two things."}, image,
                                                         {"type": "text", "text": SEAM, "cache_control": {}}]}]}
    body = json.dumps(request).encode()
    status, headers, _ = ask(server, "POST", "/v1/messages", body, {"x-api-key": KEY, "anthropic-version": "1"})
    assert (status, headers["X-Seam-Guard"]) == (200, "marked")
    received = upstream.received[-1][3]
    request["messages"][0]["content"][0]["text"] = guard(SEAM).message
    request["messages"][2]["content"][2]["text"] = guard(SEAM).message  # "Two things." is not the last text part
    assert ordered(received) == ordered(json.dumps(request).encode())
    assert dict(upstream.received[-1][2])["x-api-key"] == KEY


def test_a_later_turn_sends_an_earlier_user_message_as_the_first_turn_sent_it(upstream, proxy_for):
    server = proxy_for()
    first = {"role": "user", "content": SEAM}
    status, headers, _ = ask(server, "POST", "/v1/chat/completions", openai_body(first))
    assert (status, headers["X-Seam-Guard"]) == (200, "marked")
    turn1 = upstream.received[-1][3]
    sent = json.loads(turn1)["messages"][0]
    assert sent["content"] == guard(SEAM).message
    later = openai_body(first, {"role": "assistant", "content": "Sure: The cat sat on the mat."},
                        {"role": "user", "content": "thanks! now make it shorter"})
    status, headers, _ = ask(server, "POST", "/v1/chat/completions", later)
    assert (status, headers["X-Seam-Guard"], headers.get("X-Seam-Guard-Reason")) == (200, "marked", None)
    turn2 = upstream.received[-1][3]
    assert json.loads(turn2)["messages"][0] == sent
    assert chat.encode(sent) in turn1 and chat.encode(sent) in turn2  # the same bytes both times
    assert json.loads(turn2)["messages"][1:] == json.loads(later)["messages"][1:]


def test_with_no_user_message_marked_the_reason_is_the_last_ones(upstream, proxy_for):
    server = proxy_for()
    image = [{"type": "image_url", "image_url": {"url": "data:,"}}]
    body = openai_body({"role": "user", "content": NO_SEAM}, {"role": "assistant", "content": "Paris."},
                       {"role": "user", "content": image})
    status, headers, _ = ask(server, "POST", "/v1/chat/completions", body)
    assert (status, headers["X-Seam-Guard"], headers["X-Seam-Guard-Reason"]) == (200, "not-marked", "no user text")
    assert upstream.received[-1][3] == body


def test_a_chat_body_too_large_to_guard_is_not_read_and_arrives_byte_for_byte(upstream, proxy_for):
    server = proxy_for()
    large = openai_body({"role": "user", "content": SEAM}, padding="x" * chat.MAX_GUARDED_BODY)
    many = (b'{"messages":[' + b"{}," * (chat.MAX_GUARDED_CONTAINERS + 1)
            + json.dumps({"role": "user", "content": SEAM}).encode() + b"]}")
    assert len(many) < chat.MAX_GUARDED_BODY
    for body in (large, many):
        started = time.monotonic()
        status, headers, _ = ask(server, "POST", "/v1/chat/completions", body)
        assert (status, headers["X-Seam-Guard"], headers["X-Seam-Guard-Reason"]) == (200, "not-marked",
                                                                                     "too large to guard")
        assert upstream.received[-1][3] == body
        assert time.monotonic() - started < 2
    assert server.counts.as_dict()["not_marked"] == {"too large to guard": 2}


def test_the_guards_options_are_used(upstream, proxy_for):
    chosen = batch.options(open_line="<doc>", close_line="</doc>", sentence=None, mitigation=True)
    server = proxy_for(chosen=chosen)
    ask(server, "POST", "/v1/chat/completions", openai_body({"role": "user", "content": SEAM}))
    marked = json.loads(upstream.received[-1][3])["messages"][0]["content"]
    assert marked == guard(SEAM, open="<doc>", close="</doc>", sentence=batch.MITIGATION).message
    assert "<doc>\n" in marked


NOT_MARKED = [
    (openai_body({"role": "user", "content": NO_SEAM}), "/v1/chat/completions", "no seam"),
    (openai_body({"role": "user", "content": "Fix:\n-----BEGIN TEXT-----\nx\n-----END TEXT-----\nbtw"}),
     "/v1/chat/completions", "already marked"),
    (openai_body({"role": "system", "content": SEAM}), "/v1/chat/completions", "no user message"),
    (openai_body({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}),
     "/v1/chat/completions", "no user text"),
    (b'{"model": "m",  "messages": "nope"}', "/v1/messages", "not a chat request"),
    (b"not json at all \xff", "/v1/chat/completions", "not UTF-8"),
    (b"{\"messages\": [", "/v1/chat/completions", "not JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "/v1/chat/completions", "JSON nested too deeply"),
    (b'{"messages": [{"role": "user", "content": "x"}], "n": 1e400}', "/v1/chat/completions",
     "non-finite number"),
    (b'{"messages": [], "messages": [{"role": "user", "content": "x"}]}', "/v1/chat/completions", "duplicate key"),
    (openai_body({"role": "user", "content": SEAM}), "/v1/completions", "not a chat request"),
    (openai_body({"role": "user", "content": SEAM}), "/v1/embeddings", "not a chat request"),
]


@pytest.mark.parametrize(("body", "path", "reason"), NOT_MARKED,
                         ids=[f"{reason} {path.rsplit('/', 1)[1]}".replace(" ", "-") for _, path, reason in NOT_MARKED])
def test_a_request_not_marked_arrives_byte_for_byte_with_the_reason(upstream, proxy_for, body, path, reason):
    server = proxy_for()
    status, headers, _ = ask(server, "POST", path, body, {"Content-Type": "application/json"})
    assert (status, headers["X-Seam-Guard"], headers["X-Seam-Guard-Reason"]) == (200, "not-marked", reason)
    assert upstream.received[-1][3] == body
    assert server.counts.as_dict()["not_marked"] == {reason: 1}


def test_a_lone_surrogate_is_kept_as_its_escape_and_an_unmarked_one_byte_for_byte(upstream, proxy_for):
    server = proxy_for()
    with_seam = SEAM.replace("Ann", "Ann \ud800")
    body = json.dumps({"messages": [{"role": "user", "content": with_seam}]}).encode()  # ASCII: "\\ud800"
    assert b"\\ud800" in body
    status, headers, _ = ask(server, "POST", "/v1/chat/completions", body)
    assert (status, headers["X-Seam-Guard"]) == (200, "marked")
    received = upstream.received[-1][3]
    assert b"\\ud800" in received and received.decode("utf-8")  # still valid UTF-8
    assert json.loads(received)["messages"][0]["content"] == guard(with_seam).message
    plain = b'{"messages":[{"role":"user","content":"hi \\udc80 there"}]}'
    status, headers, _ = ask(server, "POST", "/v1/chat/completions", plain)
    assert (headers["X-Seam-Guard"], upstream.received[-1][3]) == ("not-marked", plain)


def test_a_message_of_two_megabytes_is_too_long_and_arrives_unchanged(upstream, proxy_for):
    server = proxy_for()
    huge = "Fix the typos:\n\n" + "Teh cat sat on teh mat all day.\n" * 65_000 + "btw send it to Ann"
    assert len(huge) > 2_000_000
    body = openai_body({"role": "user", "content": huge})
    status, headers, _ = ask(server, "POST", "/v1/chat/completions", body)
    assert (status, headers["X-Seam-Guard"], headers["X-Seam-Guard-Reason"]) == (200, "not-marked", "too long")
    assert upstream.received[-1][3] == body


def test_the_guard_failing_forwards_the_request_unmarked_and_counts_it(upstream, proxy_for, monkeypatch):
    def broken(message, **options):
        raise RuntimeError("the guard broke")

    monkeypatch.setattr(batch, "guard", broken)
    server = proxy_for()
    body = openai_body({"role": "user", "content": SEAM})
    status, headers, _ = ask(server, "POST", "/v1/chat/completions", body)
    assert (status, headers["X-Seam-Guard"]) == (200, "error")
    assert upstream.received[-1][3] == body
    assert server.counts.as_dict()["errors"] == 1


def test_a_chunked_request_body_is_read_and_forwarded_marked_with_a_length(upstream, proxy_for):
    server = proxy_for()
    body = openai_body({"role": "user", "content": SEAM})
    conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=WAIT_S)
    conn.request("POST", "/v1/chat/completions", body=iter([body[:10], body[10:]]), encode_chunked=True,
                 headers={"Transfer-Encoding": "chunked"})
    response = conn.getresponse()
    response.read()
    conn.close()
    assert (response.status, response.getheader("X-Seam-Guard")) == (200, "marked")
    method, _, headers, received = upstream.received[-1]
    assert json.loads(received)["messages"][0]["content"] == guard(SEAM).message
    assert "Transfer-Encoding" not in dict(headers) and dict(headers)["Content-Length"] == str(len(received))


# ---------------------------------------------------------------- passing through


def test_other_paths_and_methods_pass_through_with_headers_both_ways(upstream, proxy_for):
    server = proxy_for(f"http://127.0.0.1:{upstream.server_port}/base/")
    status, headers, body = ask(server, "GET", "/v1/models?limit=2", None,
                                {"X-Custom": "kept", "Connection": "keep-alive, X-Hop", "X-Hop": "dropped",
                                 "Proxy-Authorization": "dropped"})
    assert (status, headers["X-Seam-Guard"], headers["X-Seam-Guard-Reason"]) == (200, "not-marked",
                                                                                 "not a chat request")
    assert json.loads(body) == {"id": "reply-1", "path": "/base/v1/models?limit=2", "received": 0}
    assert headers["X-Upstream"] == "yes" and "Keep-Alive" not in headers  # hop-by-hop stays behind
    method, path, sent, received = upstream.received[-1]
    sent = dict(sent)
    assert (method, path, received, sent["X-Custom"]) == ("GET", "/base/v1/models?limit=2", b"", "kept")
    assert "X-Hop" not in sent and "Proxy-Authorization" not in sent and "Content-Length" not in sent
    status, headers, body = ask(server, "HEAD", "/health")
    assert (status, body, headers["Content-Length"]) == (200, b"", headers["Content-Length"])


def test_keep_alive_requests_share_one_upstream_connection(upstream, proxy_for):
    server = proxy_for()
    conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=WAIT_S)
    for _ in range(3):
        conn.request("GET", "/v1/models")
        assert conn.getresponse().read()
    conn.close()
    assert upstream.connections == 1


def test_a_stream_arrives_chunk_by_chunk_while_the_upstream_is_still_producing(upstream, proxy_for):
    server = proxy_for()
    conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=WAIT_S)
    conn.request("POST", "/v1/chat/completions", openai_body({"role": "user", "content": SEAM}, stream=True),
                 {"X-Test-Mode": "stream"})
    response = conn.getresponse()
    assert (response.status, response.getheader("Transfer-Encoding")) == (200, "chunked")
    assert response.getheader("X-Seam-Guard") == "marked"
    seen = b""
    deadline = time.monotonic() + WAIT_S
    while b'"chunk": 1' not in seen and time.monotonic() < deadline:
        seen += response.read1(65536)
    assert seen == b'data: {"chunk": 0}\n\ndata: {"chunk": 1}\n\n'
    assert not upstream.stream_done.is_set()  # the upstream is still holding its last chunk
    upstream.release.set()
    seen += response.read()
    conn.close()
    assert seen == b"".join(b'data: {"chunk": %d}\n\n' % i for i in range(3))


def test_a_client_gone_mid_stream_closes_the_upstream_and_the_proxy_serves_on(upstream, proxy_for, capsys):
    server = proxy_for(quiet=False)
    conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=WAIT_S)
    conn.request("POST", "/v1/chat/completions", openai_body({"role": "user", "content": SEAM}, stream=True),
                 {"X-Test-Mode": "endless"})
    response = conn.getresponse()
    assert response.read1(65536).startswith(b"data:")
    conn.sock.shutdown(socket.SHUT_RDWR)
    conn.close()
    assert upstream.gone.wait(WAIT_S)  # the proxy closed its upstream connection: the upstream stops at once
    assert not upstream.stream_done.is_set()
    deadline = time.monotonic() + WAIT_S
    while server.counts.as_dict()["client_disconnects"] != 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.counts.as_dict()["client_disconnects"] == 1
    assert ask(server, "GET", "/v1/models")[0] == 200
    assert server.busy.wait_idle(WAIT_S)
    assert "Traceback" not in capsys.readouterr().err


def test_a_slow_client_is_dropped_and_does_not_hold_up_another(upstream, proxy_for):
    server = proxy_for(client_timeout=2)
    slow = socket.create_connection(("127.0.0.1", server.server_port), timeout=WAIT_S)
    slow.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"messa")
    started = time.monotonic()
    assert ask(server, "GET", "/v1/models")[0] == 200
    assert time.monotonic() - started < 1.5  # served while the slow one still holds its connection
    assert slow.recv(100) == b""  # dropped after the client timeout, with no answer
    assert time.monotonic() - started < 2 + WAIT_S / 2
    slow.close()
    assert server.counts.as_dict()["client_timeouts"] == 1
    assert upstream.received[-1][1] == "/v1/models" and len(upstream.received) == 1


def test_past_max_connections_a_client_waits_for_a_free_one(upstream, proxy_for):
    server = proxy_for(max_connections=1, client_timeout=0.5)
    holder = socket.create_connection(("127.0.0.1", server.server_port), timeout=WAIT_S)
    holder.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n")  # headers never finished: holds the one slot
    time.sleep(0.1)
    started = time.monotonic()
    assert ask(server, "GET", "/v1/models")[0] == 200
    assert time.monotonic() - started > 0.3  # it waited until the holder was dropped
    holder.close()


# ---------------------------------------------------------------- bounds and failures


def test_a_body_above_max_body_gets_413_and_is_not_forwarded(upstream, proxy_for):
    server = proxy_for(max_body=1000)
    status, headers, body = ask(server, "POST", "/v1/chat/completions", b"x" * 1001)
    assert status == 413
    assert json.loads(body)["error"]["message"].startswith("seam guard: the request body is larger")
    assert headers["Content-Type"] == "application/json"
    assert upstream.received == []
    status, _, _ = ask(server, "POST", "/v1/chat/completions", b"x" * 1001, {"Expect": "100-continue"})
    assert status == 413 and upstream.received == []
    status, _, body = ask(server, "POST", "/v1/chat/completions", b"x" * 20_000_000)  # read, not a reset
    assert status == 413 and json.loads(body)["error"]["type"] == "guard_request_error"
    assert ask(server, "POST", "/v1/chat/completions", b"x" * 1000)[0] == 200
    assert server.counts.as_dict()["refused"] == 3


MALFORMED = [
    (b"GET http://user:pw@example.org/v1/models HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET /caf\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400),
    (b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
    (b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
    (b"GARBAGE\r\n\r\n", 400),
    (b"CONNECT example.org:443 HTTP/1.1\r\n\r\n", 501),
    (b"GET /v1/models HTTP/1.1\r\n" + b"".join(b"X%d: y\r\n" % i for i in range(200)) + b"\r\n", 431),
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Note : y\r\nContent-Length: 2\r\n\r\n{}", 400),
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nNo colon\r\nContent-Length: 2\r\n\r\n{}", 400),
    (b"GET /v1/models HTTP/1.1\r\n folded: first\r\nHost: x\r\n\r\n", 400),
    (b"GET /v1/models HTTP/1.1\r\nHost: x\r\nFrom x\r\nAuthorization: k\r\n\r\n", 400),
    (b"GET /_guard/stats HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 400),
    (b"GET /_guard/stats HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
]
SMUGGLED = b"GET /v1/SMUGGLED HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def test_a_malformed_request_gets_a_json_refusal_and_nothing_reaches_the_upstream(upstream, proxy_for, capsys):
    server = proxy_for(quiet=False)
    for raw, status in MALFORMED:
        with socket.create_connection(("127.0.0.1", server.server_port), timeout=WAIT_S) as conn:
            conn.sendall(raw)
            conn.shutdown(socket.SHUT_WR)
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 %d " % status), (raw[:40], head)
        assert b"\r\nX-Seam-Guard: not-marked\r\nX-Seam-Guard-Reason: refused\r\n" in head
        assert b"\r\nConnection: close" in head
        assert json.loads(body)["error"]["type"] == "guard_request_error"
    assert upstream.received == []
    assert ask(server, "GET", "/v1/models")[0] == 200
    assert server.busy.wait_idle(WAIT_S)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "pw@" not in err and "internal error" not in err
    assert server.counts.as_dict()["refused"] == len(MALFORMED)


@pytest.mark.parametrize("head", [
    b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Note : y\r\nContent-Length: %d\r\n\r\n",
    b"GET /_guard/stats HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n",
], ids=["malformed-header-line", "stats-with-a-body"])
def test_a_body_is_never_read_as_a_second_request(upstream, proxy_for, head):
    server = proxy_for()
    with socket.create_connection(("127.0.0.1", server.server_port), timeout=WAIT_S) as conn:
        conn.sendall(head % len(SMUGGLED) + SMUGGLED)
        conn.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 ") and answer.count(b"HTTP/1.1 ") == 1
    assert server.busy.wait_idle(WAIT_S)
    assert upstream.received == []


def test_the_stats_say_they_were_not_forwarded(upstream, proxy_for):
    server = proxy_for()
    status, headers, body = ask(server, "GET", "/_guard/stats")
    assert (status, headers["X-Seam-Guard"], headers["X-Seam-Guard-Reason"]) == (200, "not-marked", "not forwarded")
    assert json.loads(body)["requests"] == 0
    assert ask(server, "GET", "/_guard/stats", None, {"Content-Length": "0"})[0] == 200


def test_an_upstream_down_is_a_502_with_a_json_error(proxy_for):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = proxy_for(f"http://127.0.0.1:{port}")
    status, headers, body = ask(server, "POST", "/v1/chat/completions", openai_body({"role": "user", "content": SEAM}))
    assert status == 502
    assert json.loads(body) == {"error": {"message": f"seam guard: upstream http://127.0.0.1:{port} unreachable "
                                                     "(connection refused)", "type": "guard_upstream_error"}}
    assert headers["X-Seam-Guard"] == "marked"
    assert server.counts.as_dict()["upstream_failures"] == 1


def test_a_slow_upstream_is_a_504(upstream, proxy_for):
    server = proxy_for(upstream_timeout=0.3)
    started = time.monotonic()
    status, _, body = ask(server, "GET", "/v1/models", None, {"X-Test-Mode": "slow"})
    assert status == 504 and time.monotonic() - started < 1.5
    assert json.loads(body)["error"] == {"message": f"seam guard: upstream http://127.0.0.1:{upstream.server_port} "
                                                    "did not answer within 0.3 s (--upstream-timeout)",
                                         "type": "guard_upstream_error"}


def test_no_key_nor_text_in_the_log_lines_and_one_line_per_request(upstream, proxy_for, capsys):
    server = proxy_for(quiet=False)
    body = openai_body({"role": "user", "content": SEAM})
    ask(server, "POST", f"/v1/chat/completions?key={KEY}", body, {"Authorization": f"Bearer {KEY}"})
    ask(server, "GET", "/v1/models", None, {"x-api-key": KEY})
    status, headers, reply = ask(server, "GET", "/_guard/stats")
    assert server.busy.wait_idle(WAIT_S)  # a line is written just after its answer
    err = capsys.readouterr().err
    assert dict(upstream.received[0][2])["Authorization"] == f"Bearer {KEY}"  # it did go upstream
    assert KEY not in err and "SECRET" not in err and "Teh cat" not in err and "btw" not in err
    assert KEY not in json.dumps(headers) and KEY.encode() not in reply
    lines = err.splitlines()
    assert len(lines) == 3
    # each line is written just after its answer, so the next request may be logged first: order is not asserted
    assert sum(" POST /v1/chat/completions 200 marked request " in line for line in lines) == 1
    assert sum(" GET /v1/models 200 not-marked " in line for line in lines) == 1
    assert json.loads(reply)["marked"] == 1 and json.loads(reply)["requests"] == 2


def test_quiet_writes_no_log_line(upstream, proxy_for, capsys):
    server = proxy_for(quiet=True)
    ask(server, "GET", "/v1/models")
    assert server.busy.wait_idle(WAIT_S)  # the request's log line, if any, is written
    assert capsys.readouterr().err == ""


def test_the_counts_add_up(upstream, proxy_for):
    server = proxy_for(max_body=10_000)
    ask(server, "POST", "/v1/chat/completions", openai_body({"role": "user", "content": SEAM}))
    ask(server, "POST", "/v1/chat/completions", openai_body({"role": "user", "content": NO_SEAM}))
    ask(server, "GET", "/v1/models")
    ask(server, "POST", "/v1/chat/completions", b"x" * 10_001)
    counts = json.loads(ask(server, "GET", "/_guard/stats")[2])
    assert counts["requests"] == 4 == counts["marked"] + sum(counts["not_marked"].values()) + counts["refused"]
    assert counts["not_marked"] == {"no seam": 1, "not a chat request": 1}


# ---------------------------------------------------------------- the command


def test_serve_runs_from_the_command_line_and_prints_its_counts_on_exit(upstream):
    proxy = subprocess.Popen([sys.executable, "seam.py", "guard", "serve", "--upstream",
                              f"http://127.0.0.1:{upstream.server_port}", "--port", "0"],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        announce = proxy.stdout.readline()
        assert announce.startswith("guard serve: http://127.0.0.1:"), announce + proxy.stderr.read()
        port = int(announce.split()[2].rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
        conn.request("POST", "/v1/chat/completions", openai_body({"role": "user", "content": SEAM}))
        assert conn.getresponse().getheader("X-Seam-Guard") == "marked"
        conn.close()
        proxy.send_signal(signal.SIGTERM)
        out, err = proxy.communicate(timeout=WAIT_S)
    finally:
        if proxy.poll() is None:
            proxy.kill()
            proxy.communicate()
    assert proxy.returncode == 0
    assert out.strip().splitlines()[-1].startswith("guard serve: 1 requests: 1 marked, 0 not marked")
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(("argv", "said"), [
    (["--upstream", "127.0.0.1:8080"], "--upstream is '127.0.0.1:8080': expected http(s)://host[:port][/path]"),
    (["--upstream", "ftp://example.org"], "--upstream is 'ftp://example.org': expected http(s)://"),
    (["--upstream", "http://x:99999"], "--upstream is 'http://x:99999': expected"),
    (["--upstream", "http://user:pw@x"], "--upstream is 'http://user:pw@x': expected"),
    (["--upstream", "http://x", "--host", "example.org"], "--host is 'example.org': expected an IP address"),
    (["--upstream", "http://x", "--port", "70000"], "argument --port: must be a port from 0 to 65535"),
    (["--upstream", "http://x", "--open", "a\nb"], "--open is 'a\\nb': expected one line of text"),
    ([], "the following arguments are required: --upstream"),
])
def test_a_bad_option_is_one_line_naming_it(argv, said):
    done = subprocess.run([sys.executable, "seam.py", "guard", "serve", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("seam.py guard serve: error: ") and said in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1


def test_help_shows_how_to_point_a_client_at_it():
    done = subprocess.run([sys.executable, "seam.py", "guard", "serve", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("usage: seam.py guard serve")
    assert 'base_url = "http://127.0.0.1:8090/v1"' in done.stdout
    assert 'OpenAI(base_url="http://127.0.0.1:8090/v1"' in done.stdout


def test_a_non_loopback_host_is_taken_only_with_a_warning():
    from guard.proxy import listen_host

    assert listen_host("127.0.0.2") == ("127.0.0.2", None)
    host, warning = listen_host("0.0.0.0")
    assert host == "0.0.0.0" and "not a loopback address" in warning


def test_the_proxy_refuses_to_be_its_own_upstream():
    from common.errors import UserError

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(UserError, match="is this proxy itself"):
        make_server(f"http://localhost:{port}", port)


def test_is_chat_request_reads_the_path_only():
    assert chat.is_chat_request("POST", "/v1/messages?beta=true")
    assert not chat.is_chat_request("POST", "/v1/messages/batches")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_seams_runner_through_the_proxy_sends_each_message_as_the_guard_marks_it(provider, tmp_path, monkeypatch):
    rows = dataset.requests(limit=2, conditions=["newline", "blank", "clean"])
    monkeypatch.setenv("SEAM_TEST_KEY", KEY)
    with serve() as fake:
        proxy = start(fake.url, quiet=True)
        try:
            config = write_config(tmp_path / "m.toml", fake, provider, api_key_env="SEAM_TEST_KEY",
                                  base_url=f"http://127.0.0.1:{proxy.server_port}/v1")
            summary = run(config, rows, tmp_path / "traces.jsonl", log=io.StringIO())
        finally:
            proxy.stop()
    assert summary.counts == {"ok": len(rows)}
    sent = sorted(json.loads(request["raw"])["messages"][-1]["content"] for request in fake.received)
    assert sent == sorted(guard(row.message).message for row in rows)
    assert sum(guard(row.message).marked for row in rows) >= 3  # the newline and blank messages, mostly
    assert {request["path"] for request in fake.received} == {
        "/v1/chat/completions" if provider == "openai" else "/v1/messages"}
