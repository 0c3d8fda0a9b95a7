"""Reading the members of an inspect_ai `.eval` log (a zip of JSON files) one at a time, in bounded memory.

Recent inspect_ai versions compress the members with zstd (zip method 93), which Python's `zipfile` reads only
from 3.14. Such members are read here with the optional `zstandard` package (streamed across zstd frames,
their CRC-32 and size checked as `zipfile` checks its own); without it, one line says what to install or how
to convert the log to JSON with inspect itself. Stored and deflated members (older logs, `inspect log convert
--to eval` of some versions) are read by `zipfile` itself. A member larger than `MAX_MEMBER_BYTES` once
decompressed is refused before it is held whole: a sample of this benchmark is far smaller (a reply is at most
1,000,000 characters), so a larger one is a damaged or hostile file, not a log to read.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from common.errors import UserError

ZSTD = 93  # the zip method number of zstd (APPNOTE 4.4.5)
MAX_MEMBER_BYTES = 64 << 20
LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # signature, version, flags, method, time, date, crc, sizes, lengths
NO_ZSTANDARD = ("its samples are compressed with zstd, which this Python ({version}) reads only with the optional "
                "package 'zstandard': pip install zstandard (docs/HARNESSES.md), or convert the log to JSON with "
                "inspect itself: inspect log convert {log} --to json --output-dir DIR, and import DIR's .json file")


class Members:
    """An open `.eval` file: its member names, and each member's bytes (`read`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.file = open(path, "rb")  # noqa: SIM115 (closed by close())
        except OSError as exc:
            raise UserError(f"{path}: cannot read it: {exc.strerror or exc}") from None
        try:
            self.zip = zipfile.ZipFile(self.file)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            self.file.close()
            raise UserError(f"{path}: not a complete .eval log (a zip whose directory cannot be read: {exc}; a "
                            "file cut short, still being written, or not an inspect log)") from None
        # a member written twice (a log rewritten in place) counts once: the last one, as zipfile reads it
        self.infos = {info.filename: info for info in self.zip.infolist()}

    def __enter__(self) -> Members:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.zip.close()
        self.file.close()

    def names(self) -> list[str]:
        return list(self.infos)

    def read(self, name: str, limit: int = MAX_MEMBER_BYTES) -> bytes:
        """The member's bytes, decompressed and checked; a `UserError` naming the log and member otherwise."""
        info = self.infos[name]
        where = f"{self.path}: member {name}"
        if info.file_size > limit:
            raise UserError(f"{where} is {info.file_size:,} bytes decompressed, more than the {limit:,} a sample of "
                            "this benchmark can take; not a log of seam_task.py")
        if info.flag_bits & 0x1:
            raise UserError(f"{where} is encrypted")
        try:
            if info.compress_type == ZSTD and getattr(zipfile, "ZIP_ZSTANDARD", None) != ZSTD:
                return self._zstd(info, where, limit)
            with self.zip.open(info) as member:
                data = member.read(limit + 1)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
            raise UserError(f"{where} cannot be read ({exc}): the log is damaged or cut short") from None
        except NotImplementedError as exc:
            raise UserError(f"{where}: {exc}") from None
        if len(data) > limit:
            raise UserError(f"{where} decompresses to more than {limit:,} bytes; not a log of seam_task.py")
        return data

    def _zstd(self, info: zipfile.ZipInfo, where: str, limit: int) -> bytes:
        try:
            import zstandard
        except ImportError:
            import sys

            version = ".".join(map(str, sys.version_info[:2]))
            raise UserError(f"{self.path}: " + NO_ZSTANDARD.format(version=version, log=self.path)) from None
        self.file.seek(info.header_offset)
        header = self.file.read(LOCAL_HEADER.size)
        if len(header) < LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise UserError(f"{where}: no local header where the zip's directory puts it; the log is damaged")
        name_length, extra_length = LOCAL_HEADER.unpack(header)[-2:]
        self.file.seek(info.header_offset + LOCAL_HEADER.size + name_length + extra_length)
        compressed = _Limited(self.file, info.compress_size)
        reader = zstandard.ZstdDecompressor().stream_reader(compressed, read_across_frames=True)
        data = bytearray()
        try:
            while chunk := reader.read(1 << 20):
                data += chunk
                if len(data) > info.file_size:
                    break  # more than the directory says: a damaged member, said below
        except (zstandard.ZstdError, EOFError, OSError) as exc:
            raise UserError(f"{where} cannot be decompressed ({exc}): the log is damaged or cut short") from None
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            raise UserError(f"{where}: {len(data):,} bytes decompressed where the zip's directory says "
                            f"{info.file_size:,} with another checksum: the log is damaged or cut short")
        return bytes(data)


class _Limited(io.RawIOBase):
    """The next `size` bytes of a file, as a file: one member's compressed data."""

    def __init__(self, file, size: int) -> None:
        self.file, self.left = file, size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.left <= 0:
            return 0
        data = self.file.read(min(len(buffer), self.left))
        if not data:
            raise EOFError("the file ends inside a member")
        buffer[:len(data)] = data
        self.left -= len(data)
        return len(data)


def sample_members(members: Members) -> Iterator[str]:
    """The members that hold one sample each (`samples/<id>_epoch_<n>.json`), in the zip's order."""
    return (name for name in members.names() if name.startswith("samples/") and name.endswith(".json"))
