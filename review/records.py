"""The rows of a review file, one type each: the header (the sampling design), a case, an answer.

A review file is JSON Lines (`common.jsonl.dumps`): one `Header` row, then one
`Case` row per sampled output, then `Answer` rows appended as the reviewer gives
them. Each row says what it is in `kind`. No row carries the kit's verdict, tier
or evidence for a case: the header's strata give only counts, and the report
joins the verdicts from the labels file whose checksum the header records. So
nothing the review page reads can reveal a verdict. docs/FORMATS.md lists these
fields (tests/test_review_records.py keeps the two equal).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from common.errors import UserError
from common.records import CONDITIONS, GENRES, TREATMENTS, Record, field, request_id, shown

REVIEW_VERSION = "1"
CREATED_BY = "seam.py review sample"
KIT_VERDICTS = ("absorbed", "not_absorbed")  # a stratum's kit verdict, from the labels
VERDICTS = ("absorbed", "not_absorbed", "unsure")  # a reviewer's answer
# How the comment shows up in the output, as the reviewer sees it (null: it does not show up at all).
ABSORPTION_KINDS = ("verbatim", "paraphrase", "partial", "in_document_note", "code_comment",
                    "outside_edited_text", "commentary_to_user")
NOTE_LIMIT = 10_000  # characters of a reviewer's free note
REVIEWER_LIMIT = 100  # characters of a reviewer's name


def kit_verdict(absorbed: bool) -> str:
    """A usable label's verdict in the review's words.

    >>> kit_verdict(True), kit_verdict(False)
    ('absorbed', 'not_absorbed')
    """
    return KIT_VERDICTS[0] if absorbed else KIT_VERDICTS[1]


def _text(row: dict, name: str, where: str, *, empty: bool = False) -> str:
    value = field(row, name, (str,), where, "a string" if empty else "a non-empty string")
    if not empty and not value:
        raise UserError(f"{where}: field {name!r} is '', expected a non-empty string")
    return value


def _count(row: dict, name: str, where: str, minimum: int = 0) -> int:
    value = field(row, name, (int,), where, f"a whole number of at least {minimum}")
    if value < minimum:
        raise UserError(f"{where}: field {name!r} is {value}, expected a whole number of at least {minimum}")
    return value


def _one_of(row: dict, name: str, allowed: tuple[str, ...], where: str, *, optional: bool = False) -> str | None:
    expected = "one of " + ", ".join(allowed) + (" or null" if optional else "")
    value = field(row, name, (str, type(None)) if optional else (str,), where, expected)
    if value is not None and value not in allowed:
        raise UserError(f"{where}: field {name!r} is {shown(value)}, expected {expected}")
    return value


def _exact_fields(row: dict, kind: type, where: str) -> None:
    """Refuse a row with fields its type does not have (a typo must not pass for an absent field)."""
    extra = sorted(set(row) - {item.name for item in dataclasses.fields(kind)})
    if extra:
        raise UserError(f"{where}: unknown field(s) {', '.join(map(repr, extra))} in a {row.get('kind')} row")


@dataclass(frozen=True)
class Stratum(Record):
    """One stratum of the design: a model's usable outputs with one kit verdict, genre and condition."""

    model: str
    verdict: str
    genre: str
    condition: str
    population: int
    drawn: int

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.model, self.verdict, self.genre, self.condition)

    @classmethod
    def from_row(cls, row: Any, where: str) -> Stratum:
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected a stratum object")
        stratum = cls(model=_text(row, "model", where), verdict=_one_of(row, "verdict", KIT_VERDICTS, where),
                      genre=_one_of(row, "genre", GENRES, where),
                      condition=_one_of(row, "condition", TREATMENTS, where),
                      population=_count(row, "population", where, 1), drawn=_count(row, "drawn", where))
        if stratum.drawn > stratum.population:
            raise UserError(f"{where}: drawn {stratum.drawn} exceeds the population {stratum.population}")
        return stratum


@dataclass(frozen=True)
class FileRef(Record):
    """An input file as it was named on the command line, with the SHA-256 of its bytes (and its model)."""

    path: str
    sha256: str
    model: str | None = None

    @classmethod
    def from_row(cls, row: Any, where: str, *, with_model: bool = False) -> FileRef:
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected a file object (path, sha256)")
        model = _text(row, "model", where) if with_model else None
        return cls(_text(row, "path", where), _text(row, "sha256", where), model)

    def to_row(self) -> dict:
        row = {"path": self.path, "sha256": self.sha256}
        if self.model is not None:
            row["model"] = self.model
        return row


