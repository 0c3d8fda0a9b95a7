"""The answer pages' server: `http.server` on 127.0.0.1 serving one answer session (`common.answersession`).

Standard library only. `AnswerServer` serves `seam.py review serve` and `seam.py occurrence
annotate` (docs/REVIEW.md, docs/OCCURRENCE.md). It knows nothing of labels, messages or
what a question asks. It serves whatever session it is given, through the few members an
`AnswerSession` has for it: `total`, `first_unanswered`, `case_page`, `done_page`,
`submit` and `content_security_policy`. So every answer page gets the same guards, and
there is only one copy of them:

- it listens on 127.0.0.1 only;
- it refuses a request whose Host header is not its own address (as a DNS-rebinding page
  would send), a POST from another origin or site, and any request with duplicate Host,
  Origin or Sec-Fetch-Site headers;
- the Content-Security-Policy lets only the pages' own style and script run
  (`common.answerpage`), and a lone surrogate in a page is shown as U+FFFD;
- slow clients cannot hold the reviewer out: a connection that sends nothing for 30 s is
  closed; a request's line and headers must arrive within 10 s of its first byte, and its
  body within 10 s of its headers, however steadily they trickle (`_Deadlined`); at most
  32 connections are served at once, and a connection past that bound closes the one that
  has waited longest for its request (never one being answered), so that a request sent
  whole, as a browser sends it, is answered at once; a client that does not read its answer
  is let go after WRITE_TIMEOUT_S, or, when a connection waits for a slot, once its answer has
  been written for STALLED_WRITE_S; a client that goes away leaves no traceback;
- an answer is saved durably (`AnswerFormat.append`) before the page is told it was saved.
"""

from __future__ import annotations

import io
import signal
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from common.answerpage import message_page
from common.answersession import Refused
from common.errors import UserError
from common.records import without_surrogates

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024
READ_TIMEOUT_S = 30  # a connection that sends nothing for this long is closed (a half-sent request holds a thread)
HEAD_TIMEOUT_S = 10  # a request's line and headers must be in within this of its first byte (a browser: at once)
BODY_TIMEOUT_S = 10  # and its body (at most MAX_BODY) within this of its headers
# An answer's headers, then its page, must each be taken within this (Python's sendall deadline is for the
# whole call): a browser on this machine takes a page of megabytes in milliseconds.
WRITE_TIMEOUT_S = 10
# Past the bound, an answer still being written after this long is a client that does not read it: its
# connection may then be closed to make room (a browser's is written in milliseconds; an answer being saved is
# not being written, and is never closed).
STALLED_WRITE_S = 1
MAX_CONNECTIONS = 32  # connections served at once (one reviewer needs a handful)
SLOT_WAIT_S = 2  # past the bound with every connection being answered, how long a new one waits for a slot
GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)  # the client went away


class _Deadlined(io.RawIOBase):
    """A connection's bytes as they arrive, for its handler's `rfile`: each read waits at most READ_TIMEOUT_S of
    silence, and never past the deadline of the part of the request being read (`AnswerHandler.phase`), so a
    client that trickles its request, a byte or a header line at a time, is let go at that deadline rather than
    held for as long as it keeps sending."""

    def __init__(self, handler: AnswerHandler) -> None:
        super().__init__()
        self.handler = handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        handler = self.handler
        wait = READ_TIMEOUT_S
        if handler.phase in ("head", "body"):
            wait = min(wait, handler.deadline - time.monotonic())
            if wait <= 0:
                raise TimeoutError(f"the request's {handler.phase} did not arrive in time")
        handler.connection.settimeout(wait)
        count = handler.connection.recv_into(buffer)
        if count and handler.phase == "idle":  # a request's first byte: its line and headers must follow promptly
            handler.phase, handler.deadline = "head", time.monotonic() + HEAD_TIMEOUT_S
        return count


