"""Read a chat-log corpus object by object, in constant memory, whatever its container.

A corpus is a JSON array of conversation objects (ShareGPT's layout) or JSON
Lines (one conversation per line, as WildChat and LMSYS-Chat-1M exports are);
the first character that is not white space tells which. Its container (a plain
file, `.gz`, or a `.whl`/`.zip` member) is opened by `occurrence.corpus`; here
only its JSON text is read.

Nothing is read whole: the array is decoded with `json.JSONDecoder.raw_decode`
over a buffer refilled a megabyte at a time (grown only while one object is
larger than it), JSON Lines line by line. Every byte read is hashed on the way
(`occurrence.corpus.Counted`), so the SHA-256 of what was screened costs no
second pass.

A corpus cut short (a download stopped, a file truncated to a size limit) ends
inside its last object. That object is skipped and reported (`TruncatedTail`:
where it starts, how many bytes were lost), never an error: everything before
it was read. Damage anywhere else (a byte that is not UTF-8, JSON that cannot
continue, text after the array) is a `UserError` naming the file, the line and
the byte offset: a corpus is never half-read silently.
"""

from __future__ import annotations

import codecs
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from common import jsonl
from common.errors import UserError
from common.records import shown
from occurrence.corpus import CHUNK, Corpus

# The longest conversation read: one line of JSON Lines, or one object of an array. Past it the corpus is
# refused in one line, so that memory stays bounded however well a file compresses (a 4 MB .gz whose one
# line inflates to 4 GB reached 2.5 GB of memory). Real conversations are under a megabyte.
MAX_OBJECT_BYTES = 64 << 20
WHITE = re.compile(r"[ \t\r\n]*")
# What may stand after the last complete token of a JSON text cut short: part of a number, of a literal,
# or of a \uXXXX escape. (An unterminated string or a missing token after ':' or ',' are recognised by
# the decoder's own message and position.)
CUT_TOKEN = re.compile(r"[.eE+-]{0,2}|u[0-9a-fA-F]{0,4}|t(?:r(?:u)?)?|f(?:a(?:l(?:s)?)?)?|n(?:u(?:l)?)?")


@dataclass(frozen=True)
class TruncatedTail:
    """The end of a corpus cut short inside an object: skipped, and counted."""

    line: int  # line where the cut object starts (1-based)
    offset: int  # byte offset where it starts, in the JSON text (the member, for an archive)
    bytes: int  # bytes from there to the end: what was lost

    def to_row(self) -> dict:
        return {"line": self.line, "offset": self.offset, "bytes": self.bytes}


@dataclass(frozen=True)
class Item:
    """One top-level object of the corpus, with where it stands (for messages)."""

    value: object
    line: int
    offset: int


CONTAINERS = ("json_array", "json_lines")


