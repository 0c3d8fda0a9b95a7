"""A small reader for R's serialization format (its lazy-load databases: `benchmark.sources.rlazyload`).

Why it exists: the Jane Austen novels ship in the Debian package
r-cran-janeaustenr as an R lazy-load database (`data/Rdata.rdb` + `Rdata.rdx`),
and seam must read them without R. Only the standard library is used.

What it reads (documented in R's `src/main/serialize.c` and R Internals, 1.8):

- A serialized stream starts with a format byte pair: `X\\n` is XDR (big-endian
  binary), the one R writes by default and the only one read here (`A\\n` ASCII
  and `B\\n` native binary are refused with a clear error). Then three integers:
  the format version (2 or 3), the writer's R version and the oldest R version
  that can read it; version 3 adds the writer's native encoding as a
  length-prefixed string.
- Each item starts with a 32-bit flags word: SEXP type in the low 8 bits, the
  "is object" bit 8, "has attributes" bit 9, "has tag" bit 10, and the
  general-purpose "levels" in the top 20 bits (for strings, the encoding marks).
  Attributes follow a vector's data and precede a pairlist node's tag and value.
- Vector lengths are one integer, or -1 followed by two integers (high and low
  32 bits) for long vectors. NA is INT_MIN for integers and logicals, the NaN
  with low word 1954 for reals, and length -1 for a string.
- Symbols and environments are entered in a reference table as they are read;
  later occurrences are REFSXP items that carry the 1-based table index.

A whole `.rds` file (as `saveRDS` writes it, e.g. a lazy-load database's `.rdx`
index) is a serialized stream, usually gzip-compressed (`read_rds`); the lazy-load
databases themselves are `benchmark.sources.rlazyload`.

Supported: NULL, symbols, pairlists (LISTSXP, and the same layout for
closures, promises, language objects and `...`), environments (including the
global, base and empty ones), namespace and package references, strings with
their encodings, logical, integer, real, complex, raw and character vectors,
lists and expression vectors, S4 objects, built-in functions, and the ALTREP
compact sequences and wrappers that R 3.5+ writes for ordinary vectors.
Byte code, external pointers and weak references are refused. R values become
small frozen dataclasses (or None for NULL); see `RVector`.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
import struct
from dataclasses import dataclass, field
from typing import Any

from common.errors import UserError

# SEXP type codes (Rinternals.h).
NILSXP, SYMSXP, LISTSXP, CLOSXP, ENVSXP, PROMSXP, LANGSXP = 0, 1, 2, 3, 4, 5, 6
SPECIALSXP, BUILTINSXP, CHARSXP, LGLSXP = 7, 8, 9, 10
INTSXP, REALSXP, CPLXSXP, STRSXP, DOTSXP = 13, 14, 15, 16, 17
VECSXP, EXPRSXP, BCODESXP, EXTPTRSXP, WEAKREFSXP, RAWSXP, S4SXP = 19, 20, 21, 22, 23, 24, 25
# Pseudo-types that only exist in serialized streams (serialize.c).
REFSXP, NILVALUE_SXP, GLOBALENV_SXP, UNBOUNDVALUE_SXP = 255, 254, 253, 252
MISSINGARG_SXP, BASENAMESPACE_SXP, NAMESPACESXP, PACKAGESXP = 251, 250, 249, 248
PERSISTSXP, EMPTYENV_SXP, BASEENV_SXP = 247, 242, 241
ATTRLANGSXP, ATTRLISTSXP, ALTREP_SXP = 240, 239, 238

IS_OBJECT_BIT, HAS_ATTR_BIT, HAS_TAG_BIT = 1 << 8, 1 << 9, 1 << 10
# Encoding marks in a CHARSXP's levels (Defn.h).
BYTES_MASK, LATIN1_MASK, UTF8_MASK, ASCII_MASK = 1 << 1, 1 << 2, 1 << 3, 1 << 6

NA_INTEGER = -(2 ** 31)
NA_REAL_LOW_WORD = 1954

_VECTOR_KINDS = {LGLSXP: "logical", INTSXP: "integer", REALSXP: "double", CPLXSXP: "complex",
                 STRSXP: "character", VECSXP: "list", EXPRSXP: "expression", RAWSXP: "raw"}
_PAIRLIST_KINDS = {LISTSXP: "pairlist", LANGSXP: "language", CLOSXP: "closure",
                   PROMSXP: "promise", DOTSXP: "dots"}


class RDataError(UserError):
    """A file is not a well-formed R serialization, or uses a feature this reader refuses."""


@dataclass(frozen=True)
class RSymbol:
    name: str


@dataclass(frozen=True)
class RVector:
    """An atomic vector or list. NA elements are None (except NaN reals that are not NA).

    `kind` is R's `typeof`: logical, integer, double, complex, character, list,
    expression or raw (raw values are one `bytes`). `attributes` keeps R's order.
    """

    kind: str
    values: tuple
    attributes: tuple[tuple[str, Any], ...] = ()

    def attribute(self, name: str, default: Any = None) -> Any:
        for key, value in self.attributes:
            if key == name:
                return value
        return default

    @property
    def names(self) -> tuple | None:
        names = self.attribute("names")
        return names.values if isinstance(names, RVector) else None


@dataclass(frozen=True)
class RPairList:
    """A pairlist (or a closure, promise, call or `...`, which share its layout).

    `items` holds (tag or None, value) for each node, in order; `attributes` are the first node's.
    """

    kind: str
    items: tuple[tuple[str | None, Any], ...]
    attributes: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class REnvironment:
    """An environment. `name` is set for the special ones (global, base, empty).

    Its bindings are filled after the object is entered in the reference table,
    because an environment may contain references to itself.
    """

    name: str | None = None
    locked: bool = False
    bindings: dict = field(default_factory=dict, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class RReference:
    """A namespace, package or persistent reference: R stores only its name strings."""

    kind: str  # "namespace", "package" or "persistent"
    spec: tuple


@dataclass(frozen=True)
class RSpecial:
    """A value with no data: the missing argument, the unbound marker, base namespace, a builtin."""

    name: str


@dataclass(frozen=True)
class RS4:
    attributes: tuple[tuple[str, Any], ...] = ()


class _Reader:
    """Cursor over one serialized stream; every read checks that the bytes are there."""

    def __init__(self, data: bytes, name: str):
        self.data = data
        self.name = name
        self.pos = 0
        self.refs: list[Any] = []
        self.native_encoding = "UTF-8"

    def fail(self, message: str) -> RDataError:
        return RDataError(f"{self.name}: byte {self.pos}: {message}")

    def take(self, count: int) -> bytes:
        if count < 0 or self.pos + count > len(self.data):
            raise self.fail(f"expected {count} more bytes, the stream ends after {len(self.data) - self.pos}")
        chunk = self.data[self.pos:self.pos + count]
        self.pos += count
        return chunk

    def int32(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def length(self) -> int:
        value = self.int32()
        if value == -1:
            high, low = struct.unpack(">II", self.take(8))
            return (high << 32) | low
        if value < 0:
            raise self.fail(f"negative vector length {value}")
        return value

    # -- items ---------------------------------------------------------------

    def item(self) -> Any:
        flags = self.int32()
        sexptype = flags & 0xFF
        levels = flags >> 12
        has_attr = bool(flags & HAS_ATTR_BIT)
        has_tag = bool(flags & HAS_TAG_BIT)

        if sexptype == NILVALUE_SXP:
            return None
        if sexptype == REFSXP:
            index = flags >> 8 or self.int32()
            if not 1 <= index <= len(self.refs):
                raise self.fail(f"reference {index} to an object not read yet ({len(self.refs)} so far)")
            return self.refs[index - 1]
        if sexptype in (EMPTYENV_SXP, BASEENV_SXP, GLOBALENV_SXP):
            return REnvironment(name={EMPTYENV_SXP: "empty", BASEENV_SXP: "base",
                                      GLOBALENV_SXP: "global"}[sexptype])
        if sexptype in (UNBOUNDVALUE_SXP, MISSINGARG_SXP, BASENAMESPACE_SXP):
            return RSpecial({UNBOUNDVALUE_SXP: "unbound", MISSINGARG_SXP: "missing-argument",
                             BASENAMESPACE_SXP: "base-namespace"}[sexptype])
        if sexptype in (NAMESPACESXP, PACKAGESXP, PERSISTSXP):
            if self.int32() != 0:
                raise self.fail("expected 0 before a reference's name strings")
            spec = tuple(self.item() for _ in range(self.length()))
            kind = {NAMESPACESXP: "namespace", PACKAGESXP: "package", PERSISTSXP: "persistent"}[sexptype]
            value = RReference(kind, spec)
            self.refs.append(value)
            return value
        if sexptype == SYMSXP:
            name = self.item()
            if not isinstance(name, str):
                raise self.fail("expected a symbol's name string")
            value = RSymbol(name)
            self.refs.append(value)
            return value
        if sexptype == ENVSXP:
            return self.environment()
        if sexptype in _PAIRLIST_KINDS:
            return self.pairlist(sexptype, has_attr, has_tag)
        if sexptype == ALTREP_SXP:
            return self.altrep()
        if sexptype == CHARSXP:
            return self.charsxp(levels, has_attr)
        if sexptype in (SPECIALSXP, BUILTINSXP):
            value = RSpecial(self.take(self.length()).decode("ascii", "replace"))
            if has_attr:
                self.attributes()
            return value
        if sexptype == S4SXP:
            return RS4(self.attributes() if has_attr else ())
        if sexptype in _VECTOR_KINDS:
            values = self.vector_values(sexptype)
            attributes = self.attributes() if has_attr else ()
            return RVector(_VECTOR_KINDS[sexptype], values, attributes)
        if sexptype in (BCODESXP, EXTPTRSXP, WEAKREFSXP, ATTRLANGSXP, ATTRLISTSXP):
            raise self.fail(f"SEXP type {sexptype} (byte code, external pointer or weak reference) "
                            "is not supported by this reader")
        raise self.fail(f"unknown SEXP type {sexptype} in flags 0x{flags:08x}")

    def charsxp(self, levels: int, has_attr: bool) -> str | bytes | None:
        size = self.int32()
        if size == -1:
            value = None  # NA_character_
        elif size < 0:
            raise self.fail(f"negative string length {size}")
        else:
            raw = self.take(size)
            if levels & BYTES_MASK:
                value = raw
            else:
                encoding = ("latin-1" if levels & LATIN1_MASK else
                            "utf-8" if levels & (UTF8_MASK | ASCII_MASK) else self.native_encoding)
                try:
                    value = raw.decode(encoding)
                except (UnicodeDecodeError, LookupError) as exc:
                    raise self.fail(f"string is not valid {encoding}: {exc}") from None
        if has_attr:  # old streams could attach attributes to a CHARSXP; R reads and drops them
            self.item()
        return value

    def vector_values(self, sexptype: int) -> tuple:
        count = self.length()
        if sexptype in (LGLSXP, INTSXP):
            ints = struct.unpack(f">{count}i", self.take(4 * count))
            if sexptype == LGLSXP:
                return tuple(None if v == NA_INTEGER else bool(v) for v in ints)
            return tuple(None if v == NA_INTEGER else v for v in ints)
        if sexptype == REALSXP:
            raw = self.take(8 * count)
            return tuple(_real(raw[i:i + 8]) for i in range(0, len(raw), 8))
        if sexptype == CPLXSXP:
            raw = self.take(16 * count)
            parts = [struct.unpack(">d", raw[i:i + 8])[0] for i in range(0, len(raw), 8)]
            return tuple(complex(parts[i], parts[i + 1]) for i in range(0, len(parts), 2))
        if sexptype == RAWSXP:
            return (self.take(count),)
        values = tuple(self.item() for _ in range(count))
        if sexptype == STRSXP and any(v is not None and not isinstance(v, (str, bytes)) for v in values):
            raise self.fail("a character vector element is not a string")
        return values

    def attributes(self) -> tuple[tuple[str, Any], ...]:
        value = self.item()
        if not isinstance(value, RPairList):
            raise self.fail("expected an attribute pairlist")
        if any(tag is None for tag, _ in value.items):
            raise self.fail("an attribute has no name")
        return value.items

    def pairlist(self, sexptype: int, has_attr: bool, has_tag: bool) -> RPairList:
        """Read a chain of nodes iteratively (long pairlists would overflow recursion).

        A call (LANGSXP) continues with ordinary pairlist nodes for its arguments.
        Closures and promises use the node layout for other slots: the tag is the
        environment, CAR the formals (value) and CDR the body (code).
        """
        if sexptype in (CLOSXP, PROMSXP):
            attributes = self.attributes() if has_attr else ()
            environment = self.item() if has_tag else None
            first, second = self.item(), self.item()
            names = ("formals", "body") if sexptype == CLOSXP else ("value", "code")
            slots = (("environment", environment), (names[0], first), (names[1], second))
            return RPairList(_PAIRLIST_KINDS[sexptype], slots, attributes)
        items: list[tuple[str | None, Any]] = []
        attributes = self.attributes() if has_attr else ()
        while True:
            tag = self.item() if has_tag else None
            if tag is not None and not isinstance(tag, RSymbol):
                raise self.fail("expected a symbol as a pairlist tag")
            items.append((tag.name if tag else None, self.item()))
            flags = self.int32()
            if flags & 0xFF not in (sexptype, LISTSXP):
                self.pos -= 4  # the tail is an ordinary item, which must be NULL
                tail_at = self.pos
                if self.item() is not None:
                    self.pos = tail_at
                    raise self.fail("a pairlist ends in a tail that is not NULL")
                return RPairList(_PAIRLIST_KINDS[sexptype], tuple(items), attributes)
            if flags & HAS_ATTR_BIT:
                self.attributes()  # attributes on an inner node: R keeps them, nothing here needs them
            has_tag = bool(flags & HAS_TAG_BIT)

    def environment(self) -> REnvironment:
        env = REnvironment(locked=self.int32() != 0)
        self.refs.append(env)  # before the contents, which may refer back to it
        _enclosure, frame, hashtab, _attributes = self.item(), self.item(), self.item(), self.item()
        for source in (frame, *(hashtab.values if isinstance(hashtab, RVector) else ())):
            if isinstance(source, RPairList):
                for tag, value in source.items:
                    env.bindings[tag] = value
        return env

    def altrep(self) -> Any:
        """The ALTREP classes R writes for plain vectors; anything else is refused."""
        info, state, attributes = self.item(), self.item(), self.item()
        if not (isinstance(info, RPairList) and info.items and isinstance(info.items[0][1], RSymbol)):
            raise self.fail("malformed ALTREP class information")
        class_name = info.items[0][1].name
        attrs = attributes.items if isinstance(attributes, RPairList) else ()
        if class_name in ("compact_intseq", "compact_realseq"):
            if not (isinstance(state, RVector) and len(state.values) == 3):
                raise self.fail(f"malformed {class_name} state")
            count, start, step = state.values
            kind = "integer" if class_name == "compact_intseq" else "double"
            cast = int if kind == "integer" else float
            values = tuple(cast(start + i * step) for i in range(int(count)))
            return RVector(kind, values, attrs)
        if class_name.startswith("wrap_"):
            if not (isinstance(state, RVector) and state.kind == "list" and state.values):
                raise self.fail(f"malformed {class_name} state")
            inner = state.values[0]
            if not isinstance(inner, RVector):
                raise self.fail(f"{class_name} does not wrap a vector")
            return RVector(inner.kind, inner.values, attrs or inner.attributes)
        if class_name == "deferred_string":
            source = state.items[0][1] if isinstance(state, RPairList) else state
            if not isinstance(source, RVector):
                raise self.fail("malformed deferred_string state")
            texts = tuple(None if v is None else _format_number(v) for v in source.values)
            return RVector("character", texts, attrs)
        raise self.fail(f"ALTREP class {class_name!r} is not supported by this reader")


def _real(raw: bytes) -> float | None:
    value = struct.unpack(">d", raw)[0]
    if math.isnan(value) and struct.unpack(">I", raw[4:])[0] == NA_REAL_LOW_WORD:
        return None  # NA_real_
    return value


def _format_number(value: int | float) -> str:
    """How R's as.character prints a number (for deferred strings): 15 significant digits."""
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e15):
        return str(int(value))
    return f"{value:.15g}"


