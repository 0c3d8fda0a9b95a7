"""R's lazy-load databases (`.rdb` + `.rdx`, as an R package's `data/Rdata.*`), read without R.

A lazy-load `.rdb` is a concatenation of independently compressed serialized streams; its `.rdx` index (an
`.rds` file, `rdata.read_rds`) says where each object's slice is. Each slice is a 4-byte big-endian
uncompressed length and then a zlib stream, or (for `compress = 2` or `3`) a type byte `2` (bzip2), `Z` (xz)
or `0` (stored) before the data. The objects themselves are read by `benchmark.sources.rdata`.
"""

from __future__ import annotations

import bz2
import lzma
import struct
import zlib
from dataclasses import dataclass
from typing import Any

from benchmark.sources.rdata import RDataError, RVector, read_rds, unserialize


def decompress_slice(blob: bytes, name: str = "<bytes>") -> bytes:
    """Undo R's `R_compress1/2/3` framing of one lazy-load slice (see the module docstring)."""
    if len(blob) < 5:
        raise RDataError(f"{name}: a compressed slice needs at least 5 bytes, found {len(blob)}")
    expected = struct.unpack(">I", blob[:4])[0]
    body = blob[4:]
    try:
        if body[:1] == b"Z":
            data = lzma.decompress(body[1:])
        elif body[:1] == b"2":
            data = bz2.decompress(body[1:])
        elif body[:1] == b"0":
            data = body[1:]
        else:
            data = zlib.decompress(body)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as exc:
        raise RDataError(f"{name}: cannot decompress: {exc}") from None
    if len(data) != expected:
        raise RDataError(f"{name}: the header announces {expected} bytes, decompression gave {len(data)}")
    return data


@dataclass(frozen=True)
class LazyLoadIndex:
    """Where each variable of a lazy-load database sits in its `.rdb`: name -> (offset, length)."""

    variables: tuple[tuple[str, tuple[int, int]], ...]

    def slice_of(self, variable: str) -> tuple[int, int]:
        for name, where in self.variables:
            if name == variable:
                return where
        known = ", ".join(name for name, _ in self.variables)
        raise KeyError(f"no variable {variable!r} in the database (it has {known})")


def read_lazyload_index(rdx_bytes: bytes, name: str = "<rdx>") -> LazyLoadIndex:
    """Parse a `.rdx` file: a list with `variables` (named list of offset/length pairs)."""
    index = read_rds(rdx_bytes, name)
    if not (isinstance(index, RVector) and index.kind == "list" and index.names):
        raise RDataError(f"{name}: expected a named list (variables, references, compressed)")
    variables = dict(zip(index.names, index.values, strict=True)).get("variables")
    if not (isinstance(variables, RVector) and variables.kind == "list" and variables.names is not None):
        raise RDataError(f"{name}: the index has no named list 'variables'")
    entries = []
    for variable, where in zip(variables.names, variables.values, strict=True):
        if not (isinstance(where, RVector) and where.kind in ("integer", "double") and len(where.values) == 2
                and all(v is not None and v >= 0 for v in where.values)):
            raise RDataError(f"{name}: variable {variable!r} has no (offset, length) pair")
        entries.append((variable, (int(where.values[0]), int(where.values[1]))))
    return LazyLoadIndex(tuple(entries))


def read_lazyload_object(rdb_bytes: bytes, where: tuple[int, int], name: str = "<rdb>") -> Any:
    """The object stored at (offset, length) in a `.rdb` file's bytes."""
    offset, length = where
    if offset + length > len(rdb_bytes):
        raise RDataError(f"{name}: slice {offset}+{length} runs past the end of the file "
                         f"({len(rdb_bytes)} bytes)")
    label = f"{name}[{offset}:{offset + length}]"
    return unserialize(decompress_slice(rdb_bytes[offset:offset + length], label), label)
