"""Answer files: a header, numbered cases, then one reviewer's answers, appended one durable line at a time.

Two commands draw such a file and answer it on a local page: `seam.py review sample` and
`review serve` (a person checks the scorer's verdicts, docs/REVIEW.md), and `seam.py
occurrence sample` and `occurrence annotate` (a person checks that messages have the
shape, docs/OCCURRENCE.md). Their rows differ, but the way the file is kept is the
same, so it is written once, here, below both: neither imports the other.

- `sample` writes the file whole. From then on the file is only appended to: one answer
  per line, written with one `os.write` and `fsync`ed before the page moves on
  (`common.files.append_durable`), so a kill loses no answer the page confirmed.
- A later answer to a case replaces an earlier one in `latest`; both stay in the file.
- One reviewer per file (another name is refused, `session_reviewer`) and one server
  per file (`AnswerFormat.locked`).
- A torn last line (a write cut off by a power loss, never confirmed) is moved to
  `<file>.torn` when a page session opens (`AnswerFormat.open`), and every other reader
  refuses the file. Bytes after the last line that cannot start a row are damage, not
  a torn write, and are refused too.

An `AnswerFormat` describes one kind of answer file: what messages call it, the commands
that make and serve it, its three row types, and which output or message a case is
about. It reads, appends to, locks and opens files of that kind. `FileRef` is how both
kinds record the files they were drawn from.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from common import files, jsonl
from common.errors import UserError
from common.reading import read_bytes
from common.rows import Record, exact_fields, field, sha256, shown, text

REVIEWER_LIMIT = 100  # characters of a reviewer's name
ROW_KINDS = ("header", "case", "answer")  # what each row says it is, in `kind`, in the order they come
H = TypeVar("H")
C = TypeVar("C")
A = TypeVar("A")


@dataclass(frozen=True)
class FileRef(Record):
    """An input file as it was named on the command line, with the SHA-256 of its bytes (and, for a trace
    file, its model): an answer file records what it was drawn from, so that a changed input is refused."""

    path: str
    sha256: str
    model: str | None = None

    WHEN_SET: ClassVar[frozenset[str]] = frozenset({"model"})

    @classmethod
    def from_row(cls, row: Any, where: str, *, with_model: bool = False) -> FileRef:
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected a file object (path, sha256)")
        exact_fields(row, cls, where, allowed=("path", "sha256", "model") if with_model else ("path", "sha256"))
        return cls(text(row, "path", where), sha256(row, "sha256", where),
                   text(row, "model", where) if with_model else None)


def check_reviewer(name: str, where: str = "--reviewer") -> str:
    """A reviewer's name: printable, at most 100 characters, not blank (it is printed and compared).

    >>> check_reviewer("ada")
    'ada'
    >>> check_reviewer(" ")
    Traceback (most recent call last):
    ...
    common.errors.UserError: --reviewer: ' ' is blank or not printable, expected a name of at most 100 characters
    """
    if not name.strip() or not name.isprintable() or len(name) > REVIEWER_LIMIT:
        raise UserError(f"{where}: {shown(name)} is blank or not printable, expected a name of at most "
                        f"{REVIEWER_LIMIT} characters")
    return name


def reviewer(row: dict, where: str) -> str:
    """An answer row's `reviewer`: a name `check_reviewer` takes."""
    return check_reviewer(text(row, "reviewer", where), where)


def note(row: dict, where: str, limit: int) -> str:
    """An answer row's `note`: the reviewer's own words, "" for none, at most `limit` characters.

    >>> note({"note": "abc"}, "f.jsonl:3", 2)
    Traceback (most recent call last):
    ...
    common.errors.UserError: f.jsonl:3: the note has 3 characters, expected at most 2
    """
    value = field(row, "note", (str,), where, "a string")
    if len(value) > limit:
        raise UserError(f"{where}: the note has {len(value):,} characters, expected at most {limit:,}")
    return value