def unserialize(data: bytes, name: str = "<bytes>") -> Any:
    """The R object serialized (uncompressed, XDR format) in `data`; `name` is used in errors."""
    reader = _Reader(data, name)
    magic = reader.take(2) if len(data) >= 2 else b""
    if magic != b"X\n":
        kind = {b"A\n": "ASCII", b"B\n": "native binary"}.get(magic)
        what = f"the {kind} serialization format" if kind else f"bytes {magic!r}"
        raise RDataError(f"{name}: expected an R serialization in XDR format (starting 'X\\n'), found {what}")
    version = reader.int32()
    if version not in (2, 3):
        raise reader.fail(f"serialization format version {version}; this reader knows versions 2 and 3")
    reader.int32()  # R version that wrote it
    reader.int32()  # oldest R version that can read it
    if version == 3:
        reader.native_encoding = reader.take(reader.int32()).decode("ascii", "replace")
    value = reader.item()
    if reader.pos != len(data):
        raise reader.fail(f"{len(data) - reader.pos} bytes left after the object")
    return value


def read_rds(data: bytes, name: str = "<bytes>") -> Any:
    """The object in an `.rds` file's bytes (gzip, bzip2, xz or uncompressed, as saveRDS writes)."""
    try:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        elif data[:3] == b"BZh":
            data = bz2.decompress(data)
        elif data[:6] == b"\xfd7zXZ\x00":
            data = lzma.decompress(data)
    except (OSError, EOFError, ValueError, lzma.LZMAError) as exc:
        raise RDataError(f"{name}: cannot decompress: {exc}") from None
    return unserialize(data, name)
