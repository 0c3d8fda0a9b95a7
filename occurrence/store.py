"""Reading the occurrence files back, checked row by row, and appending an answer to a sample file.

Every reader refuses what is not the file it expects (a candidates file given
as a sample, a row of another kind, counts in the header that the rows do not
bear out), naming file and line, so that a report can never count the wrong
file. The sample file is an answer file (`common.answerfile`, as the review
file is): written whole by `sample`, then only ever appended to, one answer at
a time with an fsync, a torn last line moved aside before the next session,
one reviewer, one server. `SAMPLE_FILE` says what is the sample's own: its
words, its commands, its rows, and that a case is one message (its SHA-256).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from common import jsonl
from common.answerfile import AnswerFile, AnswerFormat
from common.errors import UserError
from common.reading import read_bytes
from occurrence.records import (
    Answer,
    Candidate,
    Case,
    Judged,
    JudgeHeader,
    SampleHeader,
    ScreenHeader,
)


def _complete(path: Path, what: str) -> bytes:
    """The file's bytes, which must end with a complete line (a candidates or judged file is written whole)."""
    try:
        data = read_bytes(path, f"a {what} file (JSON Lines)")
    except FileNotFoundError:
        raise UserError(f"{path}: no such {what} file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a {what} file (JSON Lines)") from None
    end = data.rfind(b"\n") + 1
    if end < len(data):
        line = data[:end].count(b"\n") + 1
        raise UserError(f"{path}:{line}: the last line is torn ({len(data) - end} bytes without a final newline)")
    return data


def _rows(path: Path, what: str):
    """(where, row) for each line of a file that may not end torn."""
    return jsonl.parse_lines(path, _complete(path, what))


def _header(where: str, row: dict, kind: type, what: str):
    if row.get("kind") != "header" or row.get("created_by") != kind.CREATED_BY:
        raise UserError(f"{where}: not a {what} file: its first row must be the header written by "
                        f"'{kind.CREATED_BY}'")
    return kind.from_row(row, where)


def _expect(where: str, row: dict, kind: str) -> None:
    if row.get("kind") != kind:
        raise UserError(f"{where}: a row of kind {row.get('kind')!r}, expected {kind!r}")


@dataclass(frozen=True)
class CandidatesFile:
    path: Path
    header: ScreenHeader
    candidates: tuple[Candidate, ...]

    def unique(self) -> list[Candidate]:
        """The first candidate of each message checksum, in file order."""
        return [candidate for candidate in self.candidates if candidate.repeat == 1]


def read_candidates(path: str | Path) -> CandidatesFile:
    """A candidates file, with its header's counts checked against its rows."""
    path = Path(path)
    header, rows, seen = None, [], {}
    for where, row in _rows(path, "candidates"):
        if header is None:
            header = _header(where, row, ScreenHeader, "candidates")
            continue
        _expect(where, row, "candidate")
        candidate = Candidate.from_row(row, where)
        seen[candidate.message_sha256] = seen.get(candidate.message_sha256, 0) + 1
        if candidate.repeat != seen[candidate.message_sha256]:
            raise UserError(f"{where}: repeat {candidate.repeat}, but this is occurrence "
                            f"{seen[candidate.message_sha256]} of its message_sha256 in the file")
        rows.append(candidate)
    if header is None:
        raise UserError(f"{path}: empty, expected a candidates file made by 'seam.py occurrence screen'")
    if (header.candidates, header.unique_candidates) != (len(rows), len(seen)):
        raise UserError(f"{path}: the header counts {header.candidates} candidates ({header.unique_candidates} "
                        f"unique), the file holds {len(rows)} ({len(seen)} unique)")
    return CandidatesFile(path, header, tuple(rows))


@dataclass(frozen=True)
class JudgedFile:
    path: Path
    header: JudgeHeader
    judged: tuple[Judged, ...]


def read_judged(path: str | Path) -> JudgedFile:
    """A judged file, with its header's counts checked against its rows."""
    path = Path(path)
    header, rows = None, []
    for where, row in _rows(path, "judged"):
        if header is None:
            header = _header(where, row, JudgeHeader, "judged")
            continue
        _expect(where, row, "judged")
        rows.append(Judged.from_row(row, where))
    if header is None:
        raise UserError(f"{path}: empty, expected a judged file made by 'seam.py occurrence judge'")
    counts = {verdict: sum(row.verdict == verdict for row in rows) for verdict in ("yes", "no", "unparsable",
                                                                                   "unanswered")}
    if header.judged != len(rows) or any(getattr(header, name) != value for name, value in counts.items()):
        raise UserError(f"{path}: the header's counts do not match its {len(rows)} rows")
    return JudgedFile(path, header, tuple(rows))


SampleFile = AnswerFile[SampleHeader, Case, Answer]  # a sample file as read (`read_sample`)

SAMPLE_FILE: AnswerFormat[SampleHeader, Case, Answer] = AnswerFormat(
    what="sample file", made_by=SampleHeader.CREATED_BY, served_by="seam.py occurrence annotate", verb="answers",
    header=SampleHeader, case=Case, answer=Answer,
    about=lambda row: row.message_sha256, named=lambda row: f"message {row.message_sha256[:12]}…")


def read_sample(path: str | Path, *, allow_torn: bool = False) -> SampleFile:
    """A sample file: header, cases numbered 1..n, then the answers of one reviewer (`common.answerfile`)."""
    return SAMPLE_FILE.read(path, allow_torn=allow_torn)


def locked(path: str | Path):
    """Hold an exclusive lock on the sample file while its page is served (`common.files.locked`)."""
    return SAMPLE_FILE.locked(path)


def append_answer(path: str | Path, answer: Answer) -> None:
    """Append one answer durably; a failure is a `UserError` saying it was not saved, and leaves the file as it
    was (`common.answerfile.AnswerFormat.append`)."""
    SAMPLE_FILE.append(path, answer)
