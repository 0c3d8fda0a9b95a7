"""Test support: a real HTTP server on 127.0.0.1 that speaks the three providers' formats, with scripted faults.

The runner tests import `serve` and the config helpers below from here (the
fake's own tests are tests/test_fakeserver.py; requests to send it are in
support/samples.py). The server answers by path
(/chat/completions: OpenAI, /messages: Anthropic, :generateContent: Gemini) and
by a per-message script: the k-th time a message arrives it gets the k-th
behaviour of its script ("ok" once the script runs out). It records every
request it receives (path, headers, raw body, arrival time) so tests can check
exactly what was sent, and when.

Behaviours (a script step is "name" or "name:arg"): ok, empty, truncated,
filter, bare, drop, slow[:s], trickle:s, 429[:seconds|date], any other status
code (its error body echoes the credentials received; ":N" puts N filler
characters before them, ":u" writes them as \\uXXXX escapes), malformed,
shape, say:TEXT (the output is TEXT, for judges), and replies that are valid HTTP but hostile JSON: echo (the output
echoes the credentials), echo-u (the same, as \\uXXXX escapes), split (the
key cut in two: the first half ends the output, the second is in another
field), split-u (the same, as \\uXXXX escapes), surrogate (a
lone surrogate escape in the output), deep:N (an extra field nested N levels
deep), bigint (an integer of 5,000 digits), nan and inf (non-finite numbers);
echo-all (the output repeats every header received, "name: value; ...") and
fault-all (HTTP 502 whose error body lists them; ":u" as \\uXXXX escapes), for
headers from the config.
A query string (Azure's ?api-version=) does not change the routing; it is kept
in the recorded "path".
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


def edited(message: str) -> str:
    """The fake model's edit: recognisable, and keeps the message's edges (white space included)."""
    return f"EDITED<{message}>"


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, script: dict | None, delay_s: float, slow_s: float):
        super().__init__(("127.0.0.1", 0), Handler)
        self.script = script or {}
        self.delay_s = delay_s
        self.slow_s = slow_s
        self.lock = threading.Lock()
        self.seen: dict[str, int] = {}
        self.received: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.trickled = 0  # bytes the "trickle" behaviour started to send

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request, client_address):  # a client that timed out and left: expected here
        pass

    def behaviour(self, message: str) -> str:
        with self.lock:
            count = self.seen.get(message, 0)
            self.seen[message] = count + 1
        steps = self.script.get(message, [])
        return steps[count] if count < len(steps) else "ok"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeServer

    def log_message(self, *args):
        pass

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        route = urlsplit(self.path).path  # a query (Azure's ?api-version=) is recorded in "path", not routed on
        kind = ("openai" if route.endswith("/chat/completions") else
                "anthropic" if route.endswith("/messages") else
                "gemini" if route.endswith(":generateContent") else None)
        if kind is None:  # no such endpoint (a batch API's /files, say): 404, whatever the body, as servers do
            return self._send(404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})
        body = json.loads(raw)
        message = _message(kind, body)
        server = self.server
        with server.lock:
            server.received.append({"path": self.path, "headers": dict(self.headers), "raw": raw,
                                    "body": body, "kind": kind, "at": time.time()})
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
        try:
            self._answer(kind, body, message, server.behaviour(message))
        finally:
            with server.lock:
                server.in_flight -= 1

    def _answer(self, kind, body, message, behaviour):
        if self.server.delay_s:
            time.sleep(self.server.delay_s)
        name, _, arg = behaviour.partition(":")
        if kind is None:
            return self._send(404, {"error": "no such endpoint"})
        if name == "drop":
            self.close_connection = True
            return
        if name == "slow":
            time.sleep(float(arg or self.server.slow_s))
            name = "ok"
        if name == "trickle":  # a whole, valid reply, one byte every `arg` seconds
            return self._trickle(json.dumps(RESPONSES[kind](body, message, "ok")).encode(), float(arg))
        if name == "429":
            retry_after = formatdate(time.time() + 1, usegmt=True) if arg == "date" else (arg or "0")
            return self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": retry_after})
        key = (self.headers.get("Authorization") or self.headers.get("x-api-key")
               or self.headers.get("x-goog-api-key"))
        if name in ("echo-all", "fault-all"):  # every header received, as some gateways' errors and logs show them
            every = "; ".join(f"{header}: {value}" for header, value in self.headers.items())
            if name == "fault-all":
                return self._send_raw(502, _fill({"error": {"message": f"gateway error; headers {SLOT}"}}, every,
                                                 escaped=arg == "u"))
            payload = RESPONSES[kind](body, message, "ok")
            _replace_text(payload, edited(message), f"{edited(message)} headers {SLOT}")
            return self._send_raw(200, _fill(payload, every, escaped=False))
        if name.isdigit():
            # error bodies echo the credentials the client sent, as some real servers do, to test redaction
            filler = "." * int(arg) if arg.isdigit() else ""
            payload = {"error": {"message": f"fault {name}; {filler}credentials {SLOT}"}}
            return self._send_raw(int(name), _fill(payload, key, escaped=arg == "u"))
        if name in ("echo", "echo-u"):  # a model that repeats the credentials in its output
            payload = RESPONSES[kind](body, message, "ok")
            _replace_text(payload, edited(message), f"{edited(message)} credentials {SLOT}")
            return self._send_raw(200, _fill(payload, key, escaped=name == "echo-u"))
        if name in ("split", "split-u"):  # a server that cuts the key in two, so that neither half is the key
            raw = str(key).removeprefix("Bearer ")
            half = len(raw) // 2
            payload = RESPONSES[kind](body, message, "ok")
            _replace_text(payload, edited(message), f"{edited(message)}{SLOT}")
            payload["extra"] = {"note": SECOND_SLOT}
            escaped = name == "split-u"
            text = _fill(payload, raw[:half], escaped=escaped).decode()
            return self._send_raw(200, text.replace(SECOND_SLOT, _spelled(raw[half:], escaped=escaped)).encode())
        if name in HOSTILE:
            payload = RESPONSES[kind](body, message, "ok")
            marker = "@@HOSTILE@@"
            if name == "surrogate":
                _replace_text(payload, edited(message), f"{edited(message)}{marker}")
                return self._send_raw(200, json.dumps(payload).replace(marker, "\\udc80").encode())
            payload["extra"] = marker
            return self._send_raw(200, json.dumps(payload).replace(json.dumps(marker), HOSTILE[name](arg)).encode())
        if name == "say":  # a model that answers TEXT (a judge's verdict), whatever it was asked
            payload = RESPONSES[kind](body, message, "ok")
            _replace_text(payload, edited(message), arg)
            return self._send(200, payload)
        if name == "malformed":
            return self._send_raw(200, b'{"choices": [{"message": ')
        if name == "shape":
            return self._send(200, {"unexpected": True})
        return self._send(200, RESPONSES[kind](body, message, name))

    def _trickle(self, data, interval_s):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.flush()
        try:
            for index in range(len(data)):
                with self.server.lock:
                    self.server.trickled += 1  # counted before the byte goes out
                self.wfile.write(data[index:index + 1])
                self.wfile.flush()
                time.sleep(interval_s)
        except OSError:  # the client gave up and closed the connection
            self.close_connection = True

    def _send(self, status, payload, headers=None):
        self._send_raw(status, json.dumps(payload).encode(), headers)

    def _send_raw(self, status, data, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


SLOT = "@@CREDENTIALS@@"
SECOND_SLOT = "@@SECOND-HALF@@"
HOSTILE = {  # behaviour -> the JSON text put in the reply's "extra" field (not for surrogate)
    "surrogate": None,
    "deep": lambda arg: "[" * int(arg or 50_000) + "]" * int(arg or 50_000),
    "bigint": lambda arg: "7" * 5000,
    "nan": lambda arg: '{"score": NaN}',
    "inf": lambda arg: '{"score": 1e400, "low": -Infinity}',
}


def _fill(payload, key, *, escaped: bool) -> bytes:
    """The payload as JSON with SLOT replaced by the credentials, JSON-escaped or as \\uXXXX escapes."""
    return json.dumps(payload).replace(SLOT, _spelled(str(key), escaped=escaped)).encode()


def _spelled(text: str, *, escaped: bool) -> str:
    """`text` inside a JSON string: JSON-escaped, or every character as a \\uXXXX escape."""
    return "".join(f"\\u{ord(c):04x}" for c in text) if escaped else json.dumps(text)[1:-1]


def _replace_text(value, old, new):
    """Replace the string `old` wherever it is a value inside `value` (the reply's output text)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in list(items):
        if v == old:
            value[k] = new
        else:
            _replace_text(v, old, new)


def _message(kind, body):
    """The text the fake model edits: the user's message. In a later turn (a conversation with an assistant turn),
    its own last reply with the last user message after it, as a model that takes the follow-up, and any remark
    after it, into the text it returns; a system prompt is not edited."""
    if kind == "gemini":
        turns = [("assistant" if turn.get("role") == "model" else "user", turn["parts"][0]["text"])
                 for turn in body["contents"]]
    elif kind in ("openai", "anthropic"):
        turns = [(turn["role"], turn["content"]) for turn in body["messages"] if turn.get("role") != "system"]
    else:
        return ""
    replies = [text for role, text in turns if role == "assistant"]
    return turns[-1][1] if not replies else f"{replies[-1]}\n{turns[-1][1]}"


def _openai(body, message, name):
    text = {"empty": "", "truncated": edited(message)[:5], "filter": ""}.get(name, edited(message))
    finish = {"truncated": "length", "filter": "content_filter"}.get(name, "stop")
    response = {"id": "chatcmpl-1", "object": "chat.completion", "model": f"served-{body['model']}",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
    if name == "bare":  # a local server: no usage, model reported as a file path
        del response["usage"]
        response["model"] = "/models/local-model-q4.gguf"
    return response


def _anthropic(body, message, name):
    blocks = [{"type": "thinking", "thinking": "hmm", "signature": "x"},
              {"type": "text", "text": edited(message)[:5] if name == "truncated" else edited(message)}]
    if name in ("empty", "filter"):
        blocks = []
    stop = {"truncated": "max_tokens", "filter": "refusal"}.get(name, "end_turn")
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": f"served-{body['model']}",
            "content": blocks, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


def _gemini(body, message, name):
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    if name == "filter":
        return {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": usage,
                "modelVersion": "gemini-served-001"}
    text = {"empty": "", "truncated": edited(message)[:5]}.get(name, edited(message))
    finish = "MAX_TOKENS" if name == "truncated" else "STOP"
    parts = [{"text": "thinking...", "thought": True}, {"text": text}]
    candidate = {"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}
    return {"candidates": [candidate],
            "usageMetadata": usage, "modelVersion": "gemini-served-001", "responseId": "resp-1"}


RESPONSES = {"openai": _openai, "anthropic": _anthropic, "gemini": _gemini}
BASE_PATHS = {"openai": "/v1", "anthropic": "/v1", "gemini": "/v1beta"}


@contextlib.contextmanager
def serve(script: dict | None = None, *, delay_s: float = 0.0, slow_s: float = 2.0):
    """Start a fake server for the duration of a `with` block."""
    server = FakeServer(script, delay_s, slow_s)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


# --- helpers for the other runner tests ----------------------------------------------------------

def toml_text(keys: dict) -> str:
    """A TOML file from top-level keys and tables (enough for model configs)."""
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v)
        return repr(v)

    lines, tables = [], []
    for key, v in keys.items():
        if isinstance(v, dict):
            tables.append((key, v))
        else:
            lines.append(f"{key} = {value(v)}")

    def table(name, items):
        out = [f"[{name}]"]
        nested = []
        for key, v in items.items():
            if isinstance(v, dict):
                nested.append((f"{name}.{key}", v))
            else:
                out.append(f"{key} = {value(v)}")
        for sub in nested:
            out.extend(table(*sub))
        return out

    for name, items in tables:
        lines.extend(table(name, items))
    return "\n".join(lines) + "\n"


def config_keys(server, provider: str = "openai", **overrides) -> dict:
    keys = {"name": f"fake-{provider}", "provider": provider, "model": "fake-model",
            "base_url": server.url + BASE_PATHS[provider], "temperature": 0.0, "max_tokens": 256,
            "timeout_s": 5, "concurrency": 2, "max_retries": 3}
    keys.update(overrides)
    return {key: value for key, value in keys.items() if value is not None}


def write_config(path, server, provider: str = "openai", **overrides):
    """Write a model config for the fake server and load it."""
    from runner.config import load_config

    path.write_text(toml_text(config_keys(server, provider, **overrides)), encoding="utf-8")
    return load_config(path)
