#!/usr/bin/env python3
"""A local OpenAI-compatible server that answers each SEAM message with the reply a trace file recorded for it.

    python scripts/replay_server.py data/traces/smollm2-135m.jsonl --port 8093

For trying a harness route (docs/HARNESSES.md) on the whole benchmark, offline and in minutes, with real
replies: every POST to a path ending in /chat/completions whose body holds a conversation (one user message, or a
condition's system prompt and earlier turns before it) is answered with the provider's JSON the trace row of that
conversation kept (`response`: text, finish reason, usage, served model, as the model sent them), found by the
conversation's fingerprint, the trace's `message_sha256` (for one user message, the SHA-256 of its text), so a
harness run against it and the kit's runner run against it must give the same trace rows, and the same labels as
the trace's own. A conversation the trace has no reply for (a failed row, or not in the trace) gets HTTP 500 with
an OpenAI-style error naming why; a body that is no conversation (no messages, a role out of place, no text),
400. The request's
parameters are not looked at: the reply is the trace's whatever was asked. Another path is a 404, its body read
and dropped so that the connection serves the next request; a Content-Length that is not a number, 400, and one
over `MAX_BODY`, 413, each closing the connection (its body is not read).

Listens on 127.0.0.1 only (the port printed at start; 0 picks a free one), until Ctrl+C or `kill PID`; one log
line per request to standard error (status and the message's request id, never the text). Used by
scripts/harness_replay_check.py, which runs a harness (inspect_ai, lm-eval or promptfoo) on all 1,800 requests
against it.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MAX_BODY = 8 << 20  # a SEAM request is at most tens of kB


class Replies:
    """The trace's replies by the fingerprint of their conversation (the trace's `message_sha256`)."""

    def __init__(self, trace: Path) -> None:
        from common.traces import read_final

        self.by_sha: dict[str, tuple[str, dict | None]] = {}
        for row in read_final(trace).final.values():
            self.by_sha[row.message_sha256] = (row.id, row.response if row.status != "failed" else None)

    def find(self, conversation) -> tuple[str | None, dict | None]:
        """(request id, reply) of a `common.conversation.Conversation` (a str: one user message)."""
        from common.conversation import Conversation

        if isinstance(conversation, str):
            conversation = Conversation(conversation)
        return self.by_sha.get(conversation.sha256, (None, None))


def conversation_of(body: bytes):
    """The conversation a chat completions body sends, as a `common.conversation.Conversation`: an optional system
    message first, then user and assistant messages alternating from a user message and ending with one, each of
    text (a string, or text parts joined); None for anything else."""
    from common.conversation import Conversation, Turn

    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    messages = data.get("messages") if isinstance(data, dict) else None
    if not (isinstance(messages, list) and messages and all(isinstance(m, dict) for m in messages)):
        return None
    texts = [_text(message.get("content")) for message in messages]
    roles = [message.get("role") for message in messages]
    if None in texts or roles[-1] != "user":
        return None
    system = texts[0] if roles[0] == "system" else None
    start = 0 if system is None else 1
    if not all(role in ("user", "assistant") for role in roles[start:]):
        return None
    try:
        return Conversation(texts[-1], system, tuple(Turn(role, text) for role, text in
                                                     zip(roles[start:-1], texts[start:-1], strict=True)))
    except ValueError:  # the turns do not alternate from a user turn
        return None


def _text(content) -> str | None:
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        content = "".join(str(p.get("text", "")) for p in content)
    return content if isinstance(content, str) else None


def make_server(replies: Replies, port: int, *, log=sys.stderr) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # one line per request below instead (never the message)
            pass

        def do_POST(self):
            text = (self.headers.get("Content-Length") or "0").strip()
            if not text.isascii() or not text.isdigit():  # its body cannot be found: the connection is done
                return self._send(400, {"error": {"message": "Content-Length is not a number"}}, "-", close=True)
            length = int(text)
            if length > MAX_BODY:
                return self._send(413, {"error": {"message": f"a body of more than {MAX_BODY:,} bytes"}}, "-",
                                  close=True)
            body = self.rfile.read(length)  # read whatever the path, so that the next request starts where it should
            if not self.path.split("?")[0].endswith("/chat/completions"):
                return self._send(404, {"error": {"message": "only POST .../chat/completions is served"}}, "-")
            conversation = conversation_of(body)
            if conversation is None:
                return self._send(400, {"error": {"message": "expected a conversation of text messages: a system "
                                                             "message or none, then user and assistant messages "
                                                             "alternating, the last a user message"}}, "-")
            rid, response = replies.find(conversation)
            if response is None:
                why = "the trace's request failed" if rid else "the message is not in the trace"
                return self._send(500, {"error": {"message": f"no reply to replay: {why}"}}, rid or "?")
            return self._send(200, response, rid)

        def _send(self, status: int, payload: dict, rid: str, *, close: bool = False):
            data = json.dumps(payload, ensure_ascii=True).encode("ascii")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(data)
            print(f"replay: {status} {rid}", file=log, flush=True)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    from common.argtypes import port

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="example:\n  python scripts/replay_server.py data/traces/smollm2-135m.jsonl"
                                            " --port 8093\n  # then point a harness or a model config at "
                                            "http://127.0.0.1:8093/v1")
    parser.add_argument("trace", help="the trace file whose replies are served")
    parser.add_argument("--port", type=port, default=0, help="the port (default 0: a free one, printed)")
    args = parser.parse_args(argv)
    replies = Replies(Path(args.trace))
    server = make_server(replies, args.port)
    print(f"replay: serving {len(replies.by_sha):,} replies of {args.trace} at "
          f"http://127.0.0.1:{server.server_address[1]}/v1 (Ctrl+C to stop)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
