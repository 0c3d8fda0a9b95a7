"""The temporary file an output is written to before it is renamed into place, and the removal of those a
killed writer left behind.

`common.files` writes each output whole to `<name>.<pid>-<random>.tmp` beside it, then renames that over
the output. A writer killed between the two (SIGKILL, the machine's power) leaves the temporary behind, and
nothing would ever remove it. Its name says which output it was for and which process wrote it, so the next
writer of that output can prove it stale: the name is exactly `<output's name>.<pid>-<8 hex digits>.tmp`, it
is a regular file, and no process with that id runs. Anything else beside the output is never touched: a
user's `labels.jsonl.old.tmp`, a temporary named without a process id (older versions), one whose writer
(or a process that took its id since) still runs. The id is this machine's: a writer on another machine
sharing the folder would look dead from here, and its rename would then fail with one line, nothing lost.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from pathlib import Path


def beside(path: Path) -> Path:
    """A fresh temporary name beside `path`, carrying this process's id.

    >>> name = beside(Path("out/labels.jsonl")).name
    >>> name.startswith(f"labels.jsonl.{os.getpid()}-") and name.endswith(".tmp") and len(name) == len(
    ...     f"labels.jsonl.{os.getpid()}-0123abcd.tmp")
    True
    """
    return path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


def remove_stale(path: str | Path) -> list[Path]:
    """Remove the temporaries of `path` (named by `beside`) whose writer no longer runs; the paths removed."""
    path = Path(path)
    named = re.compile(re.escape(path.name) + r"\.([0-9]{1,10})-[0-9a-f]{8}\.tmp")
    removed = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:  # no folder yet (nothing to remove), or one that cannot be read (the write will say so)
        return []
    for entry in entries:
        found = named.fullmatch(entry.name)
        with contextlib.suppress(OSError):
            if found and entry.is_file(follow_symlinks=False) and not _running(int(found[1])):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _running(pid: int) -> bool:
    """Whether a process with this id may run (True whenever that cannot be told)."""
    if os.name != "posix" or pid <= 0 or pid == os.getpid():
        return True  # elsewhere os.kill(pid, 0) would end the process; 0 and below name groups, not a process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # another user's process (EPERM), or no pid at all: keep the file
        return True
    return True
