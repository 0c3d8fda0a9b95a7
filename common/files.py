"""File helpers: atomic writes of one file or of several as one (a failure, a full disk included, leaves
every old file whole and no temporary behind), checksums, and reading the CSV tables back."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from common import tempfiles
from common.errors import UserError


def make_parent(path: str | Path) -> None:
    """Create the folder a file goes into; a file standing where a folder must be is the user's to fix."""
    parent = Path(path).parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UserError(f"{path}: cannot create the folder {parent}: a file is in the way") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot create the folder {parent}: {exc.strerror or exc}") from None


def write_files(files: Mapping[str | Path, bytes], what: str | None = None) -> None:
    """Write every file or none: replace the old files only once all the new ones are on disk.

    Each file is first written whole to a temporary file beside it (`<name>.<pid>-<random>.tmp`) and
    fsynced; only when all of them are written is each renamed over its destination. Any failure
    before that (a full disk, the file-size limit, a permission) removes the temporary files, leaves
    every destination as it was, and is one `UserError` naming the file and the reason; `what`
    names the outputs in it ("the previous tables are unchanged").
    """
    targets = [Path(path) for path in files]
    staged: list[tuple[Path, Path]] = []  # (temporary, destination)
    created: list[Path] = []  # folders made here, removed again when nothing is written
    try:
        for path, data in zip(targets, files.values(), strict=True):
            _make_folders(path, created)
            staged.append((_write_temporary(path, data), path))
    except BaseException as exc:  # a refusal, a full disk, or an interrupt: leave no temporary behind
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        for folder in reversed(created):
            _remove_if_empty(folder)
        if not isinstance(exc, OSError):
            raise
        failed = targets[len(staged)]
        kept = [path for path in targets if path.exists()]
        if not kept:
            outcome = "nothing was written"
        elif what is None:
            outcome = f"{kept[0]} is unchanged" if len(targets) == 1 else "the previous files are unchanged"
        else:
            outcome = f"the previous {what} are unchanged"
        raise UserError(f"could not write {failed}: {exc.strerror or exc}; {outcome}") from None
    for done, (tmp, path) in enumerate(staged):
        try:
            os.replace(tmp, path)
        except OSError as exc:  # a rename in one folder does not need space: not expected, but said exactly
            for left, _ in staged[done:]:
                left.unlink(missing_ok=True)
            raise UserError(f"could not replace {path}: {exc.strerror or exc}; {done} of {len(staged)} files "
                            "were already replaced") from None
    for folder in sorted({path.parent for path in targets}):
        _sync_folder(folder)


class Spool:
    """A file written a line at a time, its first line last: lines go to a temporary file beside `path` as
    they come (memory stays flat however many), and `commit(head)` writes `head` then those lines to `path`
    atomically, as `write_files` does (the old file stays whole until then; a failure, or `discard`, leaves
    no temporary behind).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     spool = Spool(Path(tmp) / "out.jsonl", "rows")
    ...     spool.add(b"row 1\\n"); spool.add(b"row 2\\n")
    ...     spool.commit(b"header\\n")
    ...     (Path(tmp) / "out.jsonl").read_bytes(), sorted(p.name for p in Path(tmp).iterdir())
    (b'header\\nrow 1\\nrow 2\\n', ['out.jsonl'])
    """

    def __init__(self, path: str | Path, what: str | None = None) -> None:
        self.path, self.what = Path(path), what
        self.lines = 0
        self._folders: list[Path] = []
        _make_folders(self.path, self._folders)
        self._body = _write_temporary(self.path.with_name(self.path.name + ".body"), b"")
        self._file = open(self._body, "ab")  # noqa: SIM115 (closed by commit or discard)

    def add(self, line: bytes) -> None:
        try:
            self._file.write(line)
        except OSError as exc:
            self.discard()
            raise UserError(f"could not write {self.path}: {exc.strerror or exc}; nothing was written") from None
        self.lines += 1

    def commit(self, head: bytes) -> None:
        """Write `head` and the spooled lines to `path`, atomically."""
        try:
            self._file.close()
            tmp = _write_temporary(self.path, head)
            with open(tmp, "ab") as out, open(self._body, "rb") as body:
                while chunk := body.read(1 << 20):
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(NameError):
                tmp.unlink(missing_ok=True)
            self.discard()
            kept = f"{self.path} is unchanged" if self.path.exists() else "nothing was written"
            raise UserError(f"could not write {self.path}: {exc.strerror or exc}; {kept}") from None
        self._body.unlink(missing_ok=True)
        _sync_folder(self.path.parent)

    def discard(self) -> None:
        """Give up: remove the temporary file (and any folder made for it)."""
        with contextlib.suppress(OSError):
            self._file.close()
        self._body.unlink(missing_ok=True)
        for folder in reversed(self._folders):
            _remove_if_empty(folder)


