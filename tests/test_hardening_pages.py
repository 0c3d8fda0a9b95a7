"""What a fault campaign found on the page servers (review serve, occurrence annotate), each fixed: a lone
surrogate in a page, duplicate Host/Origin headers, a cross-site POST without Origin, half-sent requests
holding threads for ever, unbounded connections, and a traceback for every client that goes away."""

from __future__ import annotations

import http.client
import socket
import sys
import threading
import time

import pytest

from common import answerserver as server


class Session:
    """The few members the page server uses (common/answerserver.py's docstring), with a page holding a lone
    surrogate, as a model output read from JSON may."""

    total = 1
    submitted: list = []

    def first_unanswered(self, after=None):
        return None if after else 1

    def case_page(self, number, saved=None, error=None):
        return "<p>before \ud800 after</p>"

    def done_page(self, saved=None):
        return "<p>done</p>"

    def submit(self, number, body):
        self.submitted.append(body)

    def content_security_policy(self):
        return "default-src 'none'"


@pytest.fixture
def running(monkeypatch):
    def start(**constants):
        for name, value in constants.items():
            monkeypatch.setattr(server, name, value)
        monkeypatch.setattr(server.AnswerHandler, "timeout", server.READ_TIMEOUT_S)
        Session.submitted = []
        httpd = server.AnswerServer(Session(), 0)
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        started.append(httpd)
        return httpd

    started = []
    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def _request(httpd, method: str, path: str, headers: list[tuple[str, str]], body: bytes = b""):
    connection = http.client.HTTPConnection("127.0.0.1", httpd.server_port, timeout=10)
    connection.putrequest(method, path, skip_host=True)
    for name, value in headers:
        connection.putheader(name, value)
    if body:
        connection.putheader("Content-Length", str(len(body)))
    connection.endheaders(body or None)
    response = connection.getresponse()
    text = response.read().decode("utf-8")
    connection.close()
    return response.status, text


def test_a_lone_surrogate_in_a_page_is_shown_as_the_replacement_character(running):
    httpd = running()
    status, text = _request(httpd, "GET", "/case/1", [("Host", f"127.0.0.1:{httpd.server_port}")])
    assert status == 200 and "before \ufffd after" in text


@pytest.mark.parametrize("duplicate", ["Host", "Origin"])
def test_a_request_with_two_host_or_origin_headers_is_refused(running, duplicate):
    httpd = running()
    host = f"127.0.0.1:{httpd.server_port}"
    headers = [("Host", host), ("Origin", f"http://{host}")]
    headers.append((duplicate, "evil.example" if duplicate == "Host" else "http://evil.example"))
    status, text = _request(httpd, "POST", "/case/1", [*headers, ("Content-Type",
                                                                   "application/x-www-form-urlencoded")], b"x=1")
    assert status == 400 and f"more than one {duplicate} header" in text and Session.submitted == []


def test_a_cross_site_post_without_origin_is_refused(running):
    httpd = running()
    headers = [("Host", f"127.0.0.1:{httpd.server_port}"), ("Sec-Fetch-Site", "cross-site"),
               ("Content-Type", "application/x-www-form-urlencoded")]
    status, _ = _request(httpd, "POST", "/case/1", headers, b"verdict=absorbed")
    assert status == 403 and Session.submitted == []
    status, _ = _request(httpd, "POST", "/case/1", [*headers[:1], ("Sec-Fetch-Site", "same-origin"), headers[2]],
                         b"verdict=absorbed")
    assert status == 303 and len(Session.submitted) == 1


def test_a_half_sent_request_is_closed_after_the_read_timeout(running):
    httpd = running(READ_TIMEOUT_S=0.5)
    with socket.create_connection(("127.0.0.1", httpd.server_port), timeout=10) as client:
        client.sendall(b"GET /case/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
        started = time.monotonic()
        assert client.recv(1024) == b""  # the server closed it
        assert time.monotonic() - started < 5


def test_connections_past_the_bound_close_the_idle_one_waiting_longest(running):
    """Past the bound an idle connection is closed, no longer the new one (which slow clients could then hold
    out for ever: issue 36, tests/test_answer_slow_clients.py)."""
    httpd = running(MAX_CONNECTIONS=2, READ_TIMEOUT_S=5)
    idle = [socket.create_connection(("127.0.0.1", httpd.server_port), timeout=10) for _ in range(2)]
    time.sleep(0.3)
    try:
        with socket.create_connection(("127.0.0.1", httpd.server_port), timeout=10) as third:
            third.sendall(f"GET /case/1 HTTP/1.1\r\nHost: 127.0.0.1:{httpd.server_port}\r\n\r\n".encode())
            assert third.recv(1024).startswith(b"HTTP/1.0 200")
        assert idle[0].recv(1024) == b""  # the one waiting longest
    finally:
        for sock in idle:
            sock.close()


def test_a_client_that_went_away_leaves_no_traceback(running, capsys):
    httpd = running()
    for gone in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset")):
        try:
            raise gone
        except OSError:
            httpd.handle_error(None, ("127.0.0.1", 1))
    assert capsys.readouterr().err == ""
    try:
        raise ValueError("a real bug")
    except ValueError:
        sys.stderr.write("")
        httpd.handle_error(None, ("127.0.0.1", 1))
    assert "ValueError: a real bug" in capsys.readouterr().err


def test_a_binary_file_is_no_review_file_and_damage_is_no_torn_line(tmp_path):
    """`review report` on a binary file advised starting `review serve` to repair a "torn" last line."""
    from common.errors import UserError
    from review import store

    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(UserError, match=r"binary.jsonl: not a review file \(it does not start with a JSON object"):
        store.read(binary)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b'{"kind": "header"}\n\x00\x01garbage')
    with pytest.raises(UserError, match=r"damaged.jsonl:2: the bytes after the last line \(9\) are not the start of "
                                        r"a row: the file is damaged there"):
        store.read(damaged, allow_torn=True)


def test_the_copied_text_check_on_a_long_message_compares_where_the_window_occurs():
    """The annotate page's check that a note repeats no 40 characters of the message searched the whole
    message for each candidate run (2.9 s on a 10 MB message); it now compares the runs where a window of the
    note occurs: the same answers."""
    from occurrence.annotate import quoted_run

    message = "".join(f"word{i} " for i in range(1_500_000))  # 10 MB, every stretch different
    note = "my note, then " + message[5_000_000:5_000_100]
    found = quoted_run(note, message)
    assert found is not None and len(found) == 40 and found in message and found in note
    assert quoted_run("my own words about this message, nothing copied from it", message) is None
    for other in ("abc " * 30, "x" * 45):  # too few letters or digits, or absent
        assert quoted_run(other, message) is None
