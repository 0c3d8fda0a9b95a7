"""The rows of the occurrence files, one frozen dataclass each; none of them holds message text.

    candidates  (seam.py occurrence screen)    ScreenHeader, then one Candidate per screened positive
    judged      (seam.py occurrence judge)     JudgeHeader, then one Judged per unique candidate
    sample      (seam.py occurrence sample)    SampleHeader, then Cases, then Answers appended by `annotate`

Each row says what it is in `kind`; each is checked when read (one line naming
file, line and field) and unknown fields are refused, so that a field that
could carry text cannot slip in unnoticed. docs/FORMATS.md lists these fields
(tests/test_occurrence_records.py keeps the two equal). A message is named by
where it is (conversation id, its position in the corpus, the turn) and by the
SHA-256 of its UTF-8 bytes, which every stage that reads the corpus again
checks before using the text. The fields are checked with `common.rows`, the
kit's one mechanism, and the sample file is an answer file of
`common.answerfile`, kept as the review's files are (occurrence/store.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common import answerfile
from common.answerfile import FileRef
from common.errors import UserError
from common.rows import Record, count, exact_fields, field, one_of, sha256, shown, text
from common.seams.segment import ARTIFACT_KINDS, FEATURES, SEPARATORS
from occurrence import SCREEN_VERSION
from occurrence.shapes import FORMATS
from occurrence.stream import CONTAINERS

OCCURRENCE_VERSION = "1"  # of the file formats below
JUDGE_VERDICTS = ("yes", "no", "unparsable", "unanswered")
ANSWERS = ("yes", "no", "unsure")  # a human's answer to the same question
NOTE_LIMIT = 2_000  # characters of an annotator's note (their own words, never the message's)
# What a sample is drawn from: the screen's unique candidates, the judge's yes, or the judge's yes and no (two
# strata, shown mixed so that the reader cannot tell which is which).
POPULATIONS = ("screened", "judged", "judged-yes-and-no")


def version(row: dict, where: str) -> str:
    value = text(row, "occurrence_version", where)
    if value != OCCURRENCE_VERSION:
        raise UserError(f"{where}: occurrence_version {shown(value)}, expected {OCCURRENCE_VERSION!r} (made by "
                        "another version of seam)")
    return value


@dataclass(frozen=True)
class Truncated(Record):
    """The tail of a corpus cut short: where the object it cut starts, and the bytes skipped."""

    line: int
    offset: int
    bytes: int

    @classmethod
    def from_row(cls, row: Any, where: str) -> Truncated | None:
        if row is None:
            return None
        if not isinstance(row, dict):
            raise UserError(f"{where}: field 'truncated' is {shown(row)}, expected an object or null")
        exact_fields(row, cls, where)
        return cls(count(row, "line", where, 1), count(row, "offset", where), count(row, "bytes", where))


@dataclass(frozen=True)
class CorpusRef(Record):
    """One corpus file screened: its name (no folder: the same file screens to the same bytes anywhere),
    the archive member read, the checksums of both, how it was read, and what was in it."""

    file: str
    member: str | None  # inside a .whl/.zip; null for a plain or .gz file
    sha256: str  # of the file
    text_sha256: str  # of the JSON text read (the member's, the decompressed .gz's; the file's otherwise)
    text_bytes: int
    format: str
    container: str  # json_array or json_lines
    conversations: int  # complete conversations read
    truncated: Truncated | None  # the tail cut short and skipped, if the file ends inside an object
    oversized: int  # lines of JSON Lines past 64 MiB, read past and not screened (absent in older files: 0)

    @classmethod
    def from_row(cls, row: Any, where: str) -> CorpusRef:
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected a corpus object")
        row = {"oversized": 0, **row}  # files written before the field existed had none to count
        exact_fields(row, cls, where)
        return cls(file=text(row, "file", where),
                   member=field(row, "member", (str, type(None)), where, "a string or null"),
                   sha256=sha256(row, "sha256", where), text_sha256=sha256(row, "text_sha256", where),
                   text_bytes=count(row, "text_bytes", where), format=one_of(row, "format", FORMATS, where),
                   container=one_of(row, "container", CONTAINERS, where),
                   conversations=count(row, "conversations", where),
                   truncated=Truncated.from_row(field(row, "truncated", (dict, type(None)), where,
                                                      "an object or null"), f"{where}: truncated"),
                   oversized=count(row, "oversized", where))


def corpora(row: dict, where: str) -> tuple[CorpusRef, ...]:
    listed = field(row, "corpora", (list,), where, "a list of corpus objects")
    if not listed:
        raise UserError(f"{where}: field 'corpora' is [], expected at least one corpus")
    return tuple(CorpusRef.from_row(item, f"{where}: corpus {number}") for number, item in enumerate(listed))


@dataclass(frozen=True)
class ScreenHeader(Record):
    """The first row of a candidates file: what was screened, with which rules, and the counts."""

    kind: str
    occurrence_version: str
    screen_version: str
    created_by: str
    corpora: tuple[CorpusRef, ...]  # the corpus files, in the order given
    conversations: int
    turns: int
    user_turns: int
    candidates: int
    unique_candidates: int

    CREATED_BY = "seam.py occurrence screen"

    @classmethod
    def from_row(cls, row: dict, where: str) -> ScreenHeader:
        exact_fields(row, cls, where)
        screen = text(row, "screen_version", where)
        if screen != SCREEN_VERSION:
            raise UserError(f"{where}: screen_version {shown(screen)}, expected {SCREEN_VERSION!r}: screened by "
                            "other rules; screen the corpus again")
        return cls(kind="header", occurrence_version=version(row, where), screen_version=screen,
                   created_by=text(row, "created_by", where), corpora=corpora(row, where),
                   **{name: count(row, name, where) for name in ("conversations", "turns", "user_turns",
                                                                  "candidates", "unique_candidates")})


@dataclass(frozen=True)
class Candidate(Record):
    """One screened positive: where the message is, its checksum, the seam's offsets, the features that fired."""

    kind: str
    corpus: int  # 0-based position of the corpus file in the header's `corpora`
    conversation: str  # the conversation's id in the corpus
    index: int  # 0-based position of the conversation in its corpus file (ids repeat in some corpora)
    turn: int  # 0-based position of the message in the conversation's turns
    message_sha256: str
    repeat: int  # 1 for the first candidate with this message_sha256 in the file, 2 for the second, …
    chars: int  # the message's length in characters
    artifact_kind: str
    separator: str
    lead_end: int
    artifact_start: int
    artifact_end: int
    remark_start: int
    remark_end: int
    lead_words: int
    artifact_lines: int
    artifact_words: int
    remark_lines: int
    remark_words: int
    features: tuple[str, ...]

    @classmethod
    def from_row(cls, row: dict, where: str) -> Candidate:
        exact_fields(row, cls, where)
        features = field(row, "features", (list,), where, "a list of feature names")
        unknown = [name for name in features if name not in FEATURES]
        if unknown:
            raise UserError(f"{where}: field 'features' holds {shown(unknown[0])}, expected names from "
                            f"{', '.join(FEATURES)}")
        numbers = {name: count(row, name, where) for name in (
            "corpus", "index", "turn", "chars", "lead_end", "artifact_start", "artifact_end", "remark_start",
            "remark_end", "lead_words", "artifact_lines", "artifact_words", "remark_lines", "remark_words")}
        if not (numbers["lead_end"] <= numbers["artifact_start"] < numbers["artifact_end"] <= numbers["remark_start"]
                < numbers["remark_end"] <= numbers["chars"]):
            raise UserError(f"{where}: the offsets are not in order lead_end <= artifact_start < artifact_end <= "
                            "remark_start < remark_end <= chars")
        return cls(kind="candidate", conversation=text(row, "conversation", where),
                   message_sha256=sha256(row, "message_sha256", where), repeat=count(row, "repeat", where, 1),
                   artifact_kind=one_of(row, "artifact_kind", ARTIFACT_KINDS, where),
                   separator=one_of(row, "separator", SEPARATORS, where), features=tuple(features), **numbers)

    @property
    def key(self) -> tuple[int, int, int]:
        """Where the message is: (corpus file, conversation position, turn)."""
        return (self.corpus, self.index, self.turn)


