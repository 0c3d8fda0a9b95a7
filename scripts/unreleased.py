#!/usr/bin/env python3
"""Name what under data/ is not the release: files the release does not have, and released files changed.

    python scripts/unreleased.py      # prints "new PATH" and "changed PATH" lines, nothing when data/ is as released

`./reproduce.sh` runs it first: a user who put a new model's traces into data/traces/ (and rewrote the
tables) is told which files those are and how to set the model beside the release instead
(`seam.py compare`, which never writes under data/), rather than only that the tables differ. It asks git
(the release is what the checkout's commit holds); outside a git checkout it cannot tell and prints nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def git(root: Path, *args: str) -> list[str] | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return [line for line in done.stdout.splitlines() if line]


def unreleased(root: Path = ROOT) -> list[str]:
    """'new PATH' for files under data/ git does not track (and does not ignore), 'changed PATH' for tracked
    files that differ from the commit; [] outside a git checkout."""
    new = git(root, "ls-files", "--others", "--exclude-standard", "--", "data")
    changed = git(root, "diff", "--name-only", "HEAD", "--", "data")
    if new is None or changed is None:
        return []
    return [f"new {path}" for path in new] + [f"changed {path}" for path in changed]


def main() -> int:
    for line in unreleased():
        print(line)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from common.pipes import run_main

    sys.exit(run_main(main))
