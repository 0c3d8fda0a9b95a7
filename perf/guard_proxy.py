#!/usr/bin/env python3
"""The guard's speed: `seam.py guard serve`'s added latency and throughput against a direct connection, and
`guard.mark.guard`'s throughput on SEAM's messages and on long ones.

The proxy: an instant upstream (its own process, asyncio, a tiny JSON reply to every request) is asked the same
chat completions requests directly and through the proxy (its own process, `guard.proxy.make_server`, log lines
off), side by side in one run, the two interleaved repeat by repeat so that a busy machine slows both alike.
Each client thread keeps one keep-alive connection and sends one request at a time; a request is a SEAM
`newline` message (cycling through the 300), which the proxy marks (JSON read, guarded, written again) for all
but the few whose seam the guard does not find.
Latency is each request's round trip as the client sees it (median and p99 over all repeats); throughput is
requests per second over a measurement. The proxy's added latency is the difference of the two medians.

The guard alone: messages per second on SEAM's 1,800 messages (all six conditions), and seconds per MB on a
100 kB and a 1 MB (1,000,000-character, the seam finder's limit) message of each kind, code and prose, with a
remark after it: time linear in length shows as the same seconds per MB at both sizes.

    python perf/guard_proxy.py                  # concurrency 1 and 32, 3 repeats
    python perf/guard_proxy.py --repeats 5 --requests 3000 --concurrency 1 8 32
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPLY = json.dumps({"id": "chatcmpl-perf", "object": "chat.completion", "model": "perf-model",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                                 "finish_reason": "stop"}]}).encode()
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + str(len(REPLY)).encode()
            + b"\r\n\r\n" + REPLY)


def serve_upstream(port_pipe) -> None:
    """The instant keep-alive upstream of perf/runner_overhead.py, answering this script's tiny REPLY."""
    from runner_overhead import serve  # perf/ is the script's own folder, first on sys.path

    serve(port_pipe, RESPONSE)


def serve_proxy(upstream_port: int, port_pipe) -> None:
    from guard.proxy import make_server

    server = make_server(f"http://127.0.0.1:{upstream_port}", 0, quiet=True)
    port_pipe.send(server.server_port)
    server.serve_forever()


def start(target, *args) -> tuple[multiprocessing.Process, int]:
    receive, send = multiprocessing.Pipe(duplex=False)
    process = multiprocessing.Process(target=target, args=(*args, send), daemon=True)
    process.start()
    return process, receive.recv()


def chat_bodies() -> list[bytes]:
    from benchmark import dataset

    return [json.dumps({"model": "perf-model", "temperature": 0, "max_tokens": 1024,
                        "messages": [{"role": "user", "content": request.message}]}, ensure_ascii=False).encode()
            for request in dataset.requests(dataset.load(), conditions=["newline"])]


def measure(port: int, bodies: list[bytes], count: int, concurrency: int) -> tuple[float, list[float]]:
    """(seconds for `count` requests, each request's latency in seconds) with `concurrency` client threads."""
    lock, position, latencies, failures = threading.Lock(), [0], [], []

    def work():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        try:
            while True:
                with lock:
                    if position[0] >= count:
                        break
                    body = bodies[position[0] % len(bodies)]
                    position[0] += 1
                started = time.perf_counter()
                conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
                response = conn.getresponse()
                response.read()
                mine.append(time.perf_counter() - started)
                if response.status != 200:
                    failures.append(response.status)
        finally:
            conn.close()
            with lock:
                latencies.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    assert not failures and len(latencies) == count, (failures[:5], len(latencies))
    return elapsed, latencies


def p99(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(len(values) * 0.99))]