class Reader:
    """Every complete top-level object of a corpus, in order. Once the iteration ends, `truncated` holds the
    tail that was cut short (or None), `container` which kind of file it was, and `oversized` the lines of
    JSON Lines too long to be a conversation, skipped (an array's such object is refused)."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.truncated: TruncatedTail | None = None
        self.container: str | None = None
        self.oversized: list[Oversized] = []  # JSON Lines past MAX_OBJECT_BYTES, read past and counted

    def __iter__(self) -> Iterator[Item]:
        first = _peek(self.corpus)
        if first == "[":
            self.container = "json_array"
            self.truncated = yield from _array(self.corpus)
        elif first == "{":
            self.container = "json_lines"
            self.truncated = yield from _lines(self.corpus, self.oversized)
        elif first == "":
            raise UserError(f"{self.corpus.name}: empty, expected a JSON array of conversations or JSON Lines")
        else:
            raise UserError(f"{self.corpus.name}: starts with {shown(first)}, expected a JSON array of "
                            "conversations ('[') or JSON Lines (one '{…}' per line)")


def _peek(corpus: Corpus) -> str:
    """The first character that is not white space (a UTF-8 byte order mark skipped), without consuming it:
    the bytes peeked at are given back to the stream."""
    head = b""
    while True:
        data = corpus.read(4096)
        head += data
        text = head.lstrip(b" \t\r\n")
        if text.startswith(codecs.BOM_UTF8):
            text = text[len(codecs.BOM_UTF8):].lstrip(b" \t\r\n")
        if text or not data:
            corpus.stream.unread(head)
            return text[:1].decode("latin-1")


class _Text:
    """The decoded text of the corpus, a window at a time, and where any position of it is in the file."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.base_bytes = 0  # bytes before buf
        self.base_line = 1  # line of buf[0]
        self.eof = False
        self.bom = True
        self.lost = 0  # bytes of an incomplete character at the very end
        self.mark = (0, 1, 0)  # (position in buf, its line, its byte offset): where `where` last counted to

    def fill(self, at_least: int = CHUNK) -> bool:
        """Append at least `at_least` bytes' worth of text; False when the file had no more."""
        if self.eof:
            return False
        data = self.corpus.read(max(at_least, CHUNK))
        if not data:  # bytes of a character cut in two by the end of the file are lost with the tail
            self.lost = len(self.decoder.getstate()[0])
            self.eof = True
            return False
        try:
            text = self.decoder.decode(data)
        except UnicodeDecodeError as exc:
            offset = self.base_bytes + len(self.buf.encode("utf-8")) + exc.start
            line = self.base_line + self.buf.count("\n") + exc.object[:exc.start].count(b"\n")
            raise UserError(f"{self.corpus.name}:{line}: byte {offset:,} (0x{exc.object[exc.start]:02X}) is not "
                            "UTF-8; the corpus is damaged") from None
        if self.bom:
            text, self.bom = text.removeprefix("\ufeff"), False
            self.base_bytes += 3 if data.startswith(codecs.BOM_UTF8) else 0
            self.mark = (0, self.base_line, self.base_bytes)
        self.buf += text
        return True

    def drop(self, pos: int) -> None:
        """Forget the text before `pos` (already read), keeping track of its bytes and lines."""
        if pos:
            self.base_line, self.base_bytes = self.where(pos)
            self.buf = self.buf[pos:]
            self.mark = (0, self.base_line, self.base_bytes)

    def where(self, pos: int) -> tuple[int, int]:
        """(line, byte offset) of buf[pos] in the file. Counted on from the last position asked for, so that
        asking for each object in turn costs one pass over the text, not one per object."""
        start, line, offset = self.mark if self.mark[0] <= pos else (0, self.base_line, self.base_bytes)
        piece = self.buf[start:pos]
        line, offset = line + piece.count("\n"), offset + len(piece.encode("utf-8"))
        self.mark = (pos, line, offset)
        return line, offset

    def skip_white(self, pos: int) -> int:
        """The position of the next character that is not white space, reading on as needed; len(buf) at EOF."""
        while True:
            pos = WHITE.match(self.buf, pos).end()
            if pos < len(self.buf):
                return pos
            self.drop(pos)
            pos = 0
            if not self.fill():
                return 0 if not self.buf else len(self.buf)


