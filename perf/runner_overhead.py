#!/usr/bin/env python3
"""The runner's own overhead: requests per second against an instant local server, side by side
with a bare `requests.Session` loop making the same requests.

The server (in its own process, so it does not share the client's GIL) answers
every POST at once with a fixed OpenAI-style reply. Whatever separates the two
columns is the runner's cost per request: building the body, judging the reply,
building and appending the trace row, the thread pool. A real model answers in
seconds, so a runner that keeps up with an instant server is never the bottleneck.

    python perf/runner_overhead.py            # concurrency 1, 8, 32; 5 repeats each
    python perf/runner_overhead.py --repeats 3 --requests 200
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import multiprocessing
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUTPUT = "def f(x):\n    return x + 1\n" * 60  # ~1.7 kB, about the size of an edited artifact
REPLY = json.dumps({
    "id": "chatcmpl-perf", "object": "chat.completion", "model": "perf-model",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": OUTPUT}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 400, "completion_tokens": 400, "total_tokens": 800},
}).encode()
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(REPLY)).encode() + b"\r\n\r\n" + REPLY)


def serve(port_pipe, response: bytes = RESPONSE) -> None:
    """An instant HTTP/1.1 keep-alive server: read a request, answer `response` (REPLY's), repeat. Sends its
    port through `port_pipe`. perf/guard_proxy.py serves its own reply with it."""

    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                writer.write(response)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
        port_pipe.send(server.sockets[0].getsockname()[1])
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def make_requests(count: int) -> list:
    from common.records import CONDITIONS, Request

    artifact = "def f(x):\n    return x + 1\n" * 60
    requests = []
    for i in range(count):
        condition, comment = CONDITIONS[i % 6], f"btw #{i}"
        trailing = condition != "clean"
        requests.append(Request(
            id=f"perf-{i // 6:03d}/{condition}", cluster=f"perf-{i // 6:03d}", source="perf", genre="code",
            license="MIT", condition=condition, message=f"Fix the bug.\n\n{artifact}\n{comment}", artifact=artifact,
            comment=comment if trailing else None, comment_id="perf" if trailing else None,
            witness="btw" if trailing else None, proposition="p" if trailing else None, benchmark_sha256="0" * 64))
    return requests


def make_config(url: str, concurrency: int):
    from runner.config import parse_config

    return parse_config({"name": "perf", "provider": "openai", "model": "perf-model", "base_url": url,
                         "temperature": 0.0, "max_tokens": 1024, "timeout_s": 30, "concurrency": concurrency,
                         "max_retries": 0}, path="perf.toml")


def time_runner(config, rows) -> float:
    from runner.run import run

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "traces.jsonl"
        start = time.perf_counter()
        summary = run(config, rows, out, log=io.StringIO())
        elapsed = time.perf_counter() - start
        assert summary.counts == {"ok": len(rows)}, summary
        assert out.read_bytes().count(b"\n") == len(rows)
    return elapsed


def time_bare(config, rows) -> float:
    """The same requests with nothing but requests.Session: one session per thread, parse the JSON."""
    import requests

    from runner import providers
    from runner.ask import canonical_body

    provider = providers.get(config.provider)
    prepared = []
    for row in rows:
        url, headers, body = provider.build_request(config, row.message)
        prepared.append((url, headers, canonical_body(body)))
    lock = threading.Lock()
    position = [0]

    def work():
        session = requests.Session()
        while True:
            with lock:
                if position[0] >= len(prepared):
                    break
                url, headers, data = prepared[position[0]]
                position[0] += 1
            response = session.post(url, headers=headers, data=data, timeout=30)
            response.raise_for_status()
            response.json()
        session.close()

    start = time.perf_counter()
    threads = [threading.Thread(target=work) for _ in range(config.concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--requests", type=int, default=600, help="requests per measurement")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    args = parser.parse_args()

    receive, send = multiprocessing.Pipe(duplex=False)
    server = multiprocessing.Process(target=serve, args=(send,), daemon=True)
    server.start()
    url = f"http://127.0.0.1:{receive.recv()}/v1"
    rows = make_requests(args.requests)
    print(f"instant local server at {url}; {args.requests} requests per measurement, median of "
          f"{args.repeats} repeats (bare and runner interleaved); reply {len(REPLY)} bytes")
    print(f"{'concurrency':>11}  {'bare req/s':>10}  {'runner req/s':>12}  {'runner/bare':>11}  "
          f"{'overhead ms/req':>15}")
    try:
        for concurrency in args.concurrency:
            config = make_config(url, concurrency)
            time_bare(config, rows[:50])  # warm up both paths
            time_runner(config, rows[:50])
            bare, runner = [], []
            for _ in range(args.repeats):
                bare.append(time_bare(config, rows))
                runner.append(time_runner(config, rows))
            bare_s, runner_s = statistics.median(bare), statistics.median(runner)
            overhead_ms = (runner_s - bare_s) / len(rows) * 1000
            print(f"{concurrency:>11}  {len(rows) / bare_s:>10.0f}  {len(rows) / runner_s:>12.0f}  "
                  f"{bare_s / runner_s:>11.2f}  {overhead_ms:>15.3f}")
    finally:
        server.terminate()
        server.join()
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
