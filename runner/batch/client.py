"""The HTTP calls of a batch API: JSON in, JSON or bytes out, the key sent to `base_url`'s host only.

Every call goes to a URL on the origin of the config's `base_url` (scheme, host and port): a URL
that a provider hands back (Anthropic's `results_url`) and that points anywhere else is refused in
one line before anything is sent to it, so the key never leaves for another host. Redirects are
not followed, for the same reason. A call that meets a dropped connection, a timeout, HTTP 408,
429 or 5xx is tried again with the runner's backoff (Retry-After honoured); any other error is a
`BatchAPIError`, one line naming the call, the status and the start of the body, the key redacted
and control characters shown as "?" (`runner.terminal.printable`: the message is printed as is).

A URL that no parser reads (a bracketed host that is no IP address, "http://[evil]/r") has no
origin, so it is refused like a foreign one, on this run and every rerun that meets it again.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from urllib.parse import quote, urlencode, urlsplit

from common.errors import UserError
from common.plural import plural
from runner.retry import RetryPolicy, is_retryable_status, parse_retry_after, retry_wait_s
from runner.terminal import printable
from runner.transport import USER_AGENT

IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,255}")  # a batch or file id, put into URL paths
MAX_BODY_BYTES = 1 << 30  # a results file of 1,800 replies is a few MB; more than 1 GiB is no reply of ours
SNIPPET = 300


class BatchAPIError(UserError):
    """A batch API call that failed for good."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def identifier(value, what: str) -> str:
    """A batch or file id from a provider's answer, checked before it goes into a URL path.

    >>> identifier("batch_abc123", "batch id"), identifier("batches/x1", "batch name")
    ('batch_abc123', 'batches/x1')
    >>> identifier("../admin", "batch id")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    runner.batch.client.BatchAPIError: the provider's answer holds no usable batch id (got a string of 8 characters, ...
    """
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value) or ".." in value:
        got = f"a string of {len(value)} characters" if isinstance(value, str) else type(value).__name__
        raise BatchAPIError(f"the provider's answer holds no usable {what} (got {got}, not quoted: it could be "
                            "anything)")
    return value


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL, the port filled in from the scheme; ("", "", -1), no origin at all,
    for a URL the parser refuses (a bracketed host that is no IP address, an unclosed bracket).

    >>> origin("https://API.example.com/v1"), origin("http://127.0.0.1:8080/v1")
    (('https', 'api.example.com', 443), ('http', '127.0.0.1', 8080))
    >>> origin("http://[evil]/r"), origin("http://[::1/r")
    (('', '', -1), ('', '', -1))
    """
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
    except ValueError:
        return "", "", -1
    try:
        port = parts.port
    except ValueError:
        port = -1
    return parts.scheme.lower(), (hostname or "").lower(), port or {"https": 443, "http": 80}.get(
        parts.scheme.lower(), -1)


class BatchClient:
    """Calls to one provider's batch API at `base_url`, with the auth headers added to each."""

    def __init__(self, session, base_url: str, auth: dict, api_key, *, timeout_s: float,
                 policy: RetryPolicy | None = None, sleep: Callable[[float], None] = time.sleep,
                 query: dict | None = None):
        self.session = session
        self.base_url = base_url.rstrip("/")
        self.query = urlencode(query, quote_via=quote) if query else ""  # the config's [query], on every call
        self.auth = auth
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.policy = policy or RetryPolicy(max_retries=6)
        self.sleep = sleep

    def url(self, path: str) -> str:
        if self.query:
            path += ("&" if "?" in path else "?") + self.query
        return self.base_url + path

    def check_url(self, url: str, what: str) -> str:
        """`url` if it is on base_url's origin; else a one-line refusal (the key is never sent there)."""
        if not isinstance(url, str) or origin(url) != origin(self.base_url) or not url.startswith(("http://",
                                                                                                   "https://")):
            shown_url = printable(url if isinstance(url, str) else repr(url), self.api_key, 200)
            raise BatchAPIError(f"the provider gave {what} {shown_url}, which is not on {self.base_url}'s host; "
                                "refused: the API key is sent to that host only")
        return url

    def json(self, method: str, url: str, *, body: dict | None = None, data: bytes | None = None,
             content_type: str | None = None, once: bool = False) -> dict:
        """The JSON object a call returns (`once`: see `call`)."""
        raw = self.call(method, url, body=body, data=data, content_type=content_type, once=once)
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise BatchAPIError(f"{method} {self._path(url)}: the answer is not JSON: {self._snippet(raw)}") from None
        if not isinstance(value, dict):
            raise BatchAPIError(f"{method} {self._path(url)}: expected a JSON object, got {type(value).__name__}")
        return value

    def call(self, method: str, url: str, *, body: dict | None = None, data: bytes | None = None,
             content_type: str | None = None, once: bool = False) -> bytes:
        """The body of a 2xx answer, after the retries a transient failure is given; with `once` (a call that
        creates something: a batch made and its answer lost must not be made again), none."""
        import requests

        self.check_url(url, "the URL")
        headers = {"User-Agent": USER_AGENT, **self.auth}
        if body is not None:
            data, content_type = json.dumps(body, ensure_ascii=False).encode("utf-8"), "application/json"
        if content_type:
            headers["Content-Type"] = content_type
        last = ""
        attempts = 1 if once else self.policy.max_retries + 1
        for number in range(attempts):
            retry_after = None
            try:
                with self.session.request(method, url, headers=headers, data=data, stream=True,
                                          timeout=(self.timeout_s, self.timeout_s),
                                          allow_redirects=False) as response:
                    raw = self._read(response, method, url)
                    status, retry_after = response.status_code, response.headers.get("Retry-After")
            except (requests.exceptions.RequestException, OSError) as exc:
                last = printable(f"{type(exc).__name__}: {exc}", self.api_key, SNIPPET)
            else:
                if 200 <= status <= 299:
                    return raw
                last = f"HTTP {status}: {self._snippet(raw)}"
                if not is_retryable_status(status):
                    raise BatchAPIError(f"{method} {self._path(url)}: {last}", status)
            if number < attempts - 1:
                wait = retry_wait_s(self.policy, number + 1, parse_retry_after(retry_after, time.time()), url)
                self.sleep(wait)
        if once:
            raise BatchAPIError(f"{method} {self._path(url)}: no answer ({last}); not tried again, since the provider "
                                "may have acted on it: the next run looks for what it made")
        raise BatchAPIError(f"{method} {self._path(url)}: gave up after {attempts} {plural(attempts, 'attempt')}; "
                            f"last: {last}")

    def _read(self, response, method: str, url: str) -> bytes:
        chunks, size = [], 0
        for chunk in response.iter_content(1 << 16):
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise BatchAPIError(f"{method} {self._path(url)}: the answer is larger than "
                                    f"{MAX_BODY_BYTES >> 20} MiB; refused")
            chunks.append(chunk)
        return b"".join(chunks)

    def _path(self, url: str) -> str:
        """The call's path for a message (a `results_url` on base_url's host may hold anything after it)."""
        return printable(url[len(self.base_url):] if url.startswith(self.base_url) else urlsplit(url).path,
                         self.api_key, SNIPPET)

    def _snippet(self, raw: bytes) -> str:
        return printable(raw.decode("utf-8", errors="replace").strip(), self.api_key, SNIPPET)
