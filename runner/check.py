"""`seam.py run CONFIG --check-connection`: send one real request, once, and say what came back; record nothing.

The request is the first one the run would send (the first selected, when every one is already final in
`--out`), built, authenticated and sent exactly as a run sends it (`[headers]`, `[query]`, the key and the
`[headers_env]` values included), but only once: no retry, no trace row, no note. What came back is one
line on stderr: the HTTP status, the time, and for a 2xx reply whether it is usable, the served model and the
start of the output; for anything else the error as a run would record it (the server's body cut short, the
key and every secret redacted, control characters shown as "?") with the hint a run would stop with. A
connection refused, an unknown host, no route or a connect timeout is the line a run stops with
(`runner.ask.unreachable_message`).

It pays for one request. It checks the synchronous endpoint (`--batch` sends through other endpoints).
"""

from __future__ import annotations

from common.errors import UserError
from common.records import Request
from runner import providers
from runner.apikey import read_secrets, secret_headers
from runner.ask import canonical_body, judge, unreachable_message
from runner.config import ModelConfig
from runner.rows import check_key_not_recorded, named, public_url
from runner.terminal import printable
from runner.transport import post

OUTPUT_SHOWN = 80  # characters of the reply's text quoted


def check_connection(config: ModelConfig, todo: list[Request], selected: list[Request]) -> str:
    """Send the first request of `todo` (else of `selected`) once; the line saying what came back, or a
    UserError saying it when the request got no usable answer."""
    import requests as http

    chosen = (todo or selected or [None])[0]
    if chosen is None:
        raise UserError("--check-connection: no request is selected, so there is nothing to send")
    secrets = read_secrets(config)
    check_key_not_recorded(config, [chosen], secrets)
    provider = providers.get(config.provider)
    url, headers, body = providers.build(provider, config, chosen.conversation)
    headers = {**headers, **secret_headers(provider, config, secrets)}
    with http.Session() as session:
        exchange = post(session, url, headers, canonical_body(body), config.timeout_s)
    asked = f"run: connection check: POST {public_url(url)} ({named(chosen.id)})"
    if exchange.status is None and exchange.unreachable:
        raise UserError(printable(unreachable_message(config, exchange.unreachable), secrets, None))
    verdict = judge(exchange, provider, config, secrets)
    took = f"in {exchange.latency_s:.2f} s"
    if verdict.kind != "done":
        answered = f"answered HTTP {exchange.status} {took}" if exchange.status is not None else f"got no answer {took}"
        retried = " (a run would retry it)" if verdict.kind == "retry" and exchange.status is not None else ""
        raise UserError(printable(f"{asked} {answered}: {verdict.error}{retried}; nothing was recorded", secrets,
                                  None))
    reply = verdict.reply
    output = reply.output or ""
    quoted = printable(output, secrets, OUTPUT_SHOWN)
    state = "a usable reply" if reply.problem is None and verdict.note is None else (
        f"an unusable reply ({reply.problem or verdict.note})")
    return printable(f"{asked} answered HTTP {exchange.status} {took}: {state}; served model "
                     f"{reply.served_model!r}, finish reason {reply.finish_reason!r}, {len(output):,} characters: "
                     f"{quoted!r}; the connection works; nothing was recorded", secrets, None)
