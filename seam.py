#!/usr/bin/env python3
"""seam: build the SEAM benchmark, run models on it, score absorption, make the tables.

Each stage lives in its own package and contributes its subcommands through
`add_commands(subparsers)` in its `cli` module; this file only wires them up
and turns user mistakes (`UserError`) into one line on stderr and exit code 2.
Stage modules import heavy libraries (numpy, onnxruntime) inside their
commands, so that `--help` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from common.errors import UserError  # noqa: E402

# The data flows down this list: clusters -> requests -> traces -> labels -> tables.
STAGES = ("benchmark.cli", "runner.cli", "scorer.cli", "stats.cli", "validity.cli")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="seam.py",
        description="SEAM: does a model absorb the remark a user types after a pasted text?",
        epilog="Run 'python seam.py COMMAND --help' for a command's options and an example.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in STAGES:
        if not (ROOT / name.replace(".", "/")).with_suffix(".py").exists():
            continue  # a stage not built yet in this checkout
        importlib.import_module(name).add_commands(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"seam.py {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"seam.py {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `seam.py prompts | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