def answered_now() -> str:
    """The time of an answer being given, in UTC ISO 8601 to the millisecond ("…T03:04:05.678Z"). It is the one
    field of an answer file that cannot be reproduced, because it records when a person answered."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def session_reviewer(path, given: str | None, recorded: str | None, *, file: str, verb: str,
                     more: str = "") -> str:
    """Who a page session answers as: the name given, else the one on the file's answers. Refused: no name
    at all (before the first answer), a bad name, and a second reviewer on a file that holds one's answers
    (`file` names the file, `verb` what the reviewer does, `more` points to help).

    >>> session_reviewer("s.jsonl", None, "ada", file="review file", verb="reviews")
    'ada'
    >>> session_reviewer("s.jsonl", "bob", "ada", file="sample file", verb="answers")
    Traceback (most recent call last):
    ...
    common.errors.UserError: s.jsonl: holds the answers of reviewer 'ada'; a sample file holds one reviewer's ...
    """
    if given is None:
        if recorded is None:
            raise UserError(f"{path}: no answers yet; say who {verb} with --reviewer NAME")
        given = recorded
    check_reviewer(given)
    if recorded is not None and recorded != given:
        raise UserError(f"{path}: holds the answers of reviewer {recorded!r}; a {file} holds one reviewer's "
                        f"answers, so {given!r} needs their own copy{more}")
    return given


def first_unanswered(numbers: list[int], latest, after: int = 0) -> int | None:
    """The first case number after `after` (wrapping round) without an answer in `latest`, or None.

    >>> first_unanswered([1, 2, 3], {2: "yes"}, after=1), first_unanswered([1], {1: "no"})
    (3, None)
    """
    for number in numbers[after:] + numbers[:after]:
        if number not in latest:
            return number
    return None


@dataclass(frozen=True)
class AnswerFile(Generic[H, C, A]):
    """An answer file as read: its header, its cases (in case order), its answers (in file order)."""

    path: Path
    header: H
    cases: tuple[C, ...]
    answers: tuple[A, ...]
    torn: int  # bytes after the last newline, left by a crash mid-write (0: none)
    size: int  # bytes up to and including the last newline

    @property
    def reviewer(self) -> str | None:
        """The file's one reviewer (the name on its answers), or None before the first answer."""
        return self.answers[0].reviewer if self.answers else None

    def latest(self) -> dict[int, A]:
        """The answer in force per case number: the last one given (earlier ones stay in the file)."""
        return {answer.case: answer for answer in self.answers}

    def first_unanswered(self, after: int = 0) -> int | None:
        """The first case number above `after` without an answer, wrapping round; None when all are answered."""
        return first_unanswered([case.case for case in self.cases], self.latest(), after)


def move_torn_tail(file: AnswerFile) -> Path | None:
    """Move a torn last line (never acknowledged) to `<file>.torn` and cut the file back to its last newline."""
    return files.set_aside_tail(file.path, file.size) if file.torn else None