class AnswerHandler(BaseHTTPRequestHandler):
    server: AnswerServer
    server_version = "seam-review"
    sys_version = ""
    timeout = READ_TIMEOUT_S  # socketserver sets it on the connection: reads time out, the thread ends
    # What the connection is doing: waiting for a request ("idle"), reading its line and headers ("head") or its
    # body ("body"), each of the last two by `deadline`; or answering it ("answer"), when it is never closed
    # to make room (`AnswerServer.make_room`).
    phase = "idle"
    deadline = 0.0
    evicted = False

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the plain reader socketserver made: the connection is read through `_Deadlined`
        self.rfile = io.BufferedReader(_Deadlined(self))
        self.server.waiting(self)

    def finish(self) -> None:
        self.server.done(self)
        super().finish()

    def handle_one_request(self) -> None:
        if self.phase == "answer":  # a connection kept alive waits for its next request: it may make room again
            self.server.waiting(self)
        self.phase = "idle"
        super().handle_one_request()

    def answering(self) -> None:
        """From here on the request is answered, and the connection is not closed to make room (one that already
        was is given up: its client is told nothing)."""
        if self.phase != "answer":
            self.server.answering(self)
            self.phase = "answer"
            self.connection.settimeout(WRITE_TIMEOUT_S)  # for the reply: not what was left of a read's deadline

    def evict(self) -> None:
        """Close the connection to make room (its blocked read returns at once): by `AnswerServer.make_room`."""
        self.evicted = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:  # already gone
            pass

    def handle(self) -> None:
        """Serve the connection; a client that disconnects or stalls mid-request is let go quietly (no
        traceback for every closed tab)."""
        try:
            super().handle()
        except GONE:
            self.close_connection = True

    def log_message(self, format, *args):  # noqa: A002 (the base class's name): quiet; the terminal shows progress
        pass

    # ------------------------------------------------------------ dispatch

    def do_GET(self):  # noqa: N802 (http.server's naming)
        self.answering()
        self._dispatch(self._get)

    def do_POST(self):  # noqa: N802
        self._dispatch(self._post)

    def _dispatch(self, handler) -> None:
        try:
            self._check_host()
            handler()
        except Refused as refused:
            self._send(refused.status, message_page("seam review", refused.text))
        except UserError as exc:  # the answer could not be written (a full disk): say so, loudly
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, message_page("seam review: NOT saved", str(exc)))

    def _check_host(self) -> None:
        allowed = self.server.allowed_hosts
        for name in ("Host", "Origin", "Sec-Fetch-Site"):
            if len(self.headers.get_all(name) or []) > 1:  # which one counts would be up to whoever reads it
                raise Refused(HTTPStatus.BAD_REQUEST, f"The request has more than one {name} header.")
        if self.headers.get("Host", "") not in allowed:
            raise Refused(HTTPStatus.FORBIDDEN, "This server answers only requests addressed to "
                                                 f"http://{HOST}:{self.server.server_port}/.")
        origin = self.headers.get("Origin")
        if self.command == "POST" and origin is not None and origin not in {f"http://{h}" for h in allowed}:
            raise Refused(HTTPStatus.FORBIDDEN, "Answers are accepted only from the review page itself.")
        site = self.headers.get("Sec-Fetch-Site")  # a browser says where a request comes from, Origin or not
        if self.command == "POST" and site is not None and site not in ("same-origin", "none"):
            raise Refused(HTTPStatus.FORBIDDEN, "Answers are accepted only from the review page itself.")

    # ------------------------------------------------------------ routes

    def _get(self) -> None:
        session = self.server.session
        parts = urlsplit(self.path)
        saved = _number(parse_qs(parts.query).get("saved", [""])[0])
        if parts.path == "/":
            first = session.first_unanswered()
            self._redirect("/done" if first is None else f"/case/{first}")
        elif parts.path == "/done":
            self._send(HTTPStatus.OK, session.done_page(saved))
        else:
            number = self._case_number(parts.path)
            self._send(HTTPStatus.OK, session.case_page(number, saved=saved))

    def _post(self) -> None:
        session = self.server.session
        number = self._case_number(urlsplit(self.path).path)
        if self.headers.get_content_type() != "application/x-www-form-urlencoded":
            raise Refused(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "Expected a form (application/x-www-form-urlencoded).")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            raise Refused(HTTPStatus.LENGTH_REQUIRED, "The request has no Content-Length.") from None
        if not 0 <= length <= MAX_BODY:
            raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "The answer is too large.")
        self.phase, self.deadline = "body", time.monotonic() + BODY_TIMEOUT_S
        body = self.rfile.read(length)
        if len(body) < length:  # the client closed the connection (or it was closed to make room) mid-body
            raise ConnectionAbortedError("the request's body was cut short")
        self.answering()
        try:
            session.submit(number, body)
        except Refused as refused:
            self._send(refused.status, session.case_page(number, error=refused.text))
            return
        following = session.first_unanswered(after=number)
        self._redirect(f"/done?saved={number}" if following is None else f"/case/{following}?saved={number}")

    def _case_number(self, path: str) -> int:
        number = _number(path.removeprefix("/case/")) if path.startswith("/case/") else None
        if number is None or not 1 <= number <= self.server.session.total:
            raise Refused(HTTPStatus.NOT_FOUND, f"No such page: {path}")
        return number

    # ------------------------------------------------------------ replies

    def _send(self, status: HTTPStatus, text: str) -> None:
        data = without_surrogates(text).encode("utf-8")  # a lone surrogate (JSON allows one) is shown as U+FFFD
        self.answering()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self._safety_headers()
        self.server.writing(self)
        try:
            self.end_headers()
            self.wfile.write(data)
        finally:
            self.server.written(self)

    def _redirect(self, location: str) -> None:
        self.answering()
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self._safety_headers()
        self.end_headers()

    def _safety_headers(self) -> None:
        self.send_header("Content-Security-Policy", self.server.session.content_security_policy)
        self.send_header("X-Content-Type-Options", "nosniff")
        # same-origin, not no-referrer: with no-referrer Chromium posts the form with "Origin: null", which the
        # Origin check refuses, so no answer could be saved from a browser (tests/test_answer_core.py)
        self.send_header("Referrer-Policy", "same-origin")
        self.send_header("Cache-Control", "no-store")