@dataclass(frozen=True)
class Header(Record):
    """The first row: how the cases were drawn, from which files, with which seed."""

    kind: str
    review_version: str
    created_by: str
    seed: int
    n: int
    positives_share: float
    design: str
    strata: tuple[Stratum, ...]
    labels: tuple[FileRef, ...]
    traces: tuple[FileRef, ...]
    requests: FileRef | None  # None: the committed benchmark (data/benchmark)
    benchmark_sha256: str

    @classmethod
    def from_row(cls, row: dict, where: str) -> Header:
        _exact_fields(row, cls, where)
        version = _text(row, "review_version", where)
        if version != REVIEW_VERSION:
            raise UserError(f"{where}: review_version {shown(version)}, expected {REVIEW_VERSION!r} (made by "
                            "another version of seam)")
        share = field(row, "positives_share", (int, float), where, "a number from 0 to 1")
        if not 0 <= share <= 1:
            raise UserError(f"{where}: field 'positives_share' is {share!r}, expected a number from 0 to 1")
        requests = field(row, "requests", (dict, type(None)), where, "a file object or null")
        return cls(
            kind="header", review_version=version, created_by=_text(row, "created_by", where),
            seed=_count(row, "seed", where), n=_count(row, "n", where, 1), positives_share=share,
            design=_text(row, "design", where),
            strata=tuple(Stratum.from_row(s, f"{where}: stratum {i + 1}")
                         for i, s in enumerate(field(row, "strata", (list,), where, "a list of strata"))),
            labels=tuple(FileRef.from_row(f, f"{where}: labels {i + 1}")
                         for i, f in enumerate(field(row, "labels", (list,), where, "a list of files"))),
            traces=tuple(FileRef.from_row(f, f"{where}: traces {i + 1}", with_model=True)
                         for i, f in enumerate(field(row, "traces", (list,), where, "a list of files"))),
            requests=None if requests is None else FileRef.from_row(requests, f"{where}: requests"),
            benchmark_sha256=_text(row, "benchmark_sha256", where))


@dataclass(frozen=True)
class Case(Record):
    """One sampled output, numbered in the order the reviewer sees it (a seeded shuffle, not by stratum)."""

    kind: str
    case: int
    id: str
    model: str
    cluster: str
    condition: str
    genre: str
    source: str

    @classmethod
    def from_row(cls, row: dict, where: str) -> Case:
        _exact_fields(row, cls, where)
        case = cls(kind="case", case=_count(row, "case", where, 1), id=_text(row, "id", where),
                   model=_text(row, "model", where), cluster=_text(row, "cluster", where),
                   condition=_one_of(row, "condition", TREATMENTS, where), genre=_one_of(row, "genre", GENRES, where),
                   source=_text(row, "source", where))
        if case.id != request_id(case.cluster, case.condition):
            raise UserError(f"{where}: id {shown(case.id)} does not match cluster/condition")
        return case


@dataclass(frozen=True)
class Answer(Record):
    """One judgement, appended as it is given; a later answer for the same case supersedes it."""

    kind: str
    case: int
    id: str
    model: str
    reviewer: str
    verdict: str
    absorption_kind: str | None
    note: str
    answered_at: str  # UTC ISO 8601; the one field that is not reproducible (it records when a human answered)

    @classmethod
    def from_row(cls, row: dict, where: str) -> Answer:
        _exact_fields(row, cls, where)
        note = _text(row, "note", where, empty=True)
        if len(note) > NOTE_LIMIT:
            raise UserError(f"{where}: the note has {len(note):,} characters, expected at most {NOTE_LIMIT:,}")
        return cls(kind="answer", case=_count(row, "case", where, 1), id=_text(row, "id", where),
                   model=_text(row, "model", where), reviewer=check_reviewer(_text(row, "reviewer", where), where),
                   verdict=_one_of(row, "verdict", VERDICTS, where),
                   absorption_kind=_one_of(row, "absorption_kind", ABSORPTION_KINDS, where, optional=True),
                   note=note, answered_at=_text(row, "answered_at", where))


def check_reviewer(name: str, where: str = "--reviewer") -> str:
    """A reviewer's name: printable, at most 100 characters, not blank.

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


ROW_KINDS = {"header": Header, "case": Case, "answer": Answer}
CONDITION_ORDER = {condition: index for index, condition in enumerate(CONDITIONS)}


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