def _cut_short(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether the decoder failed only because the text ended: an unterminated string, or nothing but a
    token's beginning after the error's position."""
    return exc.msg.startswith("Unterminated string") or CUT_TOKEN.fullmatch(text[exc.pos:]) is not None


def _array(corpus: Corpus) -> Iterator[Item]:
    text = _Text(corpus)
    decoder = json.JSONDecoder()
    text.fill()
    pos = text.skip_white(0)
    pos += 1  # the "[" _peek saw
    expect_value, first = True, True
    while True:
        pos = text.skip_white(pos)
        if pos >= len(text.buf):  # the file ends between two objects: nothing of an object is lost
            line, offset = text.where(pos)
            return TruncatedTail(line, offset, text.lost)
        char = text.buf[pos]
        if not expect_value:
            if char == ",":
                pos, expect_value = pos + 1, True
                continue
            if char == "]":
                return _after_array(text, pos + 1)
            raise _damaged(text, pos, "expected ',' or ']' after a conversation object")
        if char == "]" and first:
            return _after_array(text, pos + 1)
        if char != "{":
            raise _damaged(text, pos, f"expected a conversation object ('{{'), found {shown(char)}")
        while True:
            try:
                value, end = decoder.raw_decode(text.buf, pos)
                break
            except json.JSONDecodeError as exc:
                if not _cut_short(text.buf, exc):
                    raise _damaged(text, exc.pos, f"not JSON: {exc.msg.removesuffix(' at')}") from None
                text.drop(pos)
                pos = 0
                if len(text.buf) > MAX_OBJECT_BYTES:  # characters, at least as many bytes
                    line, _ = text.where(0)
                    raise UserError(oversized(corpus, f"the object starting at line {line:,}")) from None
                if not text.fill(at_least=len(text.buf)):  # the file ends inside this object: cut short
                    line, offset = text.where(0)
                    return TruncatedTail(line, offset, len(text.buf.encode("utf-8")) + text.lost)
            except RecursionError:
                raise _damaged(text, pos, "JSON nested too deeply to read") from None
            except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
                if "integer string conversion" not in str(exc):
                    raise
                raise _damaged(text, pos, f"a number of more than {sys.get_int_max_str_digits():,} digits in "
                               "this object") from None
        line, offset = text.where(pos)
        yield Item(value, line, offset)
        pos, expect_value, first = end, False, False
        if pos > CHUNK:
            text.drop(pos)
            pos = 0


def _after_array(text: _Text, pos: int) -> None:
    pos = text.skip_white(pos)
    if pos < len(text.buf) or text.lost:
        raise _damaged(text, pos, "text after the end of the array")
    return None


def _damaged(text: _Text, pos: int, reason: str) -> UserError:
    line, offset = text.where(pos)
    return UserError(f"{text.corpus.name}:{line}: byte {offset:,}: {reason}; the corpus is damaged here (a file "
                     "cut short would end inside its last object, which is skipped and counted)")


def _skip_blank(corpus: Corpus) -> tuple[int, int]:
    """Read past a run of blank lines a chunk at a time (a readline each took minutes for a few hundred
    megabytes of them): (lines, bytes) read past; the first line with text is given back whole."""
    lines = size = 0
    while True:
        chunk = corpus.read(CHUNK)
        if not chunk:
            return lines, size
        rest = chunk.lstrip(b" \t\r\n")
        if not rest:
            lines, size = lines + chunk.count(b"\n"), size + len(chunk)
            continue
        cut = chunk.rfind(b"\n", 0, len(chunk) - len(rest)) + 1  # whole blank lines only
        corpus.stream.unread(chunk[cut:])
        return lines + chunk.count(b"\n", 0, cut), size + cut


def _lines(corpus: Corpus, oversized: list) -> Iterator[Item]:
    offset, number = 0, 0
    line, size = _line(corpus)
    while line or size:
        number += 1
        start, offset = offset, offset + (size or len(line))
        if size:  # past MAX_OBJECT_BYTES: read past in bounded memory, counted, and the screen goes on
            oversized.append(Oversized(number, start, size))
            line, size = _line(corpus)
            continue
        if number == 1:
            line = line.removeprefix(codecs.BOM_UTF8)
        if not line.strip():
            skipped, blank = _skip_blank(corpus)
            number, offset = number + skipped, offset + blank
            line, size = _line(corpus)
            continue
        following, following_size = _line(corpus)
        try:
            value = jsonl.parse(line)
        except jsonl.BadJson as exc:
            if not following and not following_size and not line.endswith(b"\n") and _line_cut_short(line):
                return TruncatedTail(number, start, len(line))
            raise UserError(f"{corpus.name}:{number}: byte {start:,}: expected one JSON object per line "
                            f"({exc.reason}); the corpus is damaged here") from None
        yield Item(value, number, start)
        line, size = following, following_size
    return TruncatedTail(number + 1, offset, 0) if corpus.cut_short() else None


@dataclass(frozen=True)
class Oversized:
    """A line of JSON Lines longer than MAX_OBJECT_BYTES, read past without being held: where it was."""

    line: int
    offset: int
    bytes: int


def _line(corpus: Corpus) -> tuple[bytes, int]:
    """The next line and 0; or, for a line past MAX_OBJECT_BYTES, b"" and its size, having read past it a
    megabyte at a time (never holding it)."""
    line = corpus.readline(MAX_OBJECT_BYTES + 1)
    if len(line) <= MAX_OBJECT_BYTES or line.endswith(b"\n"):
        return line, 0
    size = len(line)
    del line
    while True:
        chunk = corpus.read(CHUNK)
        if not chunk:
            return b"", size
        end = chunk.find(b"\n")
        if end >= 0:
            corpus.stream.unread(chunk[end + 1:])
            return b"", size + end + 1
        size += len(chunk)


def _line_cut_short(line: bytes) -> bool:
    """Whether a last line (no newline after it) that does not parse fails only because the file ends there:
    inside a string, a token, or a character's bytes, with nothing wrong before. Anything else (a whole object
    and more after it, bytes that are not UTF-8, a wrong token) is damage, not a cut.

    >>> _line_cut_short(b'{"id": "a", "messages": [{"content": "Gr\\xc3'), _line_cut_short(b'{"id": "a"} xx')
    (True, False)
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(line)  # not final: the bytes of a character cut in two are held back, not refused
    except UnicodeDecodeError:
        return False
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return _cut_short(text, exc)
    except (RecursionError, ValueError):
        return False
    return False  # a whole object, then part of a character: garbage after it


def oversized(corpus: Corpus, what: str) -> str:
    return (f"{corpus.name}: {what} holds more than {MAX_OBJECT_BYTES >> 20} MiB of JSON, more than any "
            "conversation; refused, so that memory stays bounded (a compressed file can inflate to gigabytes): "
            "leave that conversation out of the corpus")