def proxy_table(args, bodies: list[bytes]) -> None:
    upstream, upstream_port = start(serve_upstream)
    proxy, proxy_port = start(serve_proxy, upstream_port)
    try:
        print(f"\nthe proxy: {args.requests} chat requests per measurement (SEAM's 300 newline messages in turn, "
              f"nearly all marked), {args.repeats} repeats, direct and proxied interleaved; reply {len(REPLY)} bytes")
        print(f"{'concurrency':>11}  {'direct req/s':>12}  {'proxy req/s':>11}  {'direct median ms':>16}  "
              f"{'proxy median ms':>15}  {'added ms':>8}  {'direct p99 ms':>13}  {'proxy p99 ms':>12}")
        for concurrency in args.concurrency:
            measure(upstream_port, bodies, 100, concurrency)  # warm up both paths
            measure(proxy_port, bodies, 100, concurrency)
            times = {"direct": [], "proxy": []}
            latencies = {"direct": [], "proxy": []}
            for _ in range(args.repeats):
                for name, port in (("direct", upstream_port), ("proxy", proxy_port)):
                    elapsed, each = measure(port, bodies, args.requests, concurrency)
                    times[name].append(elapsed)
                    latencies[name] += each
            rate = {name: args.requests / statistics.median(times[name]) for name in times}
            median = {name: statistics.median(latencies[name]) * 1000 for name in latencies}
            tail = {name: p99(latencies[name]) * 1000 for name in latencies}
            print(f"{concurrency:>11}  {rate['direct']:>12.0f}  {rate['proxy']:>11.0f}  {median['direct']:>16.3f}  "
                  f"{median['proxy']:>15.3f}  {median['proxy'] - median['direct']:>8.3f}  {tail['direct']:>13.3f}  "
                  f"{tail['proxy']:>12.3f}")
    finally:
        for process in (proxy, upstream):
            process.terminate()
            process.join()


def long_message(kind: str, chars: int) -> str:
    """A message of about `chars` characters: an instruction, a pasted block of code or prose, a remark."""
    head = "def tally(items):\n    total = 0\n" if kind == "code" else ""
    line = ("    total = total + price * quantity  # running sum\n" if kind == "code"
            else "The committee met on Tuesday and agreed to postpone the vote until spring.\n")
    lead, remark = "Please fix any mistakes in this:\n\n", "btw this goes out with friday's newsletter"
    return lead + head + line * ((chars - len(lead) - len(head) - len(remark)) // len(line)) + remark


def time_guard(messages: list[str], repeats: int) -> tuple[float, int]:
    """(median seconds for guarding every message once, how many were marked)."""
    from guard.mark import guard

    runs, marked = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        marked = sum(guard(message).marked for message in messages)
        runs.append(time.perf_counter() - started)
    return statistics.median(runs), marked


def guard_table(args) -> None:
    from benchmark import dataset
    from common.seams.segment import MAX_MESSAGE_CHARS

    messages = [request.message for request in dataset.requests(dataset.load())]
    size = sum(len(message.encode("utf-8")) for message in messages)
    seconds, marked = time_guard(messages, args.repeats)
    print(f"\nthe guard alone (median of {args.repeats} runs)")
    print(f"  SEAM's {len(messages):,} messages ({size / len(messages) / 1000:.1f} kB on average): "
          f"{len(messages) / seconds:,.0f} messages/s ({seconds * 1000:.0f} ms for all; {marked:,} marked), "
          f"{seconds / (size / 1e6):.3f} s per MB")
    print(f"  {'message':>18}  {'chars':>9}  {'marked':>6}  {'ms each':>8}  {'s per MB':>8}")
    for kind in ("code", "prose"):
        for chars in (100_000, MAX_MESSAGE_CHARS):
            message = long_message(kind, chars)
            assert len(message) <= MAX_MESSAGE_CHARS
            seconds, marked = time_guard([message], args.repeats)
            megabytes = len(message.encode("utf-8")) / 1e6
            print(f"  {kind + ' ' + ('100 kB' if chars < MAX_MESSAGE_CHARS else '1 MB'):>18}  {len(message):>9,}  "
                  f"{'yes' if marked else 'no':>6}  {seconds * 1000:>8.1f}  {seconds / megabytes:>8.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--requests", type=int, default=2000, help="requests per measurement")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 32])
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start (other work slows both "
          "columns, and the proxy's, with a third process to schedule, more)")
    proxy_table(args, chat_bodies())
    guard_table(args)
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
