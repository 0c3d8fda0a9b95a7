"""`seam.py occurrence screen`: stream a corpus, keep the user messages that have the seam's shape.

Every user turn is given to `segment.find_seam`; each one that has the shape
becomes a `Candidate` row: where the message is, the SHA-256 of its UTF-8 bytes,
its seam's offsets and the features that fired, and never its text. A message
repeated in the corpus (the same bytes in another conversation or turn) is a
candidate each time, numbered by `repeat`; the unique candidates are the rows
with repeat 1, the count the paper reports.

The corpus is read in constant memory (`occurrence.stream`); only the rows and
the set of message checksums seen grow, by about 600 bytes a candidate together
(and 1.2 kB more each while the file is written).
The file is written whole at the end (atomically): a header with the corpus's
checksums and the counts, then the rows in corpus order.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.errors import UserError
from common.seams.segment import find_seam
from occurrence import SCREEN_VERSION
from occurrence.corpus import Corpus, file_sha256, open_corpus
from occurrence.progress import Progress
from occurrence.records import OCCURRENCE_VERSION, Candidate, CorpusRef, ScreenHeader, Truncated
from occurrence.shapes import FORMATS, Conversation, conversation
from occurrence.stream import Reader


@dataclass(frozen=True)
class Screened:
    header: ScreenHeader
    candidates: tuple[Candidate, ...]

    def rows(self) -> list[dict]:
        return [self.header.to_row(), *(candidate.to_row() for candidate in self.candidates)]


def message_sha256(text: str) -> str:
    """The SHA-256 of a message's UTF-8 bytes (a lone surrogate, which JSON allows, as its escape's bytes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def conversations(corpus: Corpus, fmt: str, reader: Reader):
    """The corpus's conversations, read by the shape of `fmt`. A first row of another shape is most likely a
    wrong --format, and the error says so."""
    for index, item in enumerate(reader):
        try:
            yield conversation(item.value, fmt, index, f"{corpus.name}:{item.line}")
        except UserError as exc:
            if index:
                raise
            raise UserError(f"{exc}; the first conversation, read as --format {fmt}: is that this corpus's row "
                            f"shape? (one of {', '.join(FORMATS)}; docs/OCCURRENCE.md, 'Corpora')") from None


def candidates_of(chat: Conversation, part: int, seen: dict[str, int]) -> list[Candidate]:
    """The candidates among one conversation's user turns (of corpus file `part`); `seen` counts each message
    checksum met so far."""
    found = []
    for number, turn in enumerate(chat.turns):
        if not turn.user:
            continue
        seam = find_seam(turn.text)
        if seam is None:
            continue
        digest = message_sha256(turn.text)
        seen[digest] = seen.get(digest, 0) + 1
        found.append(Candidate(
            kind="candidate", corpus=part, conversation=chat.id, index=chat.index, turn=number,
            message_sha256=digest, repeat=seen[digest], chars=len(turn.text), artifact_kind=seam.artifact_kind,
            separator=seam.separator, lead_end=seam.lead_end, artifact_start=seam.artifact_start,
            artifact_end=seam.artifact_end, remark_start=seam.remark_start, remark_end=seam.remark_end,
            lead_words=seam.lead_words, artifact_lines=seam.artifact_lines, artifact_words=seam.artifact_words,
            remark_lines=seam.remark_lines, remark_words=seam.remark_words, features=seam.features))
    return found


@dataclass
class Tally:
    """What the screen has counted so far, over every corpus file."""

    conversations: int = 0
    turns: int = 0
    user_turns: int = 0

    def line(self, candidates: int) -> str:
        return f"{self.conversations:,} conversations · {candidates:,} candidates"


