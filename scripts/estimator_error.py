#!/usr/bin/env python3
"""The prompt-token estimator of `seam.py run --estimate` against the prompt tokens the released traces
recorded: per model, the median and the worst relative error per request (runner/estimate.py).

    python scripts/estimator_error.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark.dataset import requests  # noqa: E402
from common.pipes import run_main  # noqa: E402
from runner.estimate import estimator_error  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    messages = {request.id: request.message for request in requests()}
    print("| model | requests | median relative error | worst relative error |")
    print("|---|---:|---:|---:|")
    for found in estimator_error(messages):
        print(f"| {found.model} | {found.rows:,} | {found.median:.1%} | {found.worst:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
