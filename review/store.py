"""Reading a review file, and appending an answer to it so that no acknowledged answer is ever lost.

`seam.py review sample` writes the file whole (atomically). From then on the only
writes are answers, appended by the review page's server one line at a time:
one `os.write` of the complete line to a file opened with O_APPEND, then
`fsync`, and only then the reply to the browser. A kill of the server at any
moment therefore leaves every answer the page showed as saved on disk; a power
cut in the middle of a write can at worst leave a torn last line, which was never
acknowledged. The server moves such bytes aside (`<file>.torn`) when it starts;
the report refuses a file that still has them. While a server runs, it holds an
exclusive lock on the file, so that two servers cannot interleave answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from common import files, jsonl
from common.errors import UserError
from common.files import append_durable, set_aside_tail
from common.records import shown
from review.records import ROW_KINDS, Answer, Case, Header


@dataclass(frozen=True)
class ReviewFile:
    """A review file as read: its header, its cases (in case order), its answers (in file order)."""

    path: Path
    header: Header
    cases: tuple[Case, ...]
    answers: tuple[Answer, ...]
    torn: int  # bytes after the last newline, left by a crash mid-write (0: none)
    size: int  # bytes up to and including the last newline

    @property
    def reviewer(self) -> str | None:
        """The file's one reviewer (the name on its answers), or None before the first answer."""
        return self.answers[0].reviewer if self.answers else None

    def latest(self) -> dict[int, Answer]:
        """The answer in force per case number: the last one given (earlier ones stay in the file)."""
        return {answer.case: answer for answer in self.answers}

    def first_unanswered(self, after: int = 0) -> int | None:
        """The first case number above `after` without an answer, wrapping round; None when all are answered."""
        return first_unanswered([case.case for case in self.cases], self.latest(), after)


def first_unanswered(numbers: list[int], latest, after: int = 0) -> int | None:
    """The first case number after `after` (wrapping round) without an answer in `latest`, or None.

    >>> first_unanswered([1, 2, 3], {2: "yes"}, after=1), first_unanswered([1], {1: "no"})
    (3, None)
    """
    for number in numbers[after:] + numbers[:after]:
        if number not in latest:
            return number
    return None


def read(path: str | Path, *, allow_torn: bool = False) -> ReviewFile:
    """Read and check a review file: a header, then cases numbered 1..n, then answers of one reviewer.

    A torn last line is refused unless `allow_torn` (then its size is in `torn`, for the server to move aside).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: no such review file (make one with 'seam.py review sample')") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a review file (JSON Lines)") from None
    if data and not data.lstrip().startswith(b"{"):  # binary data, another format: no torn line to repair
        raise UserError(f"{path}: not a review file (it does not start with a JSON object; expected the JSON Lines "
                        "that 'seam.py review sample' writes)")
    end = data.rfind(b"\n") + 1
    torn = len(data) - end
    if torn and not data[end:].lstrip().startswith(b"{"):
        line = data[:end].count(b"\n") + 1
        raise UserError(f"{path}:{line}: the bytes after the last line ({torn}) are not the start of a row: the file "
                        "is damaged there, not cut by a crash mid-write")
    if torn and not allow_torn:
        line = data[:end].count(b"\n") + 1
        raise UserError(f"{path}:{line}: the last line is torn ({torn} bytes without a final newline, left by a "
                        "crash mid-write, never acknowledged to the reviewer); start 'seam.py review serve' on "
                        "the file once, which moves those bytes aside")
    header: Header | None = None
    cases: list[Case] = []
    answers: list[Answer] = []
    ids: dict[tuple[str, str], str] = {}
    for index, raw in enumerate(data[:end].split(b"\n")[:-1]):
        where = f"{path}:{index + 1}"
        row = _parse(raw, where)
        kind = row.get("kind")
        if kind not in ROW_KINDS:
            raise UserError(f"{where}: field 'kind' is {shown(kind)}, expected one of {', '.join(ROW_KINDS)}")
        if (kind == "header") != (index == 0):
            raise UserError(f"{where}: " + ("a review file begins with its header row" if index == 0
                                            else "a second header row"))
        if kind == "header":
            header = Header.from_row(row, where)
        elif kind == "case":
            if answers:
                raise UserError(f"{where}: a case row after the answers began")
            case = Case.from_row(row, where)
            if case.case != len(cases) + 1:
                raise UserError(f"{where}: case number {case.case}, expected {len(cases) + 1} (cases are numbered "
                                "1, 2, … in file order)")
            if (case.model, case.id) in ids:
                raise UserError(f"{where}: {case.model} {case.id} is already case at {ids[case.model, case.id]}")
            ids[case.model, case.id] = where
            cases.append(case)
        else:
            answer = Answer.from_row(row, where)
            _check_answer(answer, cases, answers, where)
            answers.append(answer)
    if header is None:
        raise UserError(f"{path}: empty, expected a review file made by 'seam.py review sample'")
    if not cases:
        raise UserError(f"{path}: no case rows")
    return ReviewFile(path, header, tuple(cases), tuple(answers), torn, end)


def _parse(raw: bytes, where: str) -> dict:
    try:
        row = jsonl.parse(raw)
    except jsonl.BadJson as exc:
        raise UserError(f"{where}: expected one JSON object per line ({exc.reason})") from None
    if not isinstance(row, dict):
        raise UserError(f"{where}: expected a JSON object, found {jsonl.kind(row)}")
    return row


def _check_answer(answer: Answer, cases: list[Case], answers: list[Answer], where: str) -> None:
    if answer.case > len(cases):
        raise UserError(f"{where}: an answer to case {answer.case}, but the file has {len(cases)} cases")
    case = cases[answer.case - 1]
    if (answer.model, answer.id) != (case.model, case.id):
        raise UserError(f"{where}: an answer to case {answer.case} names {answer.model} {answer.id}, but case "
                        f"{answer.case} is {case.model} {case.id}")
    if answers and answer.reviewer != answers[0].reviewer:
        raise UserError(f"{where}: reviewer {shown(answer.reviewer)}, but earlier answers are "
                        f"{shown(answers[0].reviewer)}'s; a review file holds one reviewer's answers")


def move_torn_tail(review: ReviewFile) -> Path | None:
    """Move a torn last line (never acknowledged) to `<file>.torn` and cut the file back to its last newline."""
    return set_aside_tail(review.path, review.size) if review.torn else None


def append(path: str | Path, answer: Answer) -> None:
    """Append one answer and make it durable before returning; a failed write leaves the file as it was.

    The line goes out in one `os.write` on an O_APPEND descriptor (looping only if the system writes
    less), then `fsync`. On any error the file is cut back to its size before the write, so a full
    disk never leaves half a line, and the error is a `UserError` the page shows: that answer was not
    saved.
    """
    data = jsonl.dumps(answer.to_row()).encode("utf-8")
    try:
        append_durable(path, data)
    except OSError as exc:
        raise UserError(f"{path}: the answer to case {answer.case} was NOT saved: {exc.strerror or exc}") from None


def locked(path: str | Path):
    """Hold an exclusive lock on the review file (`common.files.locked`): one server per file."""
    return files.locked(path, what="review file", made_by="seam.py review sample", served_by="seam.py review serve")
