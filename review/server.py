"""`seam.py review serve`: the review page on 127.0.0.1, one case at a time, each answer saved as it is given.

Standard library only (`http.server`). The server reads the review file (moving
a torn last line aside), checks that the traces and requests it names are the
very files the sample was drawn from (SHA-256), and then never reads a label:
the kit's verdicts are not in its memory, so no request can reveal them.

Every answer is appended to the review file (`store.append`: one write, fsync)
before the browser is told it was saved; a later answer to the same case
supersedes the earlier one, which stays in the file. Reopening the file
continues at the first unanswered case. One reviewer per file: a second name is
refused. Requests whose Host header is not this server's own address (as a
DNS-rebinding page would send) are refused, and so are POSTs from another origin.

The HTTP side (`ReviewHTTPServer`, `ReviewHandler`) knows nothing of labels or
absorption: it serves whatever session it is given, through the few members a
`ReviewSession` has for it (`total`, `first_unanswered`, `case_page`,
`done_page`, `submit`, `content_security_policy`), so that another blinded
question (the occurrence audit's annotation page) is served by the same
guarded server rather than by a copy of it.
"""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from common.errors import UserError
from common.records import without_surrogates
from review import inputs, page, store
from review.inputs import Asked
from review.records import ABSORPTION_KINDS, NOTE_LIMIT, VERDICTS, Answer, Case, session_reviewer
from review.store import first_unanswered

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024
READ_TIMEOUT_S = 30  # a connection that sends nothing for this long is closed (a half-sent request holds a thread)
MAX_CONNECTIONS = 32  # connections served at once; more are closed at once (one reviewer needs a handful)
GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)  # the client went away


@dataclass
class ReviewSession:
    """The state the page is served from: the cases, what they show, and the answers in force."""

    path: Path
    reviewer: str
    cases: tuple[Case, ...]
    asked: dict[str, Asked]
    outputs: dict[tuple[str, str], str]  # (model, request id) -> output, for the cases and their clean requests
    latest: dict[int, Answer]
    show_condition: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    moved_aside: Path | None = None

    content_security_policy = page.CONTENT_SECURITY_POLICY

    @property
    def total(self) -> int:
        return len(self.cases)

    def first_unanswered(self, after: int = 0) -> int | None:
        return first_unanswered([case.case for case in self.cases], self.latest, after)

    def view(self, number: int, saved: int | None = None, error: str | None = None) -> page.CaseView:
        case = self.cases[number - 1]
        asked = self.asked[case.id]
        return page.CaseView(
            number=number, total=self.total, answered=len(self.latest), reviewer=self.reviewer,
            instruction=asked.instruction, artifact=asked.artifact, comment=asked.comment or "",
            clean_output=self.outputs[case.model, f"{case.cluster}/clean"], output=self.outputs[case.model, case.id],
            condition=case.condition if self.show_condition else None,
            request_id=case.id if self.show_condition else None,
            previous=self.latest.get(number), saved=saved, error=error)

    def case_page(self, number: int, saved: int | None = None, error: str | None = None) -> str:
        """The HTML page of one case (blinded), with a saved confirmation or an error."""
        return page.case_page(self.view(number, saved=saved, error=error))

    def done_page(self, saved: int | None) -> str:
        """The HTML page once every case has an answer."""
        return page.done_page(self.total, self.reviewer, saved)

    def submit(self, number: int, body: bytes) -> None:
        """Save the answer a form body gives for case `number`; a form that cannot be taken is `Refused`."""
        verdict, kind, note = parse_answer(body)
        self.answer(number, verdict, kind, note)

    def answer(self, number: int, verdict: str, absorption_kind: str | None, note: str) -> Answer:
        """Save one answer durably, then take it into the state."""
        case = self.cases[number - 1]
        moment = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        answer = Answer(kind="answer", case=number, id=case.id, model=case.model, reviewer=self.reviewer,
                        verdict=verdict, absorption_kind=absorption_kind, note=note, answered_at=moment)
        with self.lock:
            store.append(self.path, answer)
            self.latest[number] = answer
        return answer


