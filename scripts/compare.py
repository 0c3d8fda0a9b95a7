#!/usr/bin/env python3
"""Compare regenerated files with released ones byte for byte; name the first difference.

    python scripts/compare.py RELEASED REGENERATED [--ignore GLOB ...]   # two files, or two folders

Exit 0 when every file is identical, 1 otherwise. For a difference it prints
the file, the first differing line number and both versions of that line
(shortened), which for JSON Lines is the first differing row.
"""

from __future__ import annotations

import sys
from pathlib import Path


def _short(line: bytes, limit: int = 160) -> str:
    text = line.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + "…"


def compare_files(released: Path, regenerated: Path) -> list[str]:
    old, new = released.read_bytes(), regenerated.read_bytes()
    if old == new:
        return []
    old_lines, new_lines = old.split(b"\n"), new.split(b"\n")
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if a != b:
            return [f"{released}:{number}: differs from the regenerated file",
                    f"  released:    {_short(a)}", f"  regenerated: {_short(b)}"]
    number = min(len(old_lines), len(new_lines))
    return [f"{released}:{number}: one file ends here ({len(old_lines)} vs {len(new_lines)} lines)"]


def compare(released: Path, regenerated: Path, ignore: tuple[str, ...] = ()) -> list[str]:
    for path in (released, regenerated):
        if not path.exists():
            return [f"{path}: missing"]
    if released.is_file() or regenerated.is_file():
        if not (released.is_file() and regenerated.is_file()):
            return [f"{released if not released.is_file() else regenerated}: missing"]
        return compare_files(released, regenerated)
    names = sorted({p.relative_to(released) for p in released.rglob("*") if p.is_file()}
                   | {p.relative_to(regenerated) for p in regenerated.rglob("*") if p.is_file()})
    names = [name for name in names if not any(name.match(pattern) for pattern in ignore)]
    found = []
    for name in names:
        a, b = released / name, regenerated / name
        if not a.exists():
            found.append(f"{a}: not released, but regenerated")
        elif not b.exists():
            found.append(f"{a}: released, but not regenerated")
        else:
            found.extend(compare_files(a, b))
    return found


def main(argv: list[str]) -> int:
    ignore = tuple(argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--ignore")
    paths = [arg for i, arg in enumerate(argv) if arg != "--ignore" and (i == 0 or argv[i - 1] != "--ignore")]
    if len(paths) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    found = compare(Path(paths[0]), Path(paths[1]), ignore)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common.pipes import run_main

    # Only differences are printed, so a reader that stops early stopped on a difference: status 1.
    sys.exit(run_main(lambda: main(sys.argv[1:]), broken_pipe_status=1))
