#!/usr/bin/env python3
"""How long a prices file of thousands of tables takes to read (issue 36, defect 10: 16,000 tables took about
50 s when the reader searched the text for every table's line).

Writes prices files of 2,000 to 16,000 tables (by default) and prints, per size, the seconds of TOML parsing
(tomllib) and of the prices reader's own checks, and the checks' seconds per thousand tables: a constant
figure means time in proportion to the file. Run: python perf/prices_reader.py [--tables N,N,...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import tomlfile  # noqa: E402
from runner.prices import parse_prices  # noqa: E402


def sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def prices_text(tables: int) -> str:
    return "".join(f'["model-{i}.v1"]\ninput_per_mtok = 1.5\noutput_per_mtok = 6\n' for i in range(tables))


def main() -> int:
    parser = argparse.ArgumentParser(prog="prices_reader.py", description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=sizes, default=[2000, 4000, 8000, 16000],
                        help="the numbers of tables to try, comma-separated (default 2000,4000,8000,16000)")
    args = parser.parse_args()
    print(f"{'tables':>8} {'toml s':>8} {'checks s':>9} {'checks s per 1,000':>19}")
    with tempfile.TemporaryDirectory() as tmp:
        for tables in args.tables:
            path = Path(tmp) / "prices.toml"
            path.write_text(prices_text(tables), encoding="utf-8")
            start = time.perf_counter()
            raw, text = tomlfile.load(path, "prices file")
            parsed = time.perf_counter()
            read = parse_prices(raw, text, str(path))
            checked = time.perf_counter()
            assert len(read) == tables
            print(f"{tables:>8,} {parsed - start:>8.2f} {checked - parsed:>9.3f} "
                  f"{(checked - parsed) / tables * 1000:>19.4f}")
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
