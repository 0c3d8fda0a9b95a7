"""One HTTP POST, reduced to what the retry logic and the trace need.

Nothing here raises for network trouble: a timeout or a dropped connection is
an `Exchange` with `error` set, so every attempt, good or bad, becomes a row in
the trace's attempt history. `timeout_s` bounds both the wait for any byte and
the whole response: a server that trickles bytes is cut off at the first byte
after `timeout_s` (so within about twice `timeout_s` in all).

A body larger than `MAX_BODY_BYTES` (decoded) is not read further: the
exchange is marked `too_large` and its request fails, not retried, since the
server would send it again. A reply text within it is far longer than a trace
keeps anyway (`runner.ask.shorten`), so nothing a trace could hold is lost, and a
run's memory stays bounded whatever a server sends.

A connection refused, a host name that does not resolve, no route to the host,
or no answer to the connection attempt within `CONNECT_TIMEOUT_S` (packets
dropped: a firewall, a wrong address or port) is an error like any dropped
connection, with `unreachable` saying which: before any answer came from the
server, that is a wrong `base_url` or a server not running, and the run stops at
once (`runner.ask`). A connection takes milliseconds once made; the connect
timeout is therefore short, and the config's `timeout_s` bounds the answer.

A request that cannot even be built (an invalid URL or header, which the
config check should have refused) is an `Exchange` marked `fatal`: it would
fail the same way at every attempt and for every request. Error texts are
kept whole here: the caller redacts the key before it cuts them short
(`runner.ask`), so that a key is never cut in half and half-redacted.
"""

from __future__ import annotations

import errno
import socket
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from runner import RUNNER_VERSION

USER_AGENT = f"seam-runner/{RUNNER_VERSION}"
CHUNK_BYTES = 1 << 16
# The most of a response body read: a reply text of MAX_OUTPUT_CHARS, even with every character a 12-byte JSON
# escape, and the rest of a provider's response, fit well within it.
MAX_BODY_BYTES = 32 << 20
# The longest wait for a connection to be made (or `timeout_s`, if shorter): far above any reachable server's
# (milliseconds), and below Linux's own give-up of about two minutes for a host that drops the packets.
CONNECT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Exchange:
    started_at: str
    latency_s: float
    status: int | None
    retry_after: str | None
    body: bytes | None
    error: str | None
    fatal: bool = False  # the request could not be sent at all (invalid URL or header): never retried
    too_large: bool = False  # the body exceeded MAX_BODY_BYTES and was not read further: fails, never retried
    unreachable: str | None = None  # no connection was made: "connection refused", "unknown host", ...


def utc_now() -> str:
    """Wall-clock time for the trace, ISO 8601 in UTC with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def post(session, url: str, headers: dict, data: bytes, timeout_s: float) -> Exchange:
    import requests

    started_at = utc_now()
    start = time.monotonic()

    def done(**fields) -> Exchange:
        return Exchange(started_at=started_at, latency_s=round(time.monotonic() - start, 6), **fields)

    import urllib3

    try:
        with session.post(url, headers={"User-Agent": USER_AGENT, **headers}, data=data,
                          timeout=(min(timeout_s, CONNECT_TIMEOUT_S), timeout_s), stream=True,
                          allow_redirects=False) as response:
            chunks, size = [], 0
            for chunk in _arriving_chunks(response):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    return done(status=response.status_code, retry_after=response.headers.get("Retry-After"),
                                body=None, error=f"the response is larger than {MAX_BODY_BYTES:,} bytes, more "
                                                 "than the runner reads; not read further", too_large=True)
                if time.monotonic() - start > timeout_s:
                    return done(status=None, retry_after=None, body=None,
                                error=f"timed out: the response took longer than {timeout_s:g} s")
            return done(status=response.status_code, retry_after=response.headers.get("Retry-After"),
                        body=b"".join(chunks), error=None)
    except (requests.exceptions.InvalidURL, requests.exceptions.InvalidHeader, requests.exceptions.InvalidSchema,
            requests.exceptions.MissingSchema, urllib3.exceptions.LocationValueError, UnicodeEncodeError) as exc:
        return done(status=None, retry_after=None, body=None, error=f"cannot send the request: {_text(exc)}",
                    fatal=True)
    except (requests.exceptions.Timeout, requests.exceptions.ConnectionError,
            urllib3.exceptions.ReadTimeoutError) as exc:
        # urllib3 reports a read timeout inside ConnectionError when it happens mid-body.
        timed_out = (isinstance(exc, requests.exceptions.Timeout | urllib3.exceptions.ReadTimeoutError)
                     or "timed out" in str(exc).lower())
        kind = "timed out" if timed_out else "connection error"
        if isinstance(exc, requests.exceptions.ConnectTimeout) and not isinstance(exc, requests.exceptions.ProxyError):
            why = (f"no answer to the connection attempt within {min(timeout_s, CONNECT_TIMEOUT_S):g} s: the "
                   "packets are dropped (a firewall, or a wrong address or port)")
        else:
            why = None if timed_out else unreachable(exc)
        return done(status=None, retry_after=None, body=None, error=f"{kind}: {_text(exc)}", unreachable=why)
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError) as exc:
        # e.g. ChunkedEncodingError or IncompleteRead: the body was cut short
        return done(status=None, retry_after=None, body=None, error=f"transfer error: {_text(exc)}")


def unreachable(exc: BaseException) -> str | None:
    """Why no connection could be made at all, read from the exception's causes ("connection refused",
    "unknown host", "no route to host", "network unreachable"), or None (a connection dropped once made, a
    proxy's failure, anything else). `requests` wraps urllib3's error, which wraps the socket's."""
    import requests

    if isinstance(exc, requests.exceptions.ProxyError):  # the proxy's trouble, not base_url's
        return None
    seen, stack = set(), [exc]
    while stack:
        item = stack.pop()
        if item is None or id(item) in seen or len(seen) > 20:
            continue
        seen.add(id(item))
        if isinstance(item, ConnectionRefusedError):
            return "connection refused"
        if isinstance(item, socket.gaierror) or type(item).__name__ == "NameResolutionError":
            return "unknown host (the name does not resolve)"
        if isinstance(item, OSError) and item.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
            return "no route to host" if item.errno == errno.EHOSTUNREACH else "network unreachable"
        stack.extend([getattr(item, "reason", None), item.__cause__, item.__context__,
                      *(arg for arg in getattr(item, "args", ()) if isinstance(arg, BaseException))])
    return None


def _arriving_chunks(response):
    """The (decoded) body in pieces as they arrive, so the caller can check its deadline between them.

    `read1` returns whatever has arrived after at most one socket read, whereas
    `iter_content(n)` first waits for n bytes however slowly they come, so a
    trickling server would hold it far past the deadline.
    """
    raw = response.raw
    if not hasattr(raw, "read1"):  # urllib3 1.x
        yield from response.iter_content(CHUNK_BYTES)
        return
    while chunk := raw.read1(CHUNK_BYTES, decode_content=True):
        yield chunk


def _text(exc: BaseException) -> str:
    """The exception as text, whole: cut only after the key is redacted from it (runner.ask)."""
    return f"{type(exc).__name__}: {exc}"