@dataclass(frozen=True)
class JudgeHeader(Record):
    """The first row of a judged file: what was judged, by which model, with which prompt, and the counts."""

    kind: str
    occurrence_version: str
    created_by: str
    candidates: FileRef
    model: str
    prompt_version: str
    prompt_sha256: str
    judged: int
    yes: int
    no: int
    unparsable: int
    unanswered: int

    CREATED_BY = "seam.py occurrence judge"

    @classmethod
    def from_row(cls, row: dict, where: str) -> JudgeHeader:
        exact_fields(row, cls, where)
        return cls(kind="header", occurrence_version=version(row, where), created_by=text(row, "created_by", where),
                   candidates=FileRef.from_row(row.get("candidates"), f"{where}: candidates"),
                   model=text(row, "model", where),
                   prompt_version=text(row, "prompt_version", where),
                   prompt_sha256=sha256(row, "prompt_sha256", where),
                   **{name: count(row, name, where) for name in ("judged", *JUDGE_VERDICTS)})


@dataclass(frozen=True)
class Judged(Record):
    """The judge's verdict on one unique candidate (its first occurrence), and the runner's status for it."""

    kind: str
    corpus: int
    conversation: str
    index: int
    turn: int
    message_sha256: str
    verdict: str  # yes, no, unparsable (a reply without a clear yes or no), unanswered (no usable reply)
    status: str | None  # the trace's status (ok, unusable, failed); null when the request has no row yet

    @classmethod
    def from_row(cls, row: dict, where: str) -> Judged:
        exact_fields(row, cls, where)
        status = field(row, "status", (str, type(None)), where, "ok, unusable, failed or null")
        return cls(kind="judged", corpus=count(row, "corpus", where), conversation=text(row, "conversation", where),
                   index=count(row, "index", where),
                   turn=count(row, "turn", where), message_sha256=sha256(row, "message_sha256", where),
                   verdict=one_of(row, "verdict", JUDGE_VERDICTS, where), status=status)


