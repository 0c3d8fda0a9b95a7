"""`seam.py guard serve`: the guard as an HTTP proxy in front of a model's API (standard library only).

A client points its `base_url` at the proxy; each request goes to the upstream at the same path, after the
upstream URL's own path (`--upstream http://127.0.0.1:8080`: POST /v1/chat/completions goes to
http://127.0.0.1:8080/v1/chat/completions). On its way:

- an OpenAI chat completions or Anthropic Messages request has each of its user messages guarded
  (`guard.chat`: with several text parts, the last text part; earlier turns too, so that they reach the model
  as they did when they were the last); every other request, and a chat request the guard does not mark
  (one above `guard.chat.MAX_GUARDED_BODY` bytes or MAX_GUARDED_CONTAINERS objects and arrays is not even
  read: "too large to guard"), is forwarded with its body byte for byte as received;
- responses come back as they are read, so a stream (SSE) reaches the client event by event; the headers go
  both ways except the hop-by-hop ones (Connection, Keep-Alive, Transfer-Encoding, TE, Trailer, Upgrade,
  Proxy-*, Expect and any the Connection header names), and Host, which is the upstream's own;
- every forwarded response says `X-Seam-Guard: marked | not-marked | error`, with `X-Seam-Guard-Reason` when
  not marked. `error` is a guard that failed: the request went unmarked (fails open) and is counted. The
  proxy's own answers say `not-marked` too: a refusal (400, 413, 431, 501) with the reason `refused`, the
  stats with `not forwarded`;
- GET /_guard/stats (not forwarded) answers the counts as JSON; they are printed as one line on exit.

Bounds: a request whose header lines do not all read as headers gets 400 and its connection closed (its body
is never taken for a next request), as does a request for the stats that declares a body; a request body
above `max_body` bytes gets 413, a chunked request body is read (within the same
bound) and forwarded with a Content-Length, a client that sends nothing for `client_timeout` seconds while
sending its request is dropped, and at most `max_connections` connections are served at once (more wait,
unaccepted, in the listen queue). An upstream that refuses or cannot be reached is a 502, one that sends
nothing for `upstream_timeout` seconds a 504, each with a JSON error body; past the response's headers an
upstream that fails cuts the client's connection, so that a cut response never looks whole. A log line per
request (stderr; `quiet` turns them off) gives the method, the path without its query string, the status,
the X-Seam-Guard value, the sizes and the time: never a header, a body or a key. On exit (Ctrl+C, SIGTERM)
requests in flight get GRACE_S seconds to finish before the counts are printed.

Here: the settings, the counts, the server and `make_server` (tests start it in-process on port 0);
`guard.relay` serves one connection's requests, `guard.upstream` forwards them; `guard.chat` finds and marks
the message in a body.
"""

from __future__ import annotations

import ipaddress
import signal
import socket
import sys
import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from urllib.parse import urlsplit

from common.errors import UserError
from guard.batch import Options, options
from guard.mark import GUARD_VERSION
from guard.relay import GONE, STATS_PATH, GuardHandler

HOST = "127.0.0.1"
MAX_BODY = 32 * 1024 * 1024
CLIENT_TIMEOUT_S = 30.0
UPSTREAM_TIMEOUT_S = 600.0
MAX_CONNECTIONS = 64
GRACE_S = 5.0  # on exit, requests in flight get this long to finish (a stream still going then is cut)


@dataclass(frozen=True)
class Upstream:
    url: str  # as given, without a trailing slash
    scheme: str
    host: str
    port: int
    netloc: str  # the Host header it is sent
    path: str  # put before each request's path ("" or "/v1")