def screen_file(path: str | Path, fmt: str, part: int, *, member: str | None, tally: Tally, seen: dict[str, int],
                rows, log) -> CorpusRef:
    """Screen one corpus file into `rows`; what was read, as the header records it."""
    corpus = open_corpus(path, member)
    try:
        reader = Reader(corpus)
        progress = Progress(log, f"screen {corpus.path.name}", corpus.total, "messages/s")
        start_users, chats = tally.user_turns, 0
        for chat in conversations(corpus, fmt, reader):
            chats += 1
            tally.conversations += 1
            tally.turns += len(chat.turns)
            tally.user_turns += sum(turn.user for turn in chat.turns)
            rows.extend(candidates_of(chat, part, seen))
            progress.update(corpus.position(), tally.user_turns - start_users, tally.line(len(rows)))
        progress.update(corpus.position(), tally.user_turns - start_users, tally.line(len(rows)), final=True)
        text_sha256, text_bytes = corpus.stream.digest.hexdigest(), corpus.stream.count
    finally:
        corpus.close()
    if chats == 0:
        raise UserError(f"{corpus.name}: no complete conversation in it")
    whole = file_sha256(corpus) if (corpus.member or corpus.path.suffix == ".gz") else text_sha256
    tail = reader.truncated
    return CorpusRef(file=corpus.path.name, member=corpus.member, sha256=whole, text_sha256=text_sha256,
                     text_bytes=text_bytes, format=fmt, container=reader.container or "", conversations=chats,
                     truncated=None if tail is None else Truncated(tail.line, tail.offset, tail.bytes),
                     oversized=len(reader.oversized))


class _Spooled:
    """The candidate rows on their way to a `common.files.Spool` instead of a list: memory stays flat
    however many candidates (3.8 million copies of one message filled 2.5 GB as a list)."""

    def __init__(self, spool) -> None:
        self.spool = spool

    def extend(self, found) -> None:
        for candidate in found:
            self.spool.add(jsonl.dumps(candidate.to_row()).encode("utf-8"))

    def __len__(self) -> int:
        return self.spool.lines


def screen(paths, fmt: str, *, member: str | None = None, log=None, spool=None) -> Screened:
    """Screen every user turn of the corpus files `paths` (read as `fmt`), in order; progress goes to `log`
    (stderr). `member` names the file inside each archive. With `spool` (a `common.files.Spool`), the rows
    are written to it as they are found and the result holds none (`write` then commits the file)."""
    log = sys.stderr if log is None else log
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    seen_paths: dict[Path, str] = {}
    for path in paths:  # the same file twice would be screened, and counted, twice
        resolved = Path(path).resolve()
        if resolved in seen_paths:
            raise UserError(f"{path}: given twice (also as {seen_paths[resolved]}); give each corpus file once")
        seen_paths[resolved] = str(path)
    rows = [] if spool is None else _Spooled(spool)
    seen: dict[str, int] = {}
    tally = Tally()
    refs = tuple(screen_file(path, fmt, part, member=member, tally=tally, seen=seen, rows=rows, log=log)
                 for part, path in enumerate(paths))
    header = ScreenHeader(
        kind="header", occurrence_version=OCCURRENCE_VERSION, screen_version=SCREEN_VERSION,
        created_by=ScreenHeader.CREATED_BY, corpora=refs, conversations=tally.conversations, turns=tally.turns,
        user_turns=tally.user_turns, candidates=len(rows), unique_candidates=len(seen))
    return Screened(header, tuple(rows) if spool is None else ())


def write(screened: Screened, out: str | Path, spool=None) -> None:
    """The candidates file, written whole (atomically): the rows of `screened`, or those of `spool`."""
    if spool is None:
        jsonl.write(out, screened.rows(), "candidates")
    else:
        spool.commit(jsonl.dumps(screened.header.to_row()).encode("utf-8"))


def screen_to(paths, fmt: str, out: str | Path, *, member: str | None = None, log=None) -> Screened:
    """Screen into the candidates file `out`, each row written as it is found (the command's way)."""
    from common.files import Spool

    spool = Spool(out, "candidates")
    try:
        screened = screen(paths, fmt, member=member, log=log, spool=spool)
    except BaseException:
        spool.discard()
        raise
    write(screened, out, spool)
    return screened
