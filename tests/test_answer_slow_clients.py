"""Slow clients cannot lock the reviewer out of the answer pages' server (issue 36, defect 11).

Once, 32 connections each sending a header line every 20 s held all 32 of `review serve`'s and `occurrence
annotate`'s connections for as long as they lasted (each read waited 30 s of silence at most, and a trickle is
never silent that long), and the reviewer's own request was closed at once. Now a request's line and headers
must arrive within HEAD_TIMEOUT_S of its first byte and its body within BODY_TIMEOUT_S, and a connection past
the bound closes the one that has waited longest for its request instead of being closed itself.

Every test here uses real sockets on 127.0.0.1, a few dozen at most, each with a timeout, and stops by itself.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time

import pytest

from common import answerserver as server


class Session:
    """The few members the page server uses (common/answerserver.py's docstring); `submit` waits for `release`
    when `hold` is set, to keep a connection busy answering."""

    total = 1

    def __init__(self) -> None:
        self.submitted: list[bytes] = []
        self.hold = False
        self.release = threading.Event()

    def first_unanswered(self, after=None):
        return None if after else 1

    def case_page(self, number, saved=None, error=None):
        return "<p>case 1</p>"

    def done_page(self, saved=None):
        return "<p>done</p>"

    def submit(self, number, body):
        if self.hold:
            self.release.wait(10)
        self.submitted.append(body)

    content_security_policy = "default-src 'none'"


@pytest.fixture
def running(monkeypatch):
    started: list[server.AnswerServer] = []
    sockets: list[socket.socket] = []

    def start(**constants) -> server.AnswerServer:
        for name, value in constants.items():
            monkeypatch.setattr(server, name, value, raising=False)
        httpd = server.AnswerServer(Session(), 0)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        started.append(httpd)
        return httpd

    def connect(httpd: server.AnswerServer) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", httpd.server_port), timeout=10)
        sockets.append(sock)
        return sock

    start.connect = connect
    yield start
    for sock in sockets:
        sock.close()
    for httpd in started:
        httpd.session.release.set()
        httpd.shutdown()
        httpd.server_close()


def host(httpd) -> bytes:
    return f"Host: 127.0.0.1:{httpd.server_port}\r\n".encode()


def get(httpd, timeout: float = 10) -> tuple[int, float]:
    """(status, seconds) of a normal GET of the case page."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", httpd.server_port, timeout=timeout)
    try:
        connection.request("GET", "/case/1")
        response = connection.getresponse()
        response.read()
        return response.status, time.monotonic() - started
    finally:
        connection.close()


def closed_within(sock: socket.socket, seconds: float) -> float:
    """How long until the server closes `sock` (it reads b""); fails when it is still open after `seconds`."""
    sock.settimeout(seconds)
    started = time.monotonic()
    try:
        while sock.recv(1024):
            pass
    except TimeoutError:
        pytest.fail(f"the server kept the connection open for more than {seconds} s")
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def test_32_slow_clients_do_not_lock_the_reviewer_out(running):
    httpd = running()
    slow = [running.connect(httpd) for _ in range(server.MAX_CONNECTIONS)]
    for sock in slow:  # a request line and one header, as a client sending a header line every 20 s
        sock.sendall(b"GET /case/1 HTTP/1.1\r\n" + host(httpd))
    time.sleep(0.5)  # every one of them taken in by the server
    status, seconds = get(httpd)
    assert status == 200 and seconds < 3


def test_a_request_head_trickling_in_is_closed_at_its_deadline(running):
    httpd = running(HEAD_TIMEOUT_S=1.0)
    sock = running.connect(httpd)
    sock.sendall(b"GET /case/1 HTTP/1.1\r\n")
    stop = threading.Event()

    def trickle() -> None:  # a header line every 0.2 s: never silent for the 30 s a single read waits
        for number in range(50):
            if stop.wait(0.2):
                return
            try:
                sock.sendall(f"X-Slow-{number}: 1\r\n".encode())
            except OSError:
                return

    sender = threading.Thread(target=trickle, daemon=True)
    sender.start()
    try:
        assert closed_within(sock, 5) < 3
    finally:
        stop.set()
        sender.join(5)