def parse_upstream(text: str) -> Upstream:
    """The upstream URL, or a one-line `UserError` naming --upstream.

    >>> parse_upstream("http://127.0.0.1:8080/v1/").path, parse_upstream("https://api.openai.com").port
    ('/v1', 443)
    """
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if (parts.scheme not in ("http", "https") or not parts.hostname or port in (-1, 0) or parts.username is not None
            or parts.query or parts.fragment or not text.isprintable() or " " in text):
        raise UserError(f"--upstream is {text[:80]!r}: expected http(s)://host[:port][/path], e.g. "
                        "http://127.0.0.1:8080 (a local llama-server) or https://api.openai.com")
    port = port or (443 if parts.scheme == "https" else 80)
    return Upstream(text.rstrip("/"), parts.scheme, parts.hostname, port, parts.netloc, parts.path.rstrip("/"))


@dataclass(frozen=True)
class Settings:
    upstream: Upstream
    options: Options
    max_body: int = MAX_BODY
    client_timeout: float = CLIENT_TIMEOUT_S
    upstream_timeout: float = UPSTREAM_TIMEOUT_S
    max_connections: int = MAX_CONNECTIONS
    quiet: bool = False
    log: object = None  # a text stream for the log lines; None: sys.stderr at the time of writing


@dataclass
class Counts:
    """What the proxy has done: `requests` = marked + not marked + errors + refused (never forwarded)."""

    requests: int = 0
    marked: int = 0
    not_marked: dict = field(default_factory=dict)  # reason -> count
    errors: int = 0  # the guard failed: forwarded unmarked
    refused: int = 0  # answered by the proxy itself, never forwarded (400, 413, 431, 501)
    upstream_failures: int = 0  # 502, 504, or a response cut short
    client_disconnects: int = 0  # the client went away mid-request or mid-response
    client_timeouts: int = 0  # the client was too slow sending its request
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, name: str, reason: str | None = None) -> None:
        with self.lock:
            if name == "not_marked":
                self.not_marked[reason] = self.not_marked.get(reason, 0) + 1
            else:
                setattr(self, name, getattr(self, name) + 1)

    def as_dict(self) -> dict:
        with self.lock:
            return {"requests": self.requests, "marked": self.marked, "not_marked": dict(self.not_marked),
                    "errors": self.errors, "refused": self.refused, "upstream_failures": self.upstream_failures,
                    "client_disconnects": self.client_disconnects, "client_timeouts": self.client_timeouts,
                    "guard_version": GUARD_VERSION}

    def line(self) -> str:
        """The counts in one line.

        >>> counts = Counts(requests=3, marked=1, not_marked={"no seam": 2})
        >>> counts.line()
        '3 requests: 1 marked, 2 not marked (no seam 2), 0 guard errors (forwarded unmarked), 0 refused, ...'
        """
        c = self.as_dict()
        why = ", ".join(f"{reason} {n}" for reason, n in sorted(c["not_marked"].items()))
        return (f"{c['requests']} requests: {c['marked']} marked, {sum(c['not_marked'].values())} not marked"
                f"{f' ({why})' if why else ''}, {c['errors']} guard errors (forwarded unmarked), {c['refused']} "
                f"refused, {c['upstream_failures']} upstream failures, {c['client_disconnects']} client "
                f"disconnects, {c['client_timeouts']} client timeouts")


