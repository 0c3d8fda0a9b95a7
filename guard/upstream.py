"""The upstream's side of `seam.py guard serve`: the connection a client connection's requests go on through.

`guard.relay` reads a client's request, refuses it or decides it, and relays the answer; what it takes to
reach the model's API is here: the connection to the upstream, kept across the client connection's
keep-alive requests (one the upstream closed while idle is opened again once), the headers that may go
along (`forwardable`, both ways), and what failing to reach it means for the client: an upstream that
refuses or cannot be reached is a 502, one that does not answer in time a 504 (`UpstreamFailed`, which the
handler answers with a JSON error like its own refusals). Apart from the client's side so that every
network failure of the upstream's, and the words for it, is in one place. (The upstream URL itself is
parsed with the other settings, `guard.proxy.parse_upstream`.)
"""

from __future__ import annotations

import http.client
import socket
import ssl
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guard.proxy import Upstream

CONNECT_TIMEOUT_S = 10.0  # connecting to the upstream (at most the upstream timeout): a 502 past it
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "expect",
                        "host", "content-length"})  # the last three: the proxy writes its own


class UpstreamFailed(Exception):
    """The upstream was not reached (502) or did not answer in time (504): the status and what to say."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def forwardable(headers) -> list[tuple[str, str]]:
    """The headers a proxy passes on: all but the hop-by-hop ones (and those the Connection header names),
    line breaks in a folded value made spaces.

    >>> forwardable([("Connection", "close, X-A"), ("X-A", "1"), ("Authorization", "k"), ("Proxy-X", "2")])
    [('Authorization', 'k')]
    """
    named = {token.strip().lower() for name, value in headers if name.lower() == "connection"
             for token in value.split(",")}
    return [(name, value.replace("\r", " ").replace("\n", " ")) for name, value in headers
            if name.lower() not in HOP_BY_HOP and name.lower() not in named
            and not name.lower().startswith("proxy-")]


class UpstreamConnection:
    """The connection to the upstream for one client connection: opened at its first request, kept for the
    next ones, dropped when a response is cut short or the client goes away (so that the upstream stops
    generating for nobody) and when the client connection ends."""

    def __init__(self, upstream: Upstream, timeout_s: float) -> None:
        self.upstream = upstream
        self.timeout_s = timeout_s  # --upstream-timeout: each read from the upstream
        self.connection: http.client.HTTPConnection | None = None

    def ask(self, command: str, path: str, headers, body: bytes, has_body: bool) -> http.client.HTTPResponse:
        """Send the request upstream and read the response's head; a failure is a 502 or 504 `UpstreamFailed`.

        `headers` are the client's: those that may go on go, with the upstream's Host (and a Content-Length
        when the request has a body). The upstream connection is kept for the client connection's next
        request; one the upstream closed while idle is opened again once."""
        upstream = self.upstream
        headers = forwardable(headers) + [("Host", upstream.netloc)]
        if has_body:
            headers.append(("Content-Length", str(len(body))))
        for attempt in (1, 2):
            reused, stage = self.connection is not None and self.connection.sock is not None, "connect"
            try:
                if not reused:
                    self.drop()
                    kind = http.client.HTTPSConnection if upstream.scheme == "https" else http.client.HTTPConnection
                    self.connection = kind(upstream.host, upstream.port,
                                           timeout=min(CONNECT_TIMEOUT_S, self.timeout_s))
                    self.connection.connect()
                    self.connection.sock.settimeout(self.timeout_s)
                stage = "answer"
                self.connection.putrequest(command, upstream.path + path, skip_host=True, skip_accept_encoding=True)
                for name, value in headers:
                    self.connection.putheader(name, value)
                self.connection.endheaders(body if has_body else None)
                return self.connection.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                self.drop()
                if reused and attempt == 1:
                    continue
                raise self._unreachable("closed the connection without answering" if stage == "answer"
                                        else _why(exc)) from None
            except TimeoutError:
                self.drop()
                if stage == "connect":
                    waited = min(CONNECT_TIMEOUT_S, self.timeout_s)
                    raise self._unreachable(f"no connection within {waited:g} s") from None
                raise UpstreamFailed(504, f"seam guard: upstream {upstream.url} did not answer within "
                                          f"{self.timeout_s:g} s (--upstream-timeout)") from None
            except (OSError, http.client.HTTPException) as exc:
                self.drop()
                raise self._unreachable(_why(exc)) from None
        raise AssertionError("unreachable")

    def _unreachable(self, why: str) -> UpstreamFailed:
        return UpstreamFailed(502, f"seam guard: upstream {self.upstream.url} unreachable ({why})")

    def drop(self) -> None:
        """Close the connection (if open): the next request opens a new one."""
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def _why(exc: BaseException) -> str:
    """A failure to reach the upstream in a few words (never the request)."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return "host name not found"
    if isinstance(exc, ssl.SSLError):
        return f"TLS: {exc.reason or type(exc).__name__}"
    if isinstance(exc, http.client.HTTPException):
        return f"not an HTTP answer: {type(exc).__name__}"
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__).lower()
