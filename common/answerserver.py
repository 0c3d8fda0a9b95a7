"""The answer pages' server: `http.server` on 127.0.0.1 serving one answer session, and the session base.

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
- a connection that sends nothing for 30 s is closed, at most 32 are served at once, and
  a client that goes away leaves no traceback;
- an answer is saved durably (`AnswerFormat.append`) before the page is told it was saved.
"""

from __future__ import annotations

import signal
import sys
import threading
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

from common.answerfile import AnswerFormat, first_unanswered
from common.answerpage import CONTENT_SECURITY_POLICY, message_page
from common.errors import UserError
from common.records import without_surrogates

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024
READ_TIMEOUT_S = 30  # a connection that sends nothing for this long is closed (a half-sent request holds a thread)
MAX_CONNECTIONS = 32  # connections served at once; more are closed at once (one reviewer needs a handful)
GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)  # the client went away


class Refused(Exception):
    """A request the page cannot take (a bad form, an unknown case): its HTTP status and what to tell the user."""

    def __init__(self, status: HTTPStatus, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


def read_form(body: bytes, names: tuple[str, ...], max_fields: int) -> dict[str, str]:
    """A form body's fields, each given at most once and none but `names`; anything else is `Refused`.

    >>> read_form(b"answer=yes&note=a+b", ("answer", "note"), 5)
    {'answer': 'yes', 'note': 'a b'}
    """
    try:
        text = body.decode("utf-8")
        form = parse_qs(text, keep_blank_values=True, strict_parsing=bool(text), errors="strict",
                        max_num_fields=max_fields)
    except (UnicodeDecodeError, ValueError):
        raise Refused(HTTPStatus.BAD_REQUEST, "The form could not be read (expected UTF-8 form data).") from None
    if set(form) - set(names) or any(len(values) > 1 for values in form.values()):
        raise Refused(HTTPStatus.BAD_REQUEST, "The form has unknown or repeated fields.")
    return {name: values[0] for name, values in form.items()}


def form_note(form: dict[str, str], limit: int) -> str:
    """The form's note with its line ends as "\\n" (a browser sends "\\r\\n"), at most `limit` characters.

    >>> form_note({"note": "a\\r\\nb"}, 10)
    'a\\nb'
    """
    note = form.get("note", "").replace("\r\n", "\n").replace("\r", "\n")
    if len(note) > limit:
        raise Refused(HTTPStatus.BAD_REQUEST, f"The note is longer than {limit:,} characters. Nothing was saved.")
    return note


@dataclass
class AnswerSession:
    """The state a page is served from: the file's cases and the answers in force. A session of a kind of
    answer file (`FORMAT`) adds what its page shows, `case_page`, `done_page` and `submit`."""

    FORMAT: ClassVar[AnswerFormat]
    content_security_policy: ClassVar[str] = CONTENT_SECURITY_POLICY

    path: Path
    reviewer: str
    cases: tuple
    latest: dict[int, Any]
    moved_aside: Path | None = field(default=None, kw_only=True)  # where a torn last line went, if one was
    lock: threading.Lock = field(default_factory=threading.Lock, kw_only=True)

    @property
    def total(self) -> int:
        return len(self.cases)

    def first_unanswered(self, after: int = 0) -> int | None:
        return first_unanswered([case.case for case in self.cases], self.latest, after)

    def save(self, answer) -> None:
        """Append the answer durably, then take it into the state (threads serve requests: one at a time)."""
        with self.lock:
            self.FORMAT.append(self.path, answer)
            self.latest[answer.case] = answer


class AnswerHandler(BaseHTTPRequestHandler):
    server: AnswerServer
    server_version = "seam-review"
    sys_version = ""
    timeout = READ_TIMEOUT_S  # socketserver sets it on the connection: reads time out, the thread ends

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
        try:
            session.submit(number, self.rfile.read(length))
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
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self._safety_headers()
        self.end_headers()
        self.wfile.write(data)

    def _redirect(self, location: str) -> None:
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

    def process_request(self, request, client_address) -> None:
        """Serve in a thread while fewer than MAX_CONNECTIONS are; past that, close the connection at once."""
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

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
