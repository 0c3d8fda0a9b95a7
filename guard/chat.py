"""Find and mark the user messages in a chat request's JSON body, for `seam.py guard serve` (`guard.proxy`).

Two request shapes are read, both a JSON object with a `messages` array:

- OpenAI chat completions (POST .../chat/completions, any OpenAI-compatible server);
- Anthropic Messages (POST .../messages, and .../messages/count_tokens so that a count is of what is sent).

EVERY message whose `role` is "user" is guarded, not only the last: the guard is deterministic, so an earlier
turn reaches the model as it did when it was the last one, and the conversation the model sees (and a cached
prompt prefix) stays the same from turn to turn. A message's `content` is a string, or a list of parts where a
text part is {"type": "text", "text": ...}: with several text parts, only the LAST text part is guarded, the one
a typed remark trails (an image or a tool result is no text). The body is marked when any message is; when
none is, the reason is the last user message's. Everything else in the body is kept: other messages (system,
assistant, tools), other fields, key order. A body that is not marked is returned as the very bytes given; a marked one
is the same JSON written again compactly, keys in their order, UTF-8 as is, a lone surrogate as its
"\\uXXXX" escape. Numbers keep their value, not always their spelling (1e5 is written 100000.0); a body that
could not be written back to the same value (a duplicate key, NaN, a number too large for a float) is
passed unmarked with its reason. A body of more than MAX_GUARDED_BODY bytes, or with more than
MAX_GUARDED_CONTAINERS '{' and '[' bytes (an upper bound on its objects and arrays, counted before reading it),
is not read at all: "too large to guard" (reading it would hold the proxy's other requests up).

    >>> from guard.batch import options
    >>> chosen = options(open_line=None, close_line=None, sentence=None, mitigation=False)
    >>> body = b'{"model":"m","messages":[{"role":"user","content":"Fix:\\\\n\\\\nx = 1\\\\ny = 2\\\\nbtw, ok?"}]}'
    >>> decided = mark_body(body, chosen)
    >>> decided.marked, decided.reason
    (True, 'marked')
    >>> print(json.loads(decided.body)["messages"][0]["content"])
    Fix:
    <BLANKLINE>
    -----BEGIN TEXT-----
    x = 1
    y = 2
    -----END TEXT-----
    btw, ok?
    >>> mark_body(b'{"messages": []}', chosen)
    Decided(body=b'{"messages": []}', marked=False, reason='no user message')
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from common.jsonl import LONE_SURROGATE
from guard.batch import Options

# Why a request's body was not marked (X-Seam-Guard-Reason, the counts), besides the guard's own reasons
# (guard.mark.REASONS: no seam, tail is the paste's, already marked, too long). Never any of the text.
REASONS = ("not a chat request", "too large to guard", "not JSON", "not UTF-8", "JSON nested too deeply",
           "number too long", "duplicate key", "non-finite number", "no user message", "no user text")

# A chat body larger than this, or with more '{' and '[' bytes than this, is forwarded unread and unmarked: the
# JSON is read (and each object's keys checked) while holding the GIL, so one huge body would stall every
# request in flight. 4 MiB is over a million tokens of text; 100,000 objects is some 25,000 messages.
MAX_GUARDED_BODY = 4 * 1024 * 1024
MAX_GUARDED_CONTAINERS = 100_000

# Paths (the part after the upstream's own path, query string aside) whose POST bodies are chat requests.
_CHAT_ENDINGS = ("/chat/completions", "/messages", "/messages/count_tokens")

# The marked body: compact, keys in the order read, UTF-8 kept; NaN and infinities refused (`_finite` keeps
# them out when reading, so they never reach it).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class Decided:
    """The body to forward (the bytes given, unless marked), whether it was marked, and why or why not."""

    body: bytes
    marked: bool
    reason: str  # "marked", one of guard.mark.REASONS or one of REASONS


class _Unmarkable(Exception):
    """A body that reads as JSON but could not be written back to the same value: why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def is_chat_request(method: str, path: str) -> bool:
    """Whether a request is one whose body may be marked: a POST to a path ending in /chat/completions,
    /messages or /messages/count_tokens (a trailing slash and the query string aside).

    >>> is_chat_request("POST", "/v1/chat/completions?x=1"), is_chat_request("POST", "/v1/messages/")
    (True, True)
    >>> is_chat_request("GET", "/v1/chat/completions"), is_chat_request("POST", "/v1/completions")
    (False, False)
    """
    return method == "POST" and path.split("?", 1)[0].rstrip("/").endswith(_CHAT_ENDINGS)


def mark_body(body: bytes, chosen: Options) -> Decided:
    """The body with each user message's (last) text guarded, or the body given and why not.

    Raises only on a bug (or a guard that raises): the proxy forwards the body unmarked then (fails open)."""
    if len(body) > MAX_GUARDED_BODY or body.count(b"{") + body.count(b"[") > MAX_GUARDED_CONTAINERS:
        return Decided(body, False, "too large to guard")
    try:
        request = _parse(body)
    except _Unmarkable as refused:
        return Decided(body, False, refused.reason)
    if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
        return Decided(body, False, "not a chat request")
    marked, reason = False, "no user message"
    for message in request["messages"]:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        reason = "no user text"
        content = message.get("content")
        if isinstance(content, str):
            holder, key = message, "content"
        elif isinstance(content, list):
            holder = next((part for part in reversed(content) if isinstance(part, dict)
                           and part.get("type") == "text" and isinstance(part.get("text"), str)), None)
            key = "text"
            if holder is None:
                continue
        else:
            continue
        result = chosen.apply(holder[key])
        reason = result.reason
        if result.marked:
            holder[key], marked = result.message, True
    if not marked:
        return Decided(body, False, reason)
    return Decided(encode(request), True, "marked")


def encode(request) -> bytes:
    r"""A parsed body written again: compact, keys in their order, UTF-8 as is, a lone surrogate escaped.

    >>> encode({"b": "\ud800é", "a": [1, 2.5]})
    b'{"b":"\\ud800\xc3\xa9","a":[1,2.5]}'
    """
    text = _ENCODER.encode(request)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (JSON may spell one, "\ud800"): only ever inside a string
        return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def _parse(body: bytes):
    """The body as JSON (objects as dicts in their key order), or `_Unmarkable` saying why it is not markable."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _Unmarkable("not UTF-8") from None
    try:
        return json.loads(text, object_pairs_hook=_unique, parse_float=_finite, parse_constant=_no_constant)
    except json.JSONDecodeError:
        raise _Unmarkable("not JSON") from None
    except RecursionError:
        raise _Unmarkable("JSON nested too deeply") from None
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
        if "integer string conversion" not in str(exc):
            raise
        raise _Unmarkable("number too long") from None


def _unique(pairs: list) -> dict:
    """An object, refused when a key repeats: written again it would keep only the last value."""
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Unmarkable("duplicate key")
    return found


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # 1e400: written again it would be Infinity, not JSON
        raise _Unmarkable("non-finite number")
    return value


def _no_constant(text: str):
    raise _Unmarkable("non-finite number")  # NaN, Infinity, -Infinity: Python's json reads them, JSON has none