@dataclass(frozen=True)
class SampleHeader(Record):
    """The first row of a sample file: the draw (seed, size, population) and the files it was drawn from."""

    kind: str
    occurrence_version: str
    created_by: str
    seed: int
    n: int
    population: str  # screened (unique candidates), judged (the judge's yes), judged-yes-and-no (both verdicts)
    population_size: int
    design: str
    candidates: FileRef
    judged: FileRef | None
    corpora: tuple[CorpusRef, ...]

    CREATED_BY = "seam.py occurrence sample"

    @classmethod
    def from_row(cls, row: dict, where: str) -> SampleHeader:
        exact_fields(row, cls, where)
        judged = field(row, "judged", (dict, type(None)), where, "a file object or null")
        return cls(kind="header", occurrence_version=version(row, where), created_by=text(row, "created_by", where),
                   seed=count(row, "seed", where), n=count(row, "n", where, 1),
                   population=one_of(row, "population", POPULATIONS, where),
                   population_size=count(row, "population_size", where), design=text(row, "design", where),
                   candidates=FileRef.from_row(row.get("candidates"), f"{where}: candidates"),
                   judged=None if judged is None else FileRef.from_row(judged, f"{where}: judged"),
                   corpora=corpora(row, where))


@dataclass(frozen=True)
class Case(Record):
    """One sampled message, numbered in the order the annotator sees it; no feature, no verdict."""

    kind: str
    case: int
    corpus: int
    conversation: str
    index: int
    turn: int
    message_sha256: str

    @classmethod
    def from_row(cls, row: dict, where: str) -> Case:
        exact_fields(row, cls, where)
        return cls(kind="case", case=count(row, "case", where, 1), corpus=count(row, "corpus", where),
                   conversation=text(row, "conversation", where),
                   index=count(row, "index", where), turn=count(row, "turn", where),
                   message_sha256=sha256(row, "message_sha256", where))


@dataclass(frozen=True)
class Answer(Record):
    """One human answer, appended as it is given; a later answer to the same case supersedes it."""

    kind: str
    case: int
    message_sha256: str
    reviewer: str
    answer: str  # yes, no or unsure
    note: str  # the annotator's own words ("" for none); never text copied from the message
    answered_at: str  # UTC ISO 8601: when a human answered (the one field that is not reproducible)

    @classmethod
    def from_row(cls, row: dict, where: str) -> Answer:
        exact_fields(row, cls, where)
        return cls(kind="answer", case=count(row, "case", where, 1),
                   message_sha256=sha256(row, "message_sha256", where), reviewer=answerfile.reviewer(row, where),
                   answer=one_of(row, "answer", ANSWERS, where), note=answerfile.note(row, where, NOTE_LIMIT),
                   answered_at=text(row, "answered_at", where))