def _number(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else None


class AnswerServer(ThreadingHTTPServer):
    """The page's server on 127.0.0.1:`port`, for one session (an `AnswerSession`, or any object with the
    members the handler uses: see the module docstring)."""

    daemon_threads = True

    def __init__(self, session, port: int) -> None:
        self.session = session
        try:
            super().__init__((HOST, port), AnswerHandler)
        except OSError as exc:
            raise UserError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}; choose another --port "
                            "(0 picks a free one)") from None
        self.allowed_hosts = frozenset({f"{HOST}:{self.server_port}", f"localhost:{self.server_port}"})
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.since: dict[AnswerHandler, float] = {}  # connections waiting for (or reading) a request, and since when
        self.writers: dict[AnswerHandler, float] = {}  # connections writing an answer, and since when
        self.since_lock = threading.Lock()

    def process_request(self, request, client_address) -> None:
        """Serve in a thread while fewer than MAX_CONNECTIONS are; past that, first close the connection that has
        waited longest for its request (`make_room`), and close this one only when every connection is being
        answered and none ends within SLOT_WAIT_S."""
        if not self.slots.acquire(blocking=False):
            self.make_room()
            deadline = time.monotonic() + SLOT_WAIT_S
            while not self.slots.acquire(timeout=0.1):
                if time.monotonic() >= deadline:
                    self.shutdown_request(request)
                    return
                self.stop_stalled_write()
        super().process_request(request, client_address)

    def stop_stalled_write(self) -> None:
        """Close the connection whose answer has been written longest, once that is past STALLED_WRITE_S: a
        client that does not read what it asked for (one at a time: each frees a slot)."""
        self._evict_oldest(self.writers, older_than=STALLED_WRITE_S)

    def writing(self, handler: AnswerHandler) -> None:
        with self.since_lock:
            self.writers[handler] = time.monotonic()

    def written(self, handler: AnswerHandler) -> None:
        with self.since_lock:
            self.writers.pop(handler, None)

    def make_room(self) -> None:
        """Close the connection that has waited longest for its request, or is still sending it: a slow or idle
        client's, never one being answered. A browser sends a request whole as it connects, so this is never
        the reviewer's request in flight."""
        self._evict_oldest(self.since)

    def _evict_oldest(self, table: dict[AnswerHandler, float], older_than: float = 0.0) -> None:
        """Close the connection of `table` (handler -> since when) that has been there longest, if longer than
        `older_than` seconds."""
        with self.since_lock:
            if table:
                oldest = min(table, key=table.__getitem__)
                if time.monotonic() - table[oldest] >= older_than:
                    del table[oldest]
                    oldest.evict()

    def waiting(self, handler: AnswerHandler) -> None:
        with self.since_lock:
            self.since[handler] = time.monotonic()

    def answering(self, handler: AnswerHandler) -> None:
        with self.since_lock:
            if handler.evicted:  # closed to make room just before its request was complete
                raise ConnectionAbortedError("closed to make room for another connection")
            self.since.pop(handler, None)

    def done(self, handler: AnswerHandler) -> None:
        with self.since_lock:
            self.since.pop(handler, None)
            self.writers.pop(handler, None)

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request, client_address) -> None:
        """A client that went away is no error worth a traceback; anything else is printed as before."""
        if isinstance(sys.exc_info()[1], GONE):
            return
        super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_port}/"

    def serve_until_stopped(self, announce: str) -> None:
        """Print `announce` (the line with the URL), serve until Ctrl+C (SIGINT) or `kill PID` (SIGTERM),
        then close; every answer is saved already.

        SIGINT gets Python's handler explicitly: a process a script starts in the background inherits
        SIGINT ignored, and Python then installs none of its own, so Ctrl+C (or a test's SIGINT) would
        be ignored and the server never stop. Both handlers are in place before the URL is printed, so
        whoever reads the URL can stop the server at once.
        """
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, _interrupt)
        try:  # from here on, a signal stops the server the same way however early it comes
            print(announce, flush=True)
            self.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            self.server_close()


def _interrupt(signum, frame):
    raise KeyboardInterrupt