def write_bytes(path: str | Path, data: bytes, what: str | None = None) -> None:
    """Write one file atomically (`write_files`): a failure leaves the old file or none, never half of one."""
    write_files({path: data}, what)


def write_text(path: str | Path, text: str, what: str | None = None) -> None:
    """UTF-8, with the "\\n" line ends given (no platform translation)."""
    write_bytes(path, text.encode("utf-8"), what)


def _make_folders(path: Path, created: list[Path]) -> None:
    """Create the folders `path` goes into, adding those that did not exist to `created` (outermost first)."""
    missing = []
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    created += missing[::-1]
    make_parent(path)


def _write_temporary(path: Path, data: bytes) -> Path:
    """`data` in a new file beside `path`, flushed to disk; created with the usual mode (umask applies)."""
    while True:
        tmp = tempfiles.beside(path)  # named for its process: a later run can prove it stale (common/tempfiles.py)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return tmp


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def _sync_folder(folder: Path) -> None:
    """Make the renames in `folder` durable where the system allows it (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_durable(path: str | Path, data: bytes) -> None:
    """Append `data` to an existing file and make it durable before returning; a failed write leaves the
    file as it was.

    The bytes go out in one `os.write` on an O_APPEND descriptor (looping only if the system writes
    less), then `fsync`. On any error the file is cut back to its size before the write, so a full
    disk never leaves half a line, and the `OSError` is raised for the caller to word (what was not
    saved). For files a human's answers are appended to one at a time (review files, occurrence samples).
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        before = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, before)
                os.fsync(fd)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)


def sha256_text(text: str) -> str:
    """SHA-256 of a text's UTF-8 bytes: a message as the runner records it in each trace row (`message_sha256`)
    and the scorer checks it against the message its condition renders."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def set_aside_tail(path: str | Path, size: int) -> Path:
    """Move the bytes of `path` after its first `size` bytes (a torn last line, left by a crash mid-append and
    never acknowledged) to `<file>.torn`, appended there with a newline and fsynced, then cut the file back to
    `size`. A crash between the two steps leaves the bytes in both places, never in neither."""
    path = Path(path)
    aside = path.with_name(path.name + ".torn")
    with open(path, "rb") as f:
        f.seek(size)
        tail = f.read()
    with open(aside, "ab") as f:
        f.write(tail + b"\n")
        f.flush()
        os.fsync(f.fileno())
    with open(path, "r+b") as f:
        f.truncate(size)
        f.flush()
        os.fsync(f.fileno())
    return aside


@contextlib.contextmanager
def locked(path: str | Path, *, what: str, made_by: str, served_by: str) -> Iterator[None]:
    """Hold an exclusive lock on a file that answers are appended to (where the system has `fcntl`): one
    server per file. `what` names the file, `made_by` the command that makes it and `served_by` the one
    that holds it, for the messages. The kernel releases the lock when the process ends, however it ends,
    so a killed server never leaves the file locked."""
    try:
        import fcntl
    except ImportError:  # not on a POSIX system: no lock, the one-server rule is then the user's to keep
        yield
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise UserError(f"{path}: no such {what} (make one with '{made_by}')") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a {what} (JSON Lines)") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(f"{path}: another '{served_by}' is serving this file; stop it first") from None
        yield
    finally:
        os.close(fd)


def sha256_file(path: str | Path) -> str:
    """SHA-256 of a file, read in blocks so that a 1.6 GB model file does not fill memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_csv(path: str | Path) -> list[dict[str, str]]:
    """The rows of a CSV table the kit wrote, as dicts keyed by its header."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))