def open_session(path: str | Path, reviewer: str | None, *, show_condition: bool = False) -> ReviewSession:
    """Read the review file and what its cases show; refuse a second reviewer or changed inputs."""
    path = Path(path)
    review = store.read(path, allow_torn=True)
    moved = store.move_torn_tail(review)
    if moved is not None:
        review = store.read(path)
    reviewer = session_reviewer(path, reviewer, review.reviewer, file="review file", verb="reviews",
                                more=" (docs/REVIEW.md, 'A second reviewer')")
    header = review.header
    inputs.check_unchanged(header.traces, "trace")
    if header.requests is not None:
        inputs.check_unchanged((header.requests,), "requests")
    traces, _ = inputs.load_traces([ref.path for ref in header.traces])
    asked, benchmark_sha256 = inputs.load_asked(Path(header.requests.path) if header.requests else None)
    if benchmark_sha256 != header.benchmark_sha256:
        raise UserError(f"the benchmark is {benchmark_sha256[:12]}…, but the review was drawn from "
                        f"{header.benchmark_sha256[:12]}…")
    outputs = {}
    for case in review.cases:
        for rid in (case.id, f"{case.cluster}/clean"):
            row = traces.get(case.model, {}).get(rid)
            if row is None or row.output is None:
                raise UserError(f"{path}: case {case.case}: the traces have no output for {case.model} {rid}")
            outputs[case.model, rid] = row.output
        if case.id not in asked:
            raise UserError(f"{path}: case {case.case}: {case.id} is not in the benchmark")
    return ReviewSession(path, reviewer, review.cases, asked, outputs, review.latest(), show_condition,
                         moved_aside=moved)


class Refused(Exception):
    """A request the page cannot take (a bad form, an unknown case): its HTTP status and what to tell the user."""

    def __init__(self, status: HTTPStatus, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


def parse_answer(body: bytes) -> tuple[str, str | None, str]:
    """(verdict, absorption kind or None, note) from a form body; anything else is refused.

    >>> parse_answer(b"verdict=absorbed&absorption_kind=verbatim&note=a+b%0D%0Ac")
    ('absorbed', 'verbatim', 'a b\\nc')
    >>> parse_answer(b"verdict=unsure&absorption_kind=&note=")
    ('unsure', None, '')
    """
    try:
        text = body.decode("utf-8")
        form = parse_qs(text, keep_blank_values=True, strict_parsing=bool(text), errors="strict",
                        max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        raise Refused(HTTPStatus.BAD_REQUEST, "The form could not be read (expected UTF-8 form data).") from None
    unknown = sorted(set(form) - {"verdict", "absorption_kind", "note"})
    if unknown or any(len(values) > 1 for values in form.values()):
        raise Refused(HTTPStatus.BAD_REQUEST, "The form has unknown or repeated fields.")
    verdict = form.get("verdict", [""])[0]
    if verdict not in VERDICTS:
        raise Refused(HTTPStatus.BAD_REQUEST, "Choose absorbed, not absorbed or unsure (keys a, n, u) first. "
                                               "Nothing was saved.")
    kind = form.get("absorption_kind", [""])[0] or None
    if kind is not None and kind not in ABSORPTION_KINDS:
        raise Refused(HTTPStatus.BAD_REQUEST, f"Unknown kind {kind!r}. Nothing was saved.")
    note = form.get("note", [""])[0].replace("\r\n", "\n").replace("\r", "\n")
    if len(note) > NOTE_LIMIT:
        raise Refused(HTTPStatus.BAD_REQUEST, f"The note is longer than {NOTE_LIMIT:,} characters. Nothing was "
                                               "saved.")
    return verdict, kind, note


class ReviewHandler(BaseHTTPRequestHandler):
    server: ReviewHTTPServer
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
            self._send(refused.status, page.message_page("seam review", refused.text))
        except UserError as exc:  # the answer could not be written (a full disk): say so, loudly
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, page.message_page("seam review: NOT saved", str(exc)))

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
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")


def _number(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else None


class ReviewHTTPServer(ThreadingHTTPServer):
    """The page's server on 127.0.0.1:`port`, for one session (a `ReviewSession`, or any object with the
    members the handler uses: see the module docstring)."""

    daemon_threads = True

    def __init__(self, session: ReviewSession, port: int) -> None:
        self.session = session
        try:
            super().__init__((HOST, port), ReviewHandler)
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
        import sys

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