class GuardServer(ThreadingHTTPServer):
    """The proxy on `host`:`port` (0 picks a free one: `server_port`); `serve_forever` serves it, `stop` stops."""

    daemon_threads = True
    request_queue_size = 128  # connections past --max-connections wait here, unaccepted

    def __init__(self, settings: Settings, host: str, port: int) -> None:
        self.settings = settings
        self.counts = Counts()
        self.stopping = threading.Event()
        self.slots = threading.BoundedSemaphore(settings.max_connections)
        self.log_lock = threading.Lock()
        self.busy = Busy()
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            super().__init__((host, port), GuardHandler)
        except OSError as exc:
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port "
                            "(0 picks a free one)") from None
        upstream = settings.upstream
        if upstream.port == self.server_port and _same_host(upstream.host, host):
            self.server_close()
            raise UserError(f"--upstream {upstream.url} is this proxy itself: expected the model server's URL")

    @property
    def url(self) -> str:
        host = f"[{self.server_address[0]}]" if self.address_family == socket.AF_INET6 else self.server_address[0]
        return f"http://{host}:{self.server_port}"

    def process_request(self, request, client_address) -> None:
        """Serve in a thread while fewer than max_connections are; past that, wait for one to end."""
        while not self.slots.acquire(timeout=0.2):
            if self.stopping.is_set():
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request, client_address) -> None:
        """Never a traceback (it could quote a request): a client gone is nothing, a bug is one line."""
        exc = sys.exc_info()[1]
        if isinstance(exc, GONE):
            return
        tb = sys.exc_info()[2]
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = f" at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb is not None else ""
        self.write_log(f"guard serve: internal error {type(exc).__name__}{where} (a bug in seam; the "
                       "connection was closed)\n", always=True)

    def write_log(self, line: str, *, always: bool = False) -> None:
        if self.settings.quiet and not always:
            return
        with self.log_lock:
            stream = self.settings.log or sys.stderr
            stream.write(line)
            stream.flush()

    def stop(self) -> None:
        """Stop serving (from another thread than `serve_forever`'s) and close the listening socket."""
        self.stopping.set()
        self.shutdown()
        self.server_close()


class Busy:
    """How many requests are in flight (`with busy:` around each), so that an exit can let them finish."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = threading.Condition()

    def __enter__(self) -> None:
        with self.changed:
            self.count += 1

    def __exit__(self, *exc) -> None:
        with self.changed:
            self.count -= 1
            self.changed.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.count == 0, timeout)


def _same_host(a: str, b: str) -> bool:
    loopback = {"localhost", "127.0.0.1", "::1"}
    return a == b or (a in loopback and b in loopback) or (b in ("0.0.0.0", "::") and a in loopback)


def listen_host(text: str) -> tuple[str, str | None]:
    """The address to listen on and a warning line when it is not a loopback address.

    >>> listen_host("::1"), listen_host("localhost")
    (('::1', None), ('127.0.0.1', None))
    """
    if text == "localhost":
        return HOST, None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise UserError(f"--host is {text[:80]!r}: expected an IP address to listen on, such as 127.0.0.1 "
                        "or ::1") from None
    if address.is_loopback:
        return str(address), None
    return str(address), (f"guard serve: warning: listening on {address}, not a loopback address: anyone who "
                          "can reach this machine can send requests through the proxy to the upstream")


def make_server(upstream: str, port: int = 0, *, host: str = HOST, chosen: Options | None = None,
                max_body: int = MAX_BODY, client_timeout: float = CLIENT_TIMEOUT_S,
                upstream_timeout: float = UPSTREAM_TIMEOUT_S, max_connections: int = MAX_CONNECTIONS,
                quiet: bool = False, log=None) -> GuardServer:
    """The proxy, bound (`server.server_port` is its port) but not yet serving: run `serve_forever` in a
    thread and `stop` it, or `serve_until_stopped`."""
    chosen = chosen or options(open_line=None, close_line=None, sentence=None, mitigation=False)
    settings = Settings(parse_upstream(upstream), chosen, max_body, client_timeout, upstream_timeout,
                        max_connections, quiet, log)
    return GuardServer(settings, host, port)


def serve_until_stopped(server: GuardServer) -> None:
    """Say where it listens, serve until Ctrl+C (SIGINT) or SIGTERM, then print the counts in one line.

    SIGINT gets Python's handler explicitly (a process started in the background inherits it ignored), and both
    handlers are in place before the address is printed, so whoever reads it can stop the proxy at once."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    upstream = server.settings.upstream
    try:
        print(f"guard serve: {server.url} -> {upstream.url} (a request for {server.url}/v1/chat/completions goes "
              f"to {upstream.url}/v1/chat/completions); counts at {server.url}{STATS_PATH}; Ctrl+C stops",
              flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping.set()
        server.server_close()
        server.busy.wait_idle(GRACE_S)
        print(f"guard serve: {server.counts.line()}", flush=True)


def _interrupt(signum, frame):
    raise KeyboardInterrupt
