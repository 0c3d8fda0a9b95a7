"""Reading a file the user names, whole: a regular file only, and a small one only where it must be small.

/dev/zero, a FIFO or another device (given as a trace file, or linked to from a folder of tables) was read whole:
forever, or until the machine's memory ran out (issue 36). Every reader of a whole file reads it through
`read_bytes` here, which refuses anything but a regular file in one line, and, for the files the kit writes small
(a table, a figure, a provenance, a config or prices file), refuses one larger than any of them can be unread.

A regular file can be huge without using any disk (`truncate -s 50G sparse.jsonl`): a trace file larger than
`TRACE_FILE_BYTES` is refused unread (docs/FORMATS.md), and a file that does not fit in the memory there is (the
MemoryError of reading it whole) is one line naming it and its size, never a traceback.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from common.errors import UserError

# What a file the kit writes small (a table, a figure, a provenance, a config or prices file) can be: far above any
# it writes (the release's largest table is 21 kB), far below what fills a machine's memory once parsed.
SMALL_FILE_BYTES = 64 << 20

# What a trace file can be (docs/FORMATS.md): 8 GiB, about a thousand times the largest released trace (8.5 MB) and
# more than 1,800 requests each kept at the runner's longest reply (1,000,000 characters, in `output` and again in
# `response`) take; a larger one could not be scored in any machine's memory, so it is refused unread.
TRACE_FILE_BYTES = 8 << 30

# The kinds of file that are not regular, as a message names them: each can be endless (/dev/zero, a pipe).
_NOT_REGULAR = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def read_bytes(path: str | Path, what: str, *, limit: int | None = None) -> bytes:
    """`Path.read_bytes` of a regular file; anything else is a one-line `UserError` naming the file and `what`
    was expected ("a trace file").

    With `limit`, a file of more bytes is refused unread (a sparse file can be a terabyte). A FIFO is opened
    without waiting for a writer. A missing file and a directory raise as `Path.read_bytes` does, for the caller
    to word as it always has; any other failure to open the file (a socket, a permission) is a `UserError`.

    >>> read_bytes("/dev/zero", "a trace file")
    Traceback (most recent call last):
    common.errors.UserError: /dev/zero: a character device, not a regular file; expected a trace file
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, IsADirectoryError):
        raise
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc}); expected {what}") from None
    found = os.fstat(fd)
    refusal = _not_regular(path, found.st_mode, what)
    if refusal is not None:
        os.close(fd)
        raise refusal
    with open(fd, "rb") as f:
        try:
            if limit is None:
                return f.read()
            data = b""
            if found.st_size <= limit:
                data = f.read(found.st_size + 1)  # its size (no buffer of `limit` bytes for a small file), then
                if len(data) > found.st_size:  # what it has grown by since, up to one byte past the limit
                    data += f.read(limit + 1 - len(data))
        except MemoryError:  # freed as this unwinds: what is left is enough for the message
            raise UserError(f"{path}: {found.st_size:,} bytes, not enough memory to read it whole; expected "
                            f"{what}") from None
    size = max(found.st_size, len(data))
    if size > limit:
        raise UserError(f"{path}: {size:,} bytes, more than {what} can be ({limit:,} bytes at most); not read")
    return data


def unreadable(path: str | Path, exc: OSError, what: str) -> UserError:
    """The one line for a file that cannot be opened or read: no such file, a directory, or why the system
    says, each naming the file and `what` was expected.

    >>> print(unreadable("t.jsonl", FileNotFoundError(2, "No such file or directory"), "a trace file"))
    t.jsonl: no such file, expected a trace file
    >>> print(unreadable("d", IsADirectoryError(21, "Is a directory"), "a trace file"))
    d: is a directory, expected a trace file
    """
    if isinstance(exc, FileNotFoundError):
        return UserError(f"{path}: no such file, expected {what}")
    if isinstance(exc, IsADirectoryError):
        return UserError(f"{path}: is a directory, expected {what}")
    return UserError(f"{path}: cannot read it ({exc.strerror or exc}), expected {what}")


def read_file(path: str | Path, what: str, *, limit: int | None = None) -> bytes:
    """`read_bytes`, with a missing file, a directory or any other failure to read it one line (`unreadable`).

    >>> read_file("no-such-file.toml", "a prices file (TOML)")
    Traceback (most recent call last):
    common.errors.UserError: no-such-file.toml: no such file, expected a prices file (TOML)
    """
    try:
        return read_bytes(path, what, limit=limit)
    except OSError as exc:
        raise unreadable(path, exc, what) from None


def _not_regular(path: Path, mode: int, what: str) -> Exception | None:
    """What to raise for a file of this mode that is not a regular file (None for a regular one): a directory
    as `Path.read_bytes` raises it (POSIX opens a directory for reading), anything else as a `UserError`."""
    if stat.S_ISDIR(mode):
        return IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    kind = kind_of(mode)
    return None if kind is None else UserError(f"{path}: {kind}, not a regular file; expected {what}")


def kind_of(mode: int) -> str | None:
    """What a file of this mode (`os.stat(...).st_mode`) is, as a message names it, when it is neither a regular
    file nor a directory ("a FIFO (named pipe)"); None for those two.

    >>> kind_of(os.stat("/dev/null").st_mode), kind_of(os.stat(".").st_mode)
    ('a character device', None)
    """
    return next((kind for is_kind, kind in _NOT_REGULAR if is_kind(mode)), None)
