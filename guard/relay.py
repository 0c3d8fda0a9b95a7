"""One request through `seam.py guard serve` (`guard.proxy`): read it, mark it, forward it, relay the answer.

`GuardHandler` serves one client connection for a `guard.proxy.GuardServer`, whose `settings` (the upstream,
the guard's options, the bounds) and `counts` it uses. A request's body is read whole (with a Content-Length,
or chunked: a chunked body is read within the same --max-body bound and forwarded with a Content-Length), the
guard decides (`guard.chat`; any exception there forwards the body unmarked: it fails open), and the request
goes to the upstream on a connection kept for the client connection's next request (`guard.upstream`, which
also makes an upstream not reached a 502 or 504, answered here like a refusal). The response's head is
written as soon as it is read and its body relayed as it comes (`read1`), with the upstream's Content-Length
or in chunks, so a stream reaches the client event by event.

A request whose header lines do not all read as headers (`http.client.parse_headers` drops a line such as
"X-Note : y" and every line after it, Content-Length included) is refused, its connection closed, so that its
body is never read as a next request; so is a GET or HEAD of the stats that declares a body. The proxy's own
answers (refusals, the stats) say `X-Seam-Guard: not-marked` with the reason "refused" or "not forwarded".
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING

from guard import chat
from guard.upstream import UpstreamConnection, UpstreamFailed, forwardable

if TYPE_CHECKING:
    from guard.proxy import GuardServer

STATS_PATH = "/_guard/stats"  # the proxy's own counts, never forwarded
CHUNK = 64 * 1024
LINGER_S = 2.0  # after refusing a body unread, how long what the client still sends is read and dropped
TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # a header name
REFUSED = [("X-Seam-Guard", "not-marked"), ("X-Seam-Guard-Reason", "refused")]  # on the proxy's own refusals
GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)  # the client went away


class Refused(Exception):
    """A request the proxy answers itself (never forwarded): its status and what to say."""

    def __init__(self, status: int, message: str, kind: str = "guard_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind


def error_body(message: str, kind: str) -> bytes:
    """An OpenAI-style error body, which OpenAI and Anthropic clients both show.

    >>> error_body("seam guard: x", "guard_upstream_error")
    b'{"error":{"message":"seam guard: x","type":"guard_upstream_error"}}'
    """
    return json.dumps({"error": {"message": message, "type": kind}}, separators=(",", ":")).encode("utf-8")


class GuardHandler(BaseHTTPRequestHandler):
    server: GuardServer
    protocol_version = "HTTP/1.1"  # keep-alive and chunked responses to clients that speak it
    server_version = "seam-guard"
    sys_version = ""

    def setup(self) -> None:
        self.timeout = self.server.settings.client_timeout  # each read from the client times out
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # a stream's events go at once
        settings = self.server.settings
        self.upstream = UpstreamConnection(settings.upstream, settings.upstream_timeout)  # kept across requests

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.upstream.drop()

    def handle(self) -> None:
        """Serve the connection; a client that goes away mid-request is let go, counted, quietly. (One too slow
        is dropped by `handle_one_request`, which catches every TimeoutError; `_serve` and `parse_request`
        count it.)"""
        try:
            super().handle()
        except GONE:
            self.server.counts.add("client_disconnects")
            self.close_connection = True

    def parse_request(self) -> bool:
        try:
            parsed = super().parse_request()
        except TimeoutError:  # the headers did not come (a request line that did not is an idle connection)
            self.server.counts.add("client_timeouts")
            raise
        if parsed and self._malformed_headers():
            self._begin()
            self.server.counts.add("requests")
            self.server.counts.add("refused")
            self._refuse(Refused(400, "seam guard: a header line that is not a header (such as a space before "
                                      "its colon)"))
            self._log()
            return False
        return parsed

    def _malformed_headers(self) -> bool:
        """Whether a header line was dropped while reading: the headers after it (Content-Length too) are lost."""
        return bool(self.headers.defects) or bool(self.headers.get_payload())

    def log_message(self, format, *args):  # noqa: A002 (the base class's name): one line per request, our own
        pass

    def send_error(self, code, message=None, explain=None) -> None:
        """http.server's own refusals (a malformed request line, headers too long or too many, an unknown
        method) as the proxy's: a JSON error body, counted, logged, the connection closed."""
        self._begin()
        self.server.counts.add("requests")
        self.server.counts.add("refused")
        self.close_connection = True
        said = message or http.client.responses.get(code, "the request could not be read")
        self._answer(code, error_body(f"seam guard: {said}", "guard_request_error"), "application/json")
        self._log()

    def handle_expect_100(self) -> bool:
        """A body too large is refused before the client sends it (a malformed length, once it is sent; malformed
        headers by `parse_request`, without a 100 Continue)."""
        if self._malformed_headers():
            return True
        try:
            too_large = self._declared_length() > self.server.settings.max_body
        except Refused:
            too_large = False
        if not too_large:
            return super().handle_expect_100()
        self._begin()
        self.server.counts.add("requests")
        self.server.counts.add("refused")
        self._refuse(Refused(413, self._too_large()))
        self._log()
        return False

    def do_GET(self):  # noqa: N802 (http.server's naming)
        with self.server.busy:
            self._serve()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET  # noqa: N815

    # ------------------------------------------------------------ one request

    def _begin(self) -> None:
        """What the request's log line gives, before anything is known."""
        self._started, self._sent, self._returned = time.monotonic(), 0, 0
        self._body_size, self._status, self._guard = 0, 0, "-"
        if self.request_version == "HTTP/1.0":
            self.close_connection = True  # no keep-alive, no chunks: the response ends with the connection

    def _serve(self) -> None:
        self._begin()
        try:
            if self.path.split("?", 1)[0] == STATS_PATH and self.command in ("GET", "HEAD"):
                if self._declared_length() or "Transfer-Encoding" in self.headers:  # its body is never read
                    raise Refused(400, f"seam guard: a request for {STATS_PATH} with a body")
                self._answer(200, json.dumps(self.server.counts.as_dict()).encode("utf-8"), "application/json",
                             [("X-Seam-Guard", "not-marked"), ("X-Seam-Guard-Reason", "not forwarded")])
                self._log()
                return
            if not self.path.startswith("/") or not self.path.isascii() or not self.path.isprintable():
                raise Refused(400, "seam guard: expected a request for a path such as /v1/chat/completions "
                                   "(this proxy forwards to its --upstream only)")
            if not all(TOKEN.fullmatch(name) for name in self.headers.keys()):
                raise Refused(400, "seam guard: a header name that is not an HTTP token")
            body = self._read_body()  # a client gone here is counted by `handle`
        except TimeoutError:
            self.server.counts.add("client_timeouts")
            raise
        except Refused as refused:
            self.server.counts.add("requests")
            self.server.counts.add("refused")
            self._refuse(refused)
            self._log()
            return
        self.server.counts.add("requests")
        self._body_size = len(body)
        send, verdict = self._decide(body)
        self._forward(send, verdict, has_body=bool(body) or self._declares_body())
        self._log()

    def _declared_length(self) -> int:
        values = {value.strip() for value in self.headers.get_all("Content-Length") or []}
        if not values:
            return 0
        value = values.pop()
        if values or not value.isascii() or not value.isdigit():
            raise Refused(400, "seam guard: the request's Content-Length is not one whole number")
        return int(value)

    def _declares_body(self) -> bool:
        return "Content-Length" in self.headers or "Transfer-Encoding" in self.headers

    def _too_large(self) -> str:
        return (f"seam guard: the request body is larger than the proxy takes (--max-body "
                f"{self.server.settings.max_body:,} bytes)")

    def _read_body(self) -> bytes:
        codings = [c.strip().lower() for v in self.headers.get_all("Transfer-Encoding") or [] for c in v.split(",")]
        if codings:
            if "Content-Length" in self.headers:
                raise Refused(400, "seam guard: a request with both Content-Length and Transfer-Encoding")
            if codings != ["chunked"]:
                raise Refused(501, "seam guard: a request's Transfer-Encoding can only be chunked")
            return self._read_chunked()
        length = self._declared_length()
        if length > self.server.settings.max_body:
            raise Refused(413, self._too_large())
        body = self.rfile.read(length)
        if len(body) < length:
            raise ConnectionResetError("the client closed the connection mid-body")
        return body

    def _read_chunked(self) -> bytes:
        """A chunked body, within --max-body; its trailer fields are read and dropped."""
        body = bytearray()
        while True:
            line = self.rfile.readline(1024)
            size = line.split(b";", 1)[0].strip()
            if not line.endswith(b"\n") or not size or size.strip(b"0123456789abcdefABCDEF"):
                if not line:
                    raise ConnectionResetError("the client closed the connection mid-body")
                raise Refused(400, "seam guard: a malformed chunked request body")
            length = int(size, 16)
            if len(body) + length > self.server.settings.max_body:
                raise Refused(413, self._too_large())
            if length == 0:
                break
            chunk = self.rfile.read(length)
            if len(chunk) < length or self.rfile.readline(3).rstrip(b"\r\n"):
                raise Refused(400, "seam guard: a malformed chunked request body")
            body += chunk
        for _ in range(100):  # trailer fields, then a blank line
            if self.rfile.readline(65537).strip() == b"":
                break
        return bytes(body)

    def _decide(self, body: bytes) -> tuple[bytes, tuple[str, str | None]]:
        """The body to forward and (X-Seam-Guard, its reason); the guard failing forwards the body unmarked."""
        counts = self.server.counts
        if not chat.is_chat_request(self.command, self.path):
            counts.add("not_marked", "not a chat request")
            return body, ("not-marked", "not a chat request")
        if self.headers.get("Content-Encoding", "identity").strip().lower() not in ("", "identity"):
            counts.add("not_marked", "compressed body")
            return body, ("not-marked", "compressed body")
        try:
            decided = chat.mark_body(body, self.server.settings.options)
        except Exception:  # fail open: whatever went wrong, the request goes as it came
            counts.add("errors")
            return body, ("error", "the guard failed; forwarded unmarked")
        if decided.marked:
            counts.add("marked")
            return decided.body, ("marked", None)
        counts.add("not_marked", decided.reason)
        return body, ("not-marked", decided.reason)

    # ------------------------------------------------------------ the upstream

    def _forward(self, body: bytes, verdict: tuple[str, str | None], *, has_body: bool) -> None:
        self._guard, self._sent = verdict[0], len(body)
        extra = [("X-Seam-Guard", verdict[0])] + ([("X-Seam-Guard-Reason", verdict[1])] if verdict[1] else [])
        try:
            response = self.upstream.ask(self.command, self.path, self.headers.items(), body, has_body)
        except UpstreamFailed as failed:  # answered like a refusal, after the request's body was read
            self.server.counts.add("upstream_failures")
            self._refuse(Refused(failed.status, failed.message, "guard_upstream_error"), extra, body_read=True)
            return
        self._relay(response, extra)

    def _relay(self, response: http.client.HTTPResponse, extra: list) -> None:
        """The response's head at once, then its body as it is read: with the upstream's Content-Length, else
        chunked (or, to an HTTP/1.0 client, until the connection closes)."""
        self._status = response.status
        headers = forwardable(response.getheaders())
        no_body = self.command == "HEAD" or response.status in (204, 304) or response.status < 200
        if no_body:
            framing = "none"
            headers += [("Content-Length", v) for v in response.msg.get_all("Content-Length") or [] if v.strip()][:1]
        elif response.length is not None:
            framing = "length"
            headers.append(("Content-Length", str(response.length)))
        elif self.request_version != "HTTP/1.0":
            framing = "chunked"
            headers.append(("Transfer-Encoding", "chunked"))
        else:
            framing, self.close_connection = "close", True
        try:
            self._write_head(response.status, response.reason, headers + extra)
            while not no_body:
                try:
                    data = response.read1(CHUNK)
                except (OSError, http.client.HTTPException):
                    data = None
                if data is None or (not data and framing == "length" and response.length):
                    self.server.counts.add("upstream_failures")  # cut short or too slow: cut the client too
                    self.upstream.drop()
                    self.close_connection = True
                    return
                if not data:
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if framing == "chunked" else data)
                self._returned += len(data)
            if framing == "chunked":
                self.wfile.write(b"0\r\n\r\n")
            response.close()  # read to its end: the upstream connection serves the next request
        except GONE:
            self.server.counts.add("client_disconnects")
            self.upstream.drop()  # stop the upstream generating for nobody
            self.close_connection = True

    # ------------------------------------------------------------ answers of its own

    def _write_head(self, status: int, reason: str, headers: list) -> None:
        lines = [f"HTTP/1.1 {status} {reason.replace(chr(13), ' ').replace(chr(10), ' ')}"]
        lines += [f"{name}: {value}" for name, value in headers]
        if self.close_connection:
            lines.append("Connection: close")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace"))

    def _answer(self, status: int, data: bytes, kind: str, extra: list | None = None) -> None:
        self._status, self._returned = status, len(data)
        self._write_head(status, http.client.responses.get(status, ""),
                         [("Content-Type", kind), ("Content-Length", str(len(data))),
                          *(REFUSED if extra is None else extra)])
        if getattr(self, "command", None) != "HEAD":
            self.wfile.write(data)

    def _refuse(self, refused: Refused, extra: list | None = None, *, body_read: bool = False) -> None:
        """Answer with a JSON error. A request whose body was not read ends its connection: what the client still
        sends is read and dropped for up to LINGER_S, so that it reads the answer rather than a reset."""
        if body_read:
            self._answer(refused.status, error_body(refused.message, refused.kind), "application/json", extra)
            return
        self.close_connection = True
        self._answer(refused.status, error_body(refused.message, refused.kind), "application/json", extra)
        try:
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(LINGER_S)
            deadline = time.monotonic() + LINGER_S
            while time.monotonic() < deadline and self.connection.recv(CHUNK):
                pass
        except OSError:
            pass

    def _log(self) -> None:
        path = getattr(self, "path", "").split("?", 1)[0]
        if not path.startswith("/"):  # an absolute URL could hold a user and password: not written
            path = "(not a path)"
        path = (path if path.isascii() and path.isprintable() else path.encode("unicode_escape").decode("ascii"))
        path = path[:200]
        method = getattr(self, "command", None) or "-"
        line = (f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {method} {path} {self._status} {self._guard} "
                f"request {self._body_size:,} B (sent {self._sent:,} B) response {self._returned:,} B "
                f"{time.monotonic() - self._started:.3f} s\n")
        self.server.write_log(line)

