"""Open a chat-log corpus file, whatever its container, as one stream of its JSON text.

A corpus may be a plain file, gzip-compressed (`.gz`), or a member of a zip
archive such as a wheel (`.whl`, `.zip`: the member named, or the archive's
only `*.json`/`*.jsonl`). Every byte read is hashed on the way (`Counted`), so
the SHA-256 of what was screened costs no second pass; a `.gz` is inflated a
bounded piece at a time, so that memory stays bounded however well it
compresses, and one cut short gives every byte before the cut.

Here the container only: what the JSON text holds is read by `occurrence.stream`,
which never needs to know whether it came from a file, a .gz or an archive
(damaged compressed data is a `UserError` from `Corpus.read` either way).
"""

from __future__ import annotations

import hashlib
import io
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from common.errors import UserError
from common.files import sha256_file
from common.records import shown

CHUNK = 1 << 20  # read, and inflated, a megabyte at a time
ARCHIVES = (".whl", ".zip")
MEMBER_SUFFIXES = (".json", ".jsonl")
DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError)  # compressed data that cannot be read on


class Counted:
    """A binary stream that hashes and counts every byte read through it, and can take back bytes read
    (`unread`) to give them again, uncounted, before reading on."""

    def __init__(self, raw) -> None:
        self.raw = raw
        self.digest = hashlib.sha256()
        self.count = 0
        self.head = b""  # bytes given back, read again first

    def unread(self, data: bytes) -> None:
        self.head = data + self.head

    def read(self, size: int = -1) -> bytes:
        if self.head:
            cut = len(self.head) if size < 0 else min(size, len(self.head))
            data, self.head = self.head[:cut], self.head[cut:]
            return data
        data = self.raw.read(size)
        self.digest.update(data)
        self.count += len(data)
        return data

    def readline(self, limit: int = -1) -> bytes:
        """A line, or its first `limit` bytes when it is longer (never more in memory)."""
        if self.head:
            cut = self.head.find(b"\n") + 1 or len(self.head)
            if 0 <= limit < cut:
                cut = limit
            data, self.head = self.head[:cut], self.head[cut:]
            if data.endswith(b"\n") or (0 <= limit <= len(data)):
                return data
            return data + self.readline(-1 if limit < 0 else limit - len(data))
        data = self.raw.readline(limit)
        self.digest.update(data)
        self.count += len(data)
        return data


@dataclass
class Corpus:
    """An opened corpus: the stream of its JSON text, and what progress and provenance need."""

    path: Path
    member: str | None  # inside an archive
    stream: Counted
    size: int | None  # bytes of the JSON text, when known (not for .gz)
    position: Callable[[], int]  # how far the reading is, in units of `total`
    total: int  # the size progress is measured against
    closers: tuple
    gunzip: _Gunzip | None = None

    @property
    def name(self) -> str:
        """The corpus as messages name it: the file, and the member inside an archive."""
        return f"{self.path}!{self.member}" if self.member else str(self.path)

    def close(self) -> None:
        for item in reversed(self.closers):
            item.close()

    def cut_short(self) -> bool:
        """Whether the compressed stream ended before its end marker (a .gz cut short): its text ends
        early even where the cut falls between two objects."""
        return self.gunzip is not None and self.gunzip.cut

    def read(self, size: int) -> bytes:
        """Read from the JSON text; damaged compressed data is a `UserError`."""
        try:
            return self.stream.read(size)
        except DAMAGED as exc:
            raise self._damaged(exc) from None

    def readline(self, limit: int) -> bytes:
        """The next line of the JSON text, or its first `limit` bytes; damaged compressed data is a `UserError`."""
        try:
            return self.stream.readline(limit)
        except DAMAGED as exc:
            raise self._damaged(exc) from None

    def _damaged(self, exc: Exception) -> UserError:
        return UserError(f"{self.name}: the compressed data is damaged after {self.stream.count:,} bytes ({exc})")