@dataclass(frozen=True)
class AnswerFormat(Generic[H, C, A]):
    """One kind of answer file: its words and commands for the messages, its row types, and what a case is
    about (`about`: the same for a case and the answers to it; `named`: that, as a message names it)."""

    what: str  # "review file"
    made_by: str  # the command that draws it: "seam.py review sample"
    served_by: str  # the command that serves its page: "seam.py review serve"
    verb: str  # what its reviewer does ("say who reviews with --reviewer NAME")
    header: type[H]
    case: type[C]
    answer: type[A]
    about: Callable[[Any], Hashable]
    named: Callable[[Any], str]
    more: str = ""  # where a second reviewer is told what to do

    def read(self, path: str | Path, *, allow_torn: bool = False) -> AnswerFile[H, C, A]:
        """Read and check the file: a header, then cases numbered 1..n, then answers of one reviewer. A torn last
        line is refused unless `allow_torn` (then its size is in `torn`, for a page session to move aside)."""
        path = Path(path)
        complete, torn = self._complete(path, allow_torn)
        header, cases, answers, first = None, [], [], {}
        for where, row in jsonl.parse_lines(path, complete):
            kind = row.get("kind")
            if kind not in ROW_KINDS:
                raise UserError(f"{where}: field 'kind' is {shown(kind)}, expected one of {', '.join(ROW_KINDS)}")
            if (kind == "header") != (header is None):
                raise UserError(f"{where}: " + (f"a {self.what} begins with its header row" if header is None
                                                else "a second header row"))
            if kind == "header":
                if row.get("created_by") != self.made_by:
                    raise UserError(f"{where}: not a {self.what}: its first row must be the header written by "
                                    f"'{self.made_by}'")
                header = self.header.from_row(row, where)
            elif kind == "case":
                cases.append(self._case(row, where, cases, bool(answers), first))
            else:
                answers.append(self._answer(row, where, cases, answers))
        if header is None:
            raise UserError(f"{path}: empty, expected a {self.what} made by '{self.made_by}'")
        if not cases:
            raise UserError(f"{path}: no case rows")
        return AnswerFile(path, header, tuple(cases), tuple(answers), torn, len(complete))

    def _complete(self, path: Path, allow_torn: bool) -> tuple[bytes, int]:
        """The file's bytes up to its last newline, and how many follow (a torn last line)."""
        try:
            data = read_bytes(path, f"a {self.what} (JSON Lines)")
        except FileNotFoundError:
            raise UserError(f"{path}: no such {self.what} (make one with '{self.made_by}')") from None
        except IsADirectoryError:
            raise UserError(f"{path}: is a directory, expected a {self.what} (JSON Lines)") from None
        if data and not data.lstrip().startswith(b"{"):  # binary data, another format: no torn line to repair
            raise UserError(f"{path}: not a {self.what} (it does not start with a JSON object; expected the JSON "
                            f"Lines that '{self.made_by}' writes)")
        end = data.rfind(b"\n") + 1
        torn = len(data) - end
        line = data[:end].count(b"\n") + 1
        if torn and not data[end:].lstrip().startswith(b"{"):
            raise UserError(f"{path}:{line}: the bytes after the last line ({torn}) are not the start of a row: the "
                            "file is damaged there, not cut by a crash mid-write")
        if torn and not allow_torn:
            raise UserError(f"{path}:{line}: the last line is torn ({torn} bytes without a final newline, left by a "
                            "crash mid-write, never acknowledged to the reviewer); start "
                            f"'{self.served_by}' on the file once, which moves those bytes aside")
        return data[:end], torn

    def _case(self, row: dict, where: str, cases: list, answered: bool, first: dict) -> C:
        if answered:
            raise UserError(f"{where}: a case row after the answers began")
        case = self.case.from_row(row, where)
        if case.case != len(cases) + 1:
            raise UserError(f"{where}: case number {case.case}, expected {len(cases) + 1} (cases are numbered "
                            "1, 2, … in file order)")
        if self.about(case) in first:
            raise UserError(f"{where}: {self.named(case)} is already case at {first[self.about(case)]}")
        first[self.about(case)] = where
        return case

    def _answer(self, row: dict, where: str, cases: list, answers: list) -> A:
        answer = self.answer.from_row(row, where)
        if answer.case > len(cases):
            raise UserError(f"{where}: an answer to case {answer.case}, but the file has {len(cases)} cases")
        case = cases[answer.case - 1]
        if self.about(answer) != self.about(case):
            raise UserError(f"{where}: an answer to case {answer.case} names {self.named(answer)}, but case "
                            f"{answer.case} is {self.named(case)}")
        if answers and answer.reviewer != answers[0].reviewer:
            raise UserError(f"{where}: reviewer {shown(answer.reviewer)}, but earlier answers are by "
                            f"{shown(answers[0].reviewer)}; a {self.what} holds one reviewer's answers")
        return answer

    def append(self, path: str | Path, answer: A) -> None:
        """Append one answer and make it durable before returning; a failed write leaves the file as it was.

        The line goes out in one `os.write` on an O_APPEND descriptor, then `fsync`
        (`common.files.append_durable`). On any error the file is cut back to its size before the write, so
        a full disk never leaves half a line, and the error is a `UserError` the page shows: that answer was
        not saved.
        """
        data = jsonl.dumps(answer.to_row()).encode("utf-8")
        try:
            files.append_durable(path, data)
        except OSError as exc:
            raise UserError(f"{path}: the answer to case {answer.case} was NOT saved: "
                            f"{exc.strerror or exc}") from None

    def locked(self, path: str | Path):
        """Hold an exclusive lock on the file while its page is served (`common.files.locked`): one server."""
        return files.locked(path, what=self.what, made_by=self.made_by, served_by=self.served_by)

    def open(self, path: str | Path, reviewer: str | None) -> tuple[AnswerFile[H, C, A], str, Path | None]:
        """The file as a page session starts on it, who answers, and where a torn last line was moved (or None).
        Call it holding `locked`: a torn tail is only moved aside when no server writes."""
        path = Path(path)
        file = self.read(path, allow_torn=True)
        moved = move_torn_tail(file)
        if moved is not None:
            file = self.read(path)
        return file, session_reviewer(path, reviewer, file.reviewer, file=self.what, verb=self.verb,
                                      more=self.more), moved
