"""The rows of a review file, one type each: the header (the sampling design), a case, an answer.

A review file is JSON Lines (`common.jsonl.dumps`): one `Header` row, then one
`Case` row per sampled output, then `Answer` rows appended as the reviewer gives
them. Each row says what it is in `kind`. No row carries the kit's verdict, tier
or evidence for a case: the header's strata give only counts, and the report
joins the verdicts from the labels file whose checksum the header records. So
nothing the review page reads can reveal a verdict. docs/FORMATS.md lists these
fields (tests/test_review_records.py keeps the two equal). The fields are checked
with `common.rows` and the file is read by `common.answerfile` (review/store.py),
as the occurrence audit's sample files are: what the two have in common is in
common/, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common import answerfile
from common.answerfile import FileRef
from common.errors import UserError
from common.records import CONDITIONS, GENRES, TREATMENTS, Record, field, request_id, shown
from common.rows import count, exact_fields, one_of, text

REVIEW_VERSION = "1"
CREATED_BY = "seam.py review sample"
KIT_VERDICTS = ("absorbed", "not_absorbed")  # a stratum's kit verdict, from the labels
VERDICTS = ("absorbed", "not_absorbed", "unsure")  # a reviewer's answer
# How the comment shows up in the output, as the reviewer sees it (null: it does not show up at all).
ABSORPTION_KINDS = ("verbatim", "paraphrase", "partial", "in_document_note", "code_comment",
                    "outside_edited_text", "commentary_to_user")
NOTE_LIMIT = 10_000  # characters of a reviewer's free note


def kit_verdict(absorbed: bool) -> str:
    """A usable label's verdict in the review's words.

    >>> kit_verdict(True), kit_verdict(False)
    ('absorbed', 'not_absorbed')
    """
    return KIT_VERDICTS[0] if absorbed else KIT_VERDICTS[1]


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
        stratum = cls(model=text(row, "model", where), verdict=one_of(row, "verdict", KIT_VERDICTS, where),
                      genre=one_of(row, "genre", GENRES, where),
                      condition=one_of(row, "condition", TREATMENTS, where),
                      population=count(row, "population", where, 1), drawn=count(row, "drawn", where))
        if stratum.drawn > stratum.population:
            raise UserError(f"{where}: drawn {stratum.drawn} exceeds the population {stratum.population}")
        return stratum


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
        exact_fields(row, cls, where)
        version = text(row, "review_version", where)
        if version != REVIEW_VERSION:
            raise UserError(f"{where}: review_version {shown(version)}, expected {REVIEW_VERSION!r} (made by "
                            "another version of seam)")
        share = field(row, "positives_share", (int, float), where, "a number from 0 to 1")
        if not 0 <= share <= 1:
            raise UserError(f"{where}: field 'positives_share' is {share!r}, expected a number from 0 to 1")
        requests = field(row, "requests", (dict, type(None)), where, "a file object or null")
        return cls(
            kind="header", review_version=version, created_by=text(row, "created_by", where),
            seed=count(row, "seed", where), n=count(row, "n", where, 1), positives_share=share,
            design=text(row, "design", where),
            strata=tuple(Stratum.from_row(s, f"{where}: stratum {i + 1}")
                         for i, s in enumerate(field(row, "strata", (list,), where, "a list of strata"))),
            labels=tuple(FileRef.from_row(f, f"{where}: labels {i + 1}")
                         for i, f in enumerate(field(row, "labels", (list,), where, "a list of files"))),
            traces=tuple(FileRef.from_row(f, f"{where}: traces {i + 1}", with_model=True)
                         for i, f in enumerate(field(row, "traces", (list,), where, "a list of files"))),
            requests=None if requests is None else FileRef.from_row(requests, f"{where}: requests"),
            benchmark_sha256=text(row, "benchmark_sha256", where))


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
        exact_fields(row, cls, where)
        case = cls(kind="case", case=count(row, "case", where, 1), id=text(row, "id", where),
                   model=text(row, "model", where), cluster=text(row, "cluster", where),
                   condition=one_of(row, "condition", TREATMENTS, where), genre=one_of(row, "genre", GENRES, where),
                   source=text(row, "source", where))
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
        exact_fields(row, cls, where)
        return cls(kind="answer", case=count(row, "case", where, 1), id=text(row, "id", where),
                   model=text(row, "model", where), reviewer=answerfile.reviewer(row, where),
                   verdict=one_of(row, "verdict", VERDICTS, where),
                   absorption_kind=one_of(row, "absorption_kind", ABSORPTION_KINDS, where, optional=True),
                   note=answerfile.note(row, where, NOTE_LIMIT), answered_at=text(row, "answered_at", where))


CONDITION_ORDER = {condition: index for index, condition in enumerate(CONDITIONS)}
