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
        done = subprocess.run(["git", "-C", str(root), "-c", "core.quotePath=off", *args], capture_output=True,
                              text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return [line for line in done.stdout.splitlines() if line]


def unreleased(root: Path = ROOT) -> list[str]:
    """'new PATH' for files under data/ that the checkout's commit does not have (untracked and not ignored, or
    staged but not committed), 'changed PATH' for the commit's files that differ from it; [] outside a git
    checkout. Paths as they are (git's quoting of unusual names turned off)."""
    released = git(root, "ls-tree", "-r", "--name-only", "HEAD", "--", "data")
    present = git(root, "ls-files", "--cached", "--others", "--exclude-standard", "--", "data")
    changed = git(root, "diff", "--name-only", "HEAD", "--", "data")
    if released is None or present is None or changed is None:
        return []
    known = set(released)
    new = [path for path in present if path not in known and (root / path).exists()]
    return [f"new {path}" for path in new] + [f"changed {path}" for path in changed if path in known]


def main() -> int:
    for line in unreleased():
        print(line)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from common.pipes import run_main

    sys.exit(run_main(main))
