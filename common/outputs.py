"""A command never replaces a file it reads: every input is checked against every output before anything is written.

A trace file standing where `seam.py score --out-dir` puts its labels (`sdir/my-model.jsonl`, scored into `sdir`), or
reached through a link to such a path, was read and then replaced by the output: the user's run lost (issue 36).
`refuse_overwritten` compares each input with each planned output by where the output's directory entry really is
(its folder with every symbolic link resolved) and by device and inode (a hard link, or an output that links to the
input), and refuses a clash in one line naming both. compare and the scorer both use it.

`resolved` is `Path.resolve` with a symbolic link loop (`ln -s out out`) a one-line `UserError` instead of a
RuntimeError or OSError.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path

from common.errors import UserError


def refuse_overwritten(inputs: Iterable[tuple[Path, str]], outputs: Iterable[Path], *, command: str,
                       hint: str) -> None:
    """Refuse any input (a path and what it is: "trace file") that is, links to, or is a hard link of an output,
    in one line: "IN: this trace file is OUT, which COMMAND writes; it would be overwritten: HINT".

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     trace = Path(tmp) / "my-model.jsonl"
    ...     _ = trace.write_bytes(b"{}\\n")
    ...     try:
    ...         refuse_overwritten([(trace, "trace file")], [trace], command="score", hint="choose another --out")
    ...     except UserError as refused:
    ...         print(str(refused).replace(tmp, "TMP").split("; ")[0])
    TMP/my-model.jsonl: this trace file is TMP/my-model.jsonl, which score writes
    """
    outputs = [(path, _entry(path), _identity(path)) for path in map(Path, outputs)]
    for given, what in inputs:
        given = Path(given)
        real, identity = resolved(given), _identity(given)
        for output, entry, same in outputs:
            if real == entry:
                relation = "is" if _entry(given) == entry else "links to"
            elif identity is not None and identity == same:
                relation = "is the same file as"
            else:
                continue
            raise UserError(f"{given}: this {what} {relation} {output}, which {command} writes; it would be "
                            f"overwritten: {hint}")


def resolved(path: str | Path) -> Path:
    """`path` made absolute with every symbolic link resolved (`Path.resolve`); a link loop on the way, which
    `resolve` raises as RuntimeError (Python before 3.13) or OSError, is a one-line `UserError` naming the link.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     (Path(tmp) / "labels").symlink_to("labels")
    ...     try:
    ...         resolved(Path(tmp) / "labels" / "my-model.jsonl")
    ...     except UserError as refused:
    ...         print(str(refused).replace(tmp, "TMP").split("; ")[0])
    TMP/labels/my-model.jsonl: leads through TMP/labels, a symbolic link loop
    """
    path = Path(path)
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:
        failure = exc
    culprit = next((prefix for prefix in (*reversed(path.parents), path) if _unresolvable(prefix)), path)
    if isinstance(failure, OSError) and failure.errno != errno.ELOOP:
        reason = f"cannot follow its links ({failure.strerror or failure})"
    else:
        reason = "a symbolic link loop"
    named = f"{path}: {reason}" if culprit == path else f"{path}: leads through {culprit}, {reason}"
    raise UserError(f"{named}; remove or correct the link, or name another path")


def _unresolvable(path: Path) -> bool:
    try:
        path.resolve()
    except (RuntimeError, OSError):
        return True
    return False


def _entry(path: Path) -> Path:
    """The directory entry a write of `path` replaces: its folder with every link resolved, and its name."""
    return resolved(path.parent) / path.name


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file `path` leads to; None where there is none yet (or a link loop)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino
