#!/usr/bin/env python3
"""Print which scorer tiers a released labels file was made with: "lexical" or "entailment".

    python scripts/released_tiers.py data/labels/MODEL.jsonl

`reproduce.sh` uses it to rescore a trace set under the same tiers as its
released labels: "entailment" when any label ran that tier, "lexical" otherwise
(including when the file is missing, so the comparison reports the missing file).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def released_tiers(path: Path) -> str:
    from scorer.tiers import MODEL_TIER  # the tier decided by the entailment model

    if not path.is_file():
        return "lexical"
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, RecursionError, ValueError):
                continue  # the byte comparison will point at this line
            if isinstance(row, dict) and MODEL_TIER in (row.get("tiers_run") or []):
                return "entailment"
    return "lexical"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.exit("usage: python scripts/released_tiers.py LABELS.jsonl")
    print(released_tiers(Path(argv[0])))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common.pipes import run_main

    sys.exit(run_main(lambda: main(sys.argv[1:])))