def test_a_request_body_trickling_in_is_closed_at_its_deadline(running):
    httpd = running(BODY_TIMEOUT_S=1.0)
    sock = running.connect(httpd)
    sock.sendall(b"POST /case/1 HTTP/1.1\r\n" + host(httpd) + b"Content-Type: application/x-www-form-urlencoded\r\n"
                 b"Content-Length: 1000\r\n\r\n")
    stop = threading.Event()

    def trickle() -> None:
        for _ in range(50):
            if stop.wait(0.2):
                return
            try:
                sock.sendall(b"x")
            except OSError:
                return

    sender = threading.Thread(target=trickle, daemon=True)
    sender.start()
    try:
        assert closed_within(sock, 5) < 3
    finally:
        stop.set()
        sender.join(5)
    assert httpd.session.submitted == []


def test_past_the_bound_the_connection_waiting_longest_is_closed_and_the_new_one_answered(running):
    httpd = running(MAX_CONNECTIONS=2)
    oldest = running.connect(httpd)
    time.sleep(0.2)
    newer = running.connect(httpd)
    newer.sendall(b"GET /case/1 HTTP/1.1\r\n")  # half a request
    time.sleep(0.2)
    status, seconds = get(httpd)
    assert status == 200 and seconds < 3
    assert closed_within(oldest, 3) < 3
    newer.sendall(host(httpd) + b"\r\n")  # the half-sent request, still served, completes
    assert newer.recv(1024).startswith(b"HTTP/1.0 200")


def test_when_every_connection_is_answering_a_new_one_is_closed_after_a_short_wait(running):
    httpd = running(MAX_CONNECTIONS=1, SLOT_WAIT_S=0.5)
    httpd.session.hold = True
    busy = running.connect(httpd)
    busy.sendall(b"POST /case/1 HTTP/1.1\r\n" + host(httpd) + b"Content-Type: application/x-www-form-urlencoded\r\n"
                 b"Content-Length: 3\r\n\r\nx=1")
    time.sleep(0.3)  # its answer is being saved (held)
    late = running.connect(httpd)
    late.sendall(b"GET /case/1 HTTP/1.1\r\n" + host(httpd) + b"\r\n")
    assert closed_within(late, 5) < 3
    httpd.session.release.set()
    assert busy.recv(1024).startswith(b"HTTP/1.0 303")  # the one answering was not cut off


def test_clients_that_never_read_their_answer_are_let_go_and_the_reviewer_is_answered(running, monkeypatch):
    """Every connection answering a page its client never reads (small socket buffers here stand for a page of
    megabytes): a new request waiting for a slot closes the one whose answer has been written longest once that
    is past STALLED_WRITE_S, and is answered (it was closed after SLOT_WAIT_S, the slots held for 30 s per
    write). The server's own timings: only the bound is lowered, to four connections."""
    page = "<p>" + "x" * 1_000_000 + "</p>"
    monkeypatch.setattr(Session, "case_page", lambda self, number, saved=None, error=None: page)
    setup = server.AnswerHandler.setup

    def small_send_buffer(handler):
        handler.request.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        setup(handler)

    monkeypatch.setattr(server.AnswerHandler, "setup", small_send_buffer)
    httpd = running(MAX_CONNECTIONS=4)
    stuck = []
    for _ in range(4):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(10)
        sock.connect(("127.0.0.1", httpd.server_port))
        sock.sendall(b"GET /case/1 HTTP/1.1\r\n" + host(httpd) + b"\r\n")
        stuck.append(sock)
    time.sleep(0.3)  # all four are answering, none read
    try:
        status, _ = get(httpd, timeout=10)
        assert status == 200
    finally:
        for sock in stuck:
            sock.close()
