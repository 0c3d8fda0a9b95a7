#!/usr/bin/env python3
"""seam: build the SEAM benchmark, run models on it, score absorption, make the tables.

Each stage lives in its own package and contributes its subcommands through
`add_commands(subparsers)` in its `cli` module; this file only wires them up
and turns user mistakes (`UserError`) into one line on stderr and exit code 2.
Stage modules import heavy libraries (numpy, onnxruntime) inside their
commands, so that `--help` stays instant; a third-party package missing from the
Python that runs seam.py (not the one in .venv) is such a mistake too.
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
from common.pipes import run_main  # noqa: E402

# The guard (marking a message's seam before a model sees it) stands below the benchmark, which renders its
# guarded conditions through it. The data flows down the rest of this list: clusters -> requests -> traces
# (asked by the runner, or by another harness and imported: harness/) -> labels -> tables (-> a human review)
# -> one HTML page of it all (-> your own model beside the released ones); the occurrence audit (real chat
# logs) stands on top of them all.
STAGES = ("guard.cli", "benchmark.cli", "runner.cli", "harness.cli", "scorer.cli", "stats.cli", "validity.cli",
          "review.cli", "occurrence.cli", "report.cli", "compare.cli")
# This repository's packages: a module of theirs that cannot be found is a bug, not a missing install.
OWN_PACKAGES = frozenset({"common", *(stage.split(".")[0] for stage in STAGES)})


def missing_package(exc: ModuleNotFoundError) -> str | None:
    """The third-party package an import did not find, or None (the standard library's or ours: a bug).

    >>> missing_package(ModuleNotFoundError(name="numpy.linalg")), missing_package(ModuleNotFoundError(name="stats.x"))
    ('numpy', None)
    """
    top = (exc.name or "").split(".")[0]
    if not top or top in OWN_PACKAGES or top in sys.stdlib_module_names:
        return None
    return top


def install_hint(package: str) -> str:
    """What to do about a missing package: use (or repair) the .venv that ./reproduce.sh and ./test.sh make."""
    venv = ROOT / ".venv"
    if Path(sys.prefix).resolve() == venv.resolve():
        return (f"the package '{package}' is not installed in .venv ({sys.executable}); install what seam "
                "needs with: .venv/bin/python -m pip install -r requirements.txt")
    return (f"the package '{package}' is not installed in {sys.executable}; run ./reproduce.sh once to create "
            ".venv, then use .venv/bin/python seam.py … (or first: source .venv/bin/activate)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="seam.py",
        description="SEAM: does a model absorb the remark a user types after a pasted text?",
        epilog="Run 'python seam.py COMMAND --help' for a command's options and an example.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in STAGES:
        importlib.import_module(name).add_commands(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    prog = "seam.py"
    try:
        args = build_parser().parse_args(argv)
        prog = f"seam.py {args.command}"
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        package = missing_package(exc)
        if package is None:
            raise
        print(f"{prog}: error: {install_hint(package)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(run_main(main))  # quiet when the reader stops early: `seam.py prompts | head`