class _Gunzip(io.RawIOBase):
    """A .gz file's decompressed bytes, a bounded piece at a time. Unlike `gzip.GzipFile`, a file cut short
    gives every byte that was decompressed before the cut and then ends, with `cut` set, so that the JSON
    above decides what was lost; damaged data (a CRC that does not match) is a `zlib.error`. Several gzip
    members follow one another; zero bytes after a member (padding, as `gzip` and `gunzip` allow) are
    skipped. At most `CHUNK` decompressed bytes are held at a time, however well the data compresses (a
    megabyte of repetitive JSON can inflate to a hundred)."""

    def __init__(self, raw) -> None:
        self.raw = raw
        self.inflate = zlib.decompressobj(31)  # None between two members
        self.after = b""  # bytes read after the end of a member, not yet looked at
        self.pending = b""
        self.start = 0  # bytes of `pending` already given
        self.done = False
        self.cut = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while self.start >= len(self.pending) and not self.done:
            self.pending, self.start = self._inflate(), 0
        size = min(len(buffer), len(self.pending) - self.start)
        buffer[:size] = self.pending[self.start:self.start + size]
        self.start += size
        return size

    def _inflate(self) -> bytes:
        """The next piece of decompressed bytes (at most CHUNK, from as little input as that takes); b"" at
        the end of the file."""
        while True:
            inflate = self.inflate
            if inflate is not None and inflate.unconsumed_tail:
                data = inflate.decompress(inflate.unconsumed_tail, CHUNK)
            elif inflate is not None and inflate.eof:  # a member ended: another may follow, or zero padding
                self.inflate, self.after = None, inflate.unused_data
                continue
            else:
                chunk, self.after = self.after or self.raw.read(CHUNK), b""
                if not chunk:  # the file ends: inside a member (cut short), or after a whole one
                    self.done, self.cut = True, inflate is not None
                    return b"" if inflate is None else inflate.flush()
                if inflate is None:
                    chunk = chunk.lstrip(b"\0")
                    if not chunk:
                        continue
                    self.inflate = inflate = zlib.decompressobj(31)
                data = inflate.decompress(chunk, CHUNK)
            if data:
                return data


def open_corpus(path: str | Path, member: str | None = None) -> Corpus:
    """Open a corpus file (plain, .gz, or a member of a .whl/.zip) for reading its JSON text."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such corpus file" if not path.exists() else f"{path}: not a file")
    size = path.stat().st_size
    if path.suffix in ARCHIVES:
        return _open_member(path, member)
    if member is not None:
        raise UserError(f"--member is for an archive (.whl, .zip); {path} is not one")
    raw = open(path, "rb")  # noqa: SIM115 (closed by Corpus.close)
    if path.suffix == ".gz":
        gunzip = _Gunzip(raw)
        unpacked = io.BufferedReader(gunzip, CHUNK)
        return Corpus(path, None, Counted(unpacked), None, raw.tell, size, (raw, unpacked), gunzip)
    stream = Counted(raw)
    return Corpus(path, None, stream, size, lambda: stream.count, size, (raw,))


def _open_member(path: Path, member: str | None) -> Corpus:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UserError(f"{path}: not a readable zip archive ({exc})") from None
    names = [info.filename for info in archive.infolist() if not info.is_dir()]
    if member is None:
        found = [name for name in names if name.endswith(MEMBER_SUFFIXES)]
        if len(set(found)) != 1:
            archive.close()
            listed = ", ".join(found[:5]) or "none"
            raise UserError(f"{path}: expected exactly one *.json or *.jsonl member, found {len(found)} ({listed}); "
                            "name one with --member")
        member = found[0]
    elif member not in names:
        archive.close()
        raise UserError(f"{path}: no member {shown(member)} in this archive")
    if names.count(member) > 1:  # zipfile would read the last; which one the user meant, nobody can tell
        archive.close()
        raise UserError(f"{path}: {names.count(member)} members are named {shown(member)}; the archive is ambiguous "
                        "(unpack the one you mean and give that file)")
    info = archive.getinfo(member)
    try:
        raw = archive.open(info)
    except (RuntimeError, NotImplementedError) as exc:  # encrypted, or a compression method zipfile lacks
        archive.close()
        why = "is encrypted" if info.flag_bits & 0x1 else f"cannot be read here ({exc})"
        raise UserError(f"{path}: member {shown(member)} {why}; unpack it with a tool that can and give the "
                        "unpacked file") from None
    stream = Counted(raw)
    return Corpus(path, member, stream, info.file_size, lambda: stream.count, info.file_size, (archive, raw))


def file_sha256(corpus: Corpus) -> str:
    """SHA-256 of the corpus file as given (the archive itself for a member)."""
    return sha256_file(corpus.path)
