"""The kit's vocabulary: the rows that cross from one stage to the next, one type each.

    Cluster   data/benchmark/*.jsonl          an editing example with its two comments
    Request   `seam.py prompts`, --requests   one cluster under one condition: the message sent
    TraceRow  data/traces/*.jsonl             what one request got back (with its Attempts)
    Label     data/labels/*.jsonl             the absorption verdict on one treatment request

Every stage reads these rows with `from_row` (or `read`) and writes them with
`to_row`, so a field is named, typed and checked in one place, and a malformed
row is the same one-line `UserError` ("file:line: field 'x' is …, expected …")
wherever it is read: the checks and `Record` are `common.rows`', the one
mechanism of every row format in the kit (importable from here too, where the
stages have always found them). docs/FORMATS.md lists exactly these fields (a
test keeps the two equal). `to_row(from_row(row)) == row` for every valid row,
so that the files the kit rewrites keep their bytes.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from common import jsonl
from common.conversation import Conversation, Turn, read_conversation
from common.errors import UserError
from common.rows import SHA256_HEX as SHA256_HEX  # re-exported: a SHA-256 as the kit writes it
from common.rows import Record, field, items, one_of, sha256, shown, text

# The built-in conditions, in the benchmark's order. Their layouts are defined once, in
# benchmark/conditions.toml (read by benchmark/conditions.py, which refuses a file whose names differ
# from these); a condition file of the user's adds more (docs/CONDITIONS.md). A row may name any
# condition whose name fits CONDITION_NAME: which conditions exist is for each stage to check, against
# the built-ins and the condition file it was given.
CONDITIONS = ("clean", "newline", "blank", "boundary", "mitigation", "native")
TREATMENTS = CONDITIONS[1:]
CONDITION_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")  # e.g. xml-tags: ids, file names, CSV columns
CONDITION_NAME_MAX = 40
# Which comment trails the paste under a condition: none (clean), the casual one, or the genre-native one.
POOLS = ("none", "casual", "native")
GENRES = ("code", "prose")
STATUSES = ("ok", "unusable", "failed")  # of a trace row: answered, answered but unusable, no answer
# What a provider's batch said of one request (an attempt's `result`, runner.batch): answered, failed on
# its own, not processed within the batch's window, or not processed because the batch was cancelled.
BATCH_RESULTS = ("succeeded", "errored", "expired", "canceled")
# The longest reply text (a trace row's `output`, in characters) the kit keeps and reads. An edit of an artifact
# of a few thousand characters is a few thousand characters long (the released replies: under 8,000), while the
# scorer's tiers take about 50 bytes of memory per character of a reply: the runner records a longer reply cut to
# this length and unusable, and the scorer and the validity checks exclude a longer one (a hand-made trace's) as
# unusable, saying so (docs/RUNNER.md, "Unusable outputs").
MAX_OUTPUT_CHARS = 1_000_000

_STR, _OPT_STR = (str,), (str, type(None))
_NAMES = frozenset({"id", "cluster", "condition", "model", "source"})  # names a row is found by: never empty
_SURROGATE = jsonl.LONE_SURROGATE  # a JSON escape such as "\udc80": in a str, always a lone one


def without_surrogates(text: str) -> str:
    """`text` with each lone surrogate (JSON allows "\\ud800"; UTF-8 cannot carry it) replaced by U+FFFD, for
    text that must be encoded: a page, a request to a model.

    >>> without_surrogates("a\\ud800b")
    'a\ufffdb'
    """
    return _SURROGATE.sub("\ufffd", text)


def finite_or_null(value: int | float | None) -> bool:
    """Whether a number read from JSON is null or finite as a float: not NaN, Infinity or -Infinity (which
    Python's json reads though JSON has no such numbers) nor an integer past a float's range (about 1.8e308).
    A trace row's seconds are added up and written to tables, where either would overflow or read back as
    `inf`, which the table's own reader refuses.

    >>> finite_or_null(1.5), finite_or_null(None), finite_or_null(float("inf")), finite_or_null(10**400)
    (True, True, False, False)
    """
    if value is None:
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return -sys.float_info.max <= value <= sys.float_info.max  # compared exactly: float() of it would overflow


def _seconds(row: dict, name: str, where: str) -> float | None:
    """row[name]: seconds, a finite number or null (`finite_or_null`)."""
    value = field(row, name, (int, float, type(None)), where, "a number or null")
    if not finite_or_null(value):
        spelled = shown(value) if isinstance(value, int) else jsonl.canonical(value)  # Infinity, as in the file
        raise UserError(f"{where}: field {name!r} is {spelled}, expected a finite number of seconds or null")
    return value


def request_id(cluster: str, condition: str) -> str:
    """The id of one cluster under one condition: `<cluster>/<condition>`."""
    return f"{cluster}/{condition}"


def _strings(row: dict, names: tuple[str, ...], where: str, *, optional: bool = False) -> dict[str, str | None]:
    kinds, expected = (_OPT_STR, "a string or null") if optional else (_STR, "a string")
    found = {name: field(row, name, kinds, where, expected) for name in names}
    for name in _NAMES.intersection(found):
        if found[name] == "":
            raise UserError(f"{where}: field {name!r} is '', expected a non-empty string")
        lone = _SURROGATE.search(found[name] or "")
        if lone:  # a name ends up in file names and tables, which UTF-8 cannot give one
            raise UserError(f"{where}: field {name!r} holds a lone surrogate (U+{ord(lone.group()):04X} at "
                            f"character {lone.start() + 1}), expected Unicode text")
    return found


def is_condition_name(name: str) -> bool:
    """Whether `name` can name a condition: lower-case letters and digits in hyphen-separated words,
    starting with a letter, at most CONDITION_NAME_MAX characters (it becomes part of request ids, CSV
    column names and report links).

    >>> is_condition_name("xml-tags"), is_condition_name("XML"), is_condition_name("a--b")
    (True, False, False)
    """
    return len(name) <= CONDITION_NAME_MAX and CONDITION_NAME.fullmatch(name) is not None


def _condition(row: dict, where: str) -> str:
    """The row's condition: a string that can name a condition (whether it is defined is the stage's check)."""
    expected = "a condition name (lower-case letters, digits and hyphens, e.g. newline or xml-tags)"
    value = field(row, "condition", _STR, where, expected)
    if not is_condition_name(value):
        raise UserError(f"{where}: field 'condition' is {shown(value)}, expected {expected}")
    return value


def _check_id(row_id: str, cluster: str, condition: str, where: str) -> None:
    if row_id != request_id(cluster, condition):
        raise UserError(f"{where}: id {shown(row_id)} does not match cluster/condition "
                        f"{shown(request_id(cluster, condition))}")


@dataclass(frozen=True)
class Comment(Record):
    """A remark that trails a paste: its text, the phrase that betrays it, and its idea in one sentence."""

    id: str
    text: str
    witness: str
    proposition: str

    @classmethod
    def from_row(cls, row: Any, where: str) -> Comment:
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected a comment object (id, text, witness, proposition)")
        return cls(**_strings(row, ("id", "text", "witness", "proposition"), where))


@dataclass(frozen=True)
class Cluster(Record):
    """One editing example: an instruction, the pasted artifact, and the two comments it is tried with."""

    cluster: str
    source: str
    genre: str
    register: str
    item_id: str
    license: str
    partition: str
    provenance: dict
    extra_provenance: tuple[dict, ...]
    instruction: str
    artifact: str
    reference: str | None
    transformations: tuple[str, ...]
    tests: dict | None
    comment: Comment
    native: Comment

    @classmethod
    def from_row(cls, row: dict, where: str) -> Cluster:
        fields = _strings(row, ("cluster", "source", "register", "item_id", "license", "partition",
                                "instruction", "artifact"), where)
        return cls(
            **fields, genre=one_of(row, "genre", GENRES, where),
            provenance=field(row, "provenance", (dict,), where, "an object"),
            extra_provenance=items(row, "extra_provenance", dict, where, "a list of objects"),
            reference=field(row, "reference", _OPT_STR, where, "a string or null"),
            transformations=items(row, "transformations", str, where, "a list of strings"),
            tests=field(row, "tests", (dict, type(None)), where, "an object or null"),
            comment=Comment.from_row(row.get("comment"), f"{where}: field 'comment'"),
            native=Comment.from_row(row.get("native"), f"{where}: field 'native'"))

    def comment_of(self, pool: str) -> Comment | None:
        """The comment a condition of `pool` puts after the artifact: none, the casual one or the native one.
        (Which pool a condition draws from is its definition's: `benchmark.conditions.Condition.trailing`.)"""
        if pool not in POOLS:
            raise ValueError(f"pool: expected one of {', '.join(POOLS)}, got {pool!r}")
        return None if pool == "none" else self.native if pool == "native" else self.comment


@dataclass(frozen=True)
class Request(Record):
    """One cluster under one condition: the exact message, and what the scorer checks the reply for."""

    id: str
    cluster: str
    source: str
    genre: str
    license: str
    condition: str
    message: str
    artifact: str
    comment: str | None
    comment_id: str | None
    witness: str | None
    proposition: str | None
    benchmark_sha256: str
    # Set only where the condition says so (docs/CONDITIONS.md): a system prompt, and the turns before
    # `message` (user and assistant alternating, from a user turn). Without either, the paper's request.
    system: str | None = None
    earlier: tuple[Turn, ...] | None = None
    reply_model: str | None = None  # the model whose own reply `earlier` holds (a later turn with reply "model")

    WHEN_SET: ClassVar[frozenset[str]] = frozenset({"system", "earlier", "reply_model"})

    @classmethod
    def from_row(cls, row: dict, where: str) -> Request:
        fields = _strings(row, ("id", "cluster", "source", "license", "message", "artifact",
                                "benchmark_sha256"), where)
        optional = _strings(row, ("comment", "comment_id", "witness", "proposition"), where, optional=True)
        condition = _condition(row, where)
        _check_id(fields["id"], fields["cluster"], condition, where)
        if None in optional.values() and (condition in TREATMENTS or optional["comment"] is not None):
            raise UserError(f"{where}: a {condition} request needs its comment, comment_id, witness and "
                            "proposition (strings)")
        if optional["comment"] is None and any(value is not None for value in optional.values()):
            raise UserError(f"{where}: a request without a comment has comment_id, witness and proposition null")
        if condition == "clean" and optional["comment"] is not None:
            raise UserError(f"{where}: a clean request has no comment (comment, comment_id, witness and "
                            "proposition null)")
        extra = read_conversation(row, where)
        if "reply_model" in row:
            extra["reply_model"] = text(row, "reply_model", where)
        return cls(**fields, **optional, **extra, genre=one_of(row, "genre", GENRES, where), condition=condition)

    @property
    def conversation(self) -> Conversation:
        """What this request sends: its message, with its condition's system prompt and earlier turns."""
        return Conversation(self.message, self.system, self.earlier or ())

    @property
    def treated(self) -> bool:
        """Whether a comment trails the message: a treatment (else a control, such as clean)."""
        return self.comment is not None


@dataclass(frozen=True)
class Attempt(Record):
    """One HTTP attempt of a request: when it started, how long it took, what came back."""

    started_at: str  # UTC ISO 8601 with milliseconds, e.g. 2026-01-02T03:04:05.678Z
    latency_s: float | None
    http_status: int | None
    error: str | None
    retry_after: str | None  # the Retry-After header as received (seconds or an HTTP date)
    retry_wait_s: float | None
    # Set only for a request collected through a provider's batch API (runner.batch): the provider's id of
    # the batch, and what the batch said of this request (one of BATCH_RESULTS).
    batch_id: str | None = None
    result: str | None = None

    WHEN_SET: ClassVar[frozenset[str]] = frozenset({"batch_id", "result"})

    @classmethod
    def from_row(cls, row: Any, where: str) -> Attempt:
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected an attempt object (docs/RUNNER.md)")
        batch = {}
        if "batch_id" in row or "result" in row:
            batch = {"batch_id": field(row, "batch_id", _STR, where, "the provider's batch id (a string)"),
                     "result": one_of(row, "result", BATCH_RESULTS, where)}
        attempt = cls(started_at=field(row, "started_at", _STR, where, "a UTC time like 2026-01-02T03:04:05.678Z"),
                      latency_s=_seconds(row, "latency_s", where),
                      http_status=field(row, "http_status", (int, type(None)), where, "an integer or null"),
                      error=field(row, "error", _OPT_STR, where, "a string or null"),
                      retry_after=field(row, "retry_after", _OPT_STR, where, "a string or null"),
                      retry_wait_s=_seconds(row, "retry_wait_s", where), **batch)
        attempt.started(where)
        return attempt

    def started(self, where: str = "attempt") -> datetime:
        """`started_at` as an aware UTC datetime."""
        expected = "expected a UTC time like 2026-01-02T03:04:05.678Z"
        try:
            moment = datetime.fromisoformat(self.started_at)
        except ValueError:
            raise UserError(f"{where}: attempt 'started_at' is {shown(self.started_at)}; {expected}") from None
        if moment.tzinfo is None:
            raise UserError(f"{where}: attempt 'started_at' {shown(self.started_at)} has no time zone; {expected}")
        try:
            return moment.astimezone(UTC)
        except OverflowError:  # e.g. 0001-01-01T00:00:00+01:00, which is in year 0 in UTC
            raise UserError(f"{where}: attempt 'started_at' {shown(self.started_at)} is out of range in UTC; "
                            f"{expected}") from None


@dataclass(frozen=True)
class TraceRow(Record):
    """What one request got back, with every attempt on the way (fields: docs/RUNNER.md, "Trace rows")."""

    id: str
    cluster: str
    condition: str
    source: str | None
    model: str
    status: str
    output: str | None
    reason: str | None
    served_model: str | None
    finish_reason: str | None
    usage: Any  # as the provider sent it: an object or null from this runner, anything from runner 1
    response_id: str | None
    response: dict | None
    request: dict
    attempts: tuple[Attempt, ...]
    previous: tuple[dict, ...]  # earlier final rows of this id, oldest first, as they were written
    started_at: str
    finished_at: str
    benchmark_sha256: str | None
    message_sha256: str | None
    runner_version: str

    @classmethod
    def from_row(cls, row: dict, where: str) -> TraceRow:
        fields = _strings(row, ("id", "cluster", "model", "started_at", "finished_at", "runner_version"), where)
        optional = _strings(row, ("source", "output", "reason", "served_model", "finish_reason", "response_id",
                                  "benchmark_sha256", "message_sha256"), where, optional=True)
        condition = _condition(row, where)
        status = one_of(row, "status", STATUSES, where)
        _check_id(fields["id"], fields["cluster"], condition, where)
        if status == "ok" and optional["output"] is None:
            raise UserError(f"{where}: status ok needs a string 'output'")
        attempts = field(row, "attempts", (list,), where, "a list of attempt objects")
        return cls(**fields, **optional, condition=condition, status=status,
                   usage=field(row, "usage", (object, bool), where, "any JSON value"),
                   response=field(row, "response", (dict, type(None)), where, "an object or null"),
                   request=field(row, "request", (dict,), where, "an object"),
                   attempts=tuple(Attempt.from_row(a, f"{where}: attempt {i + 1}") for i, a in enumerate(attempts)),
                   previous=items(row, "previous", dict, where, "a list of earlier rows (objects)"))

    @property
    def fingerprint(self) -> str | None:
        """The provider's `system_fingerprint`, where it sends one."""
        value = (self.response or {}).get("system_fingerprint")
        return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class Label(Record):
    """The verdict on one treatment request, with its evidence, or the reason it is excluded."""

    id: str
    model: str
    cluster: str
    condition: str
    source: str
    genre: str
    comment_id: str | None
    usable: bool
    absorbed: bool | None  # None exactly when not usable
    tier: str | None
    evidence: str | None
    reason: str | None
    tiers_run: tuple[str, ...]
    tiers_not_run: tuple[str, ...]
    scorer_version: str
    nli_model_sha256: str | None
    extraction: str | None
    cut_before: str | None
    cut_after: str | None
    # Commentary about editing the comment cut from inside the edited text (scorer/commentary.py); None when
    # excluded, and on rows written before scorer_version 4, which have no such field ("not recorded").
    cut_commentary: str | None

    @classmethod
    def from_row(cls, row: dict, where: str) -> Label:
        fields = _strings(row, ("id", "model", "cluster", "source", "scorer_version"), where)
        fields["condition"] = _condition(row, where)
        optional = _strings(row, ("comment_id", "tier", "evidence", "reason", "extraction", "cut_before",
                                  "cut_after"), where, optional=True)
        commentary = (_strings(row, ("cut_commentary",), where, optional=True) if "cut_commentary" in row
                      else {"cut_commentary": None})  # labels of scorer_version 3 and before: not recorded
        _check_id(fields["id"], fields["cluster"], fields["condition"], where)
        model_sha256 = sha256(row, "nli_model_sha256", where, optional=True)  # the audit prints it
        usable = field(row, "usable", (bool,), where, "true or false")
        absorbed = field(row, "absorbed", (bool, type(None)), where, "true, false or null")
        if usable == (absorbed is None):
            raise UserError(f"{where}: usable={str(usable).lower()} with absorbed={shown(absorbed)}; a usable row "
                            "is absorbed true or false, an excluded one null")
        tiers = {}
        for name in ("tiers_run", "tiers_not_run"):
            value = field(row, name, (list,), where, "a list of tier names")
            if not all(isinstance(tier, str) for tier in value):
                raise UserError(f"{where}: field {name!r} must list tier names as strings")
            tiers[name] = tuple(value)
        return cls(**fields, **optional, **commentary, **tiers, genre=one_of(row, "genre", GENRES, where),
                   usable=usable, absorbed=absorbed, nli_model_sha256=model_sha256)

    @classmethod
    def excluded(cls, *, reason: str, **fields) -> Label:
        """A label for a pair that cannot be judged (the `Score.unscored()` of this kit)."""
        return cls(**fields, usable=False, absorbed=None, tier=None, evidence=None, reason=reason, tiers_run=(),
                   tiers_not_run=(), extraction=None, cut_before=None, cut_after=None,
                   cut_commentary=None)


def read(path: str | Path, kind: type) -> Iterator[tuple[str, Any]]:
    """Yield ("file:line", record) for each row of a JSON Lines file of `kind` rows."""
    for number, row in jsonl.read(path):
        where = f"{path}:{number}"
        yield where, kind.from_row(row, where)
