#!/usr/bin/env python3
"""A fake provider batch API on this machine, to try `seam.py run --batch` offline, with no key and no cost.

    python scripts/fake_batch_server.py --port 8765                     # OpenAI's Batch API at 127.0.0.1:8765/v1
    python scripts/fake_batch_server.py --port 8765 --provider anthropic --config fake-batch.toml

It serves the tests' fake (tests/support/fakebatch.py: the batch endpoints of OpenAI, Anthropic or Gemini as
their documentation describes them: upload, create, poll, list, cancel, results) on 127.0.0.1 only, until
Ctrl+C or `kill PID`. A batch moves on one status every `--polls` status checks, and its results come back
shuffled; each "model" answers `EDITED<message>`, so the rows are ok, and `seam.py compare` or `score` can
read them (their absorption means nothing). It prints the model config to use (and writes it with
`--config FILE`) and the key to export: the fake's own, a constant of the tests, no secret. Then:

    export SEAM_FAKE_BATCH_KEY=sk-fake-batch-key-0123456789abcdef
    python seam.py run fake-batch.toml --first 2 --only clean --out runs/fake-batch.jsonl --batch --batch-poll 1

Only the batch endpoints are there: the synchronous `seam.py run` (without --batch) gets HTTP 404. Documented
in docs/RUNNER.md ("Trying --batch offline").
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from support.fakebatch import API_KEY, serve_batch  # noqa: E402

KEY_VARIABLE = "SEAM_FAKE_BATCH_KEY"
PROVIDERS = ("openai", "anthropic", "gemini")


def config_text(provider: str, url: str) -> str:
    """A model config for the fake at `url` (its base_url)."""
    return (f'name = "fake-batch-{provider}"\nprovider = "{provider}"\nmodel = "fake-model"\n'
            f"base_url = {json.dumps(url)}\napi_key_env = \"{KEY_VARIABLE}\"\nmax_tokens = 256\n"
            "timeout_s = 10\nmax_retries = 2\n")


def port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port from 1 to 65535 (0: any free one), got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="example:\n  python scripts/fake_batch_server.py --port 8765 --config "
                                            "fake-batch.toml")
    parser.add_argument("--port", type=port, default=0, help="the port on 127.0.0.1 (default: any free one, printed)")
    parser.add_argument("--provider", choices=PROVIDERS, default="openai", help="whose batch API (default openai)")
    parser.add_argument("--polls", type=int, default=2, help="status checks a batch stays in each status (default 2)")
    parser.add_argument("--config", metavar="FILE", help="also write the model config for it to FILE")
    args = parser.parse_args(argv)
    if args.polls < 1:
        parser.error("--polls must be at least 1")

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    try:
        with serve_batch(args.provider, polls=args.polls, port=args.port) as fake:
            text = config_text(args.provider, fake.url)
            if args.config:
                Path(args.config).write_text(text, encoding="utf-8")
            print(f"fake-batch: serving a fake {args.provider} batch API at {fake.url} (127.0.0.1 only; Ctrl+C or "
                  f"kill {os.getpid()} stops it)", flush=True)
            print(f"fake-batch: its key (the fake's, no secret): export {KEY_VARIABLE}={API_KEY}", flush=True)
            print("fake-batch: " + (f"model config written to {args.config}" if args.config else
                                    "a model config for it:\n" + text.rstrip()), flush=True)
            while not stop.wait(0.5):
                pass
    except OSError as exc:  # the port is taken, or not ours to bind
        print(f"fake_batch_server.py: error: cannot serve on 127.0.0.1:{args.port}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    print("fake-batch: stopped", flush=True)
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
