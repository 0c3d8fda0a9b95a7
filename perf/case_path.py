#!/usr/bin/env python3
"""Follow one case (humaneval-011, clean and blank) from the benchmark to a table cell, and count
what the kit does on the way: project functions called, files read, request bodies built.

    python perf/case_path.py

It runs `seam.py run` (against a stand-in OpenAI-compatible server on 127.0.0.1 that
answers every request with the artifact plus the comment), `seam.py score` and
`seam.py tables` in this process, with a profiler hook counting calls into the
repository's own code and an audit hook counting files opened, per stage. The
numbers describe the code's path, not its speed.
"""

from __future__ import annotations

import argparse
import collections
import http.server
import json
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CASE = "humaneval-011"


class _Replies(http.server.BaseHTTPRequestHandler):
    """Answers a chat completion with the message's last line appended to a fixed edit."""

    def do_POST(self):  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        message = body["messages"][-1]["content"]
        reply = {"id": "x", "model": "stand-in", "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "def f():\n    return 1\n" + message.splitlines()[-1]}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main() -> int:
    # No options; parsed all the same, so that `--help` says what the script does instead of running it.
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Replies)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stages: dict = {}
    current: list = [None]

    def audit(event, args):
        if current[0] and event == "open" and isinstance(args[0], str | bytes) and not isinstance(args[0], int):
            name = str(args[0])
            if name.endswith((".jsonl", ".csv", ".json")):
                stages[current[0]][1][Path(name).name] += 1

    sys.addaudithook(audit)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "m.toml").write_text(
            f'name = "stand-in"\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:{server.server_port}/v1"\n'
            'max_tokens = 64\ntemperature = 0.0\n')
        runs = {
            "run": ["run", str(tmp / "m.toml"), "--sources", "humaneval", "--first", "11",
                    "--only", "clean,blank", "--out", str(tmp / "traces.jsonl")],
            "score": ["score", str(tmp / "traces.jsonl"), "--out", str(tmp / "labels" / "stand-in.jsonl"), "--no-nli"],
            "tables": ["tables", str(tmp / "labels"), "--out", str(tmp / "tables"), "--resamples", "10"],
        }
        import io

        import seam

        for stage, argv in runs.items():
            calls: collections.Counter = collections.Counter()
            stages[stage] = (calls, collections.Counter())
            root = str(ROOT)

            def profile(frame, event, arg, calls=calls, root=root):
                name = frame.f_code.co_filename
                if event == "call" and name.startswith(root) and "/perf/" not in name and "/.venv/" not in name:
                    calls[(name[len(root) + 1:], frame.f_code.co_name)] += 1

            current[0] = stage
            threading.setprofile(profile)
            sys.setprofile(profile)
            saved = sys.stdout, sys.stderr
            sys.stdout = sys.stderr = io.StringIO()
            try:
                code = seam.main(argv)
            finally:
                sys.setprofile(None)
                threading.setprofile(None)
                sys.stdout, sys.stderr = saved
                current[0] = None
            if code != 0:
                print(f"{stage}: exit {code}", file=sys.stderr)
                return 1
    server.shutdown()
    print("stage   distinct project functions   calls   files opened (name: times)")
    for stage, (calls, opened) in stages.items():
        files = ", ".join(f"{name}: {n}" for name, n in sorted(opened.items()))
        print(f"{stage:7} {len(calls):>28} {sum(calls.values()):>7}   {files}")
    builds = sum(n for (path, name), n in stages["run"][0].items() if name == "build_request")
    print(f"request bodies built in run: {builds} for {22} requests")
    return 0



if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
