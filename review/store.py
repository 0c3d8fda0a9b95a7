"""The review file as an answer file: read, append one answer durably, lock, move a torn tail aside.

`seam.py review sample` writes the file whole (atomically). From then on the only
writes are answers, appended by the review page's server one line at a time, each
fsynced before the browser is told it was saved; a torn last line (a power cut
mid-write, never acknowledged) is moved aside (`<file>.torn`) when the server starts,
and the report refuses a file that still has one; while a server runs it holds an
exclusive lock on the file. That discipline is `common.answerfile`'s, shared with the
occurrence audit's sample files; this module says what is the review's own: its
words, its commands, its rows, and that a case is one model's output.
"""

from __future__ import annotations

from pathlib import Path

from common.answerfile import AnswerFile, AnswerFormat
from review.records import CREATED_BY, Answer, Case, Header

ReviewFile = AnswerFile[Header, Case, Answer]  # a review file as read (`read`)

REVIEW_FILE: AnswerFormat[Header, Case, Answer] = AnswerFormat(
    what="review file", made_by=CREATED_BY, served_by="seam.py review serve", verb="reviews",
    header=Header, case=Case, answer=Answer,
    about=lambda row: (row.model, row.id), named=lambda row: f"{row.model} {row.id}",
    more=" (docs/REVIEW.md, 'A second reviewer')")


def read(path: str | Path, *, allow_torn: bool = False) -> ReviewFile:
    """Read and check a review file: a header, then cases numbered 1..n, then answers of one reviewer.

    A torn last line is refused unless `allow_torn` (then its size is in `torn`, for the server to move aside).
    """
    return REVIEW_FILE.read(path, allow_torn=allow_torn)


def append(path: str | Path, answer: Answer) -> None:
    """Append one answer and make it durable before returning; a failed write leaves the file as it was."""
    REVIEW_FILE.append(path, answer)


def locked(path: str | Path):
    """Hold an exclusive lock on the review file (`common.files.locked`): one server per file."""
    return REVIEW_FILE.locked(path)
