"""Read the scorer's two inputs: what each request asked (one `Item` per request id) and one model's traces.

Items: by default from the committed benchmark's clusters (`benchmark.dataset.load`),
taking only what scoring needs (the artifact, the comment that trailed it
under each condition, `Condition.trailing`, the condition's marker lines,
which the extraction cuts at, and the SHA-256 of the message as the condition
renders it, which a trace row's `message_sha256` must match: a condition
file changed after its traces were collected would otherwise be scored with
markers the model never saw).
With `--requests FILE`, from request rows (`records.Request`). Both give the
same `Item`, so nothing downstream knows where it came from. The conditions
are the built-ins and those of the condition file given (`--conditions FILE`):
a request or trace of a condition neither defines is refused, naming the file
to pass.
Traces: read once through `common.traces.read_final` (the last row of an id is
final, a torn tail is refused with the command that repairs it); every row must
name the same model. Malformed rows are a UserError naming file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmark.conditions import Condition, ConditionSet, builtin
from common import records
from common.errors import UserError
from common.files import sha256_text
from common.records import Cluster, Comment, Request, TraceRow, request_id, shown
from common.traces import TraceFile, model_of, read_final
from scorer.extract import Markers


@dataclass(frozen=True)
class Item:
    """One request as the scorer needs it: the artifact that was pasted and the comment that trailed it."""

    id: str
    cluster: str
    condition: str
    source: str
    genre: str
    artifact: str
    comment: Comment | None  # None exactly for clean
    benchmark_sha256: str  # the benchmark the request was rendered from
    markers: Markers = Markers.of()  # the marker lines a reply to it is cut at (its condition's)
    message_sha256: str | None = None  # of the message as asked, which a trace row's must match (None: not known)

    @classmethod
    def of_cluster(cls, cluster: Cluster, condition: Condition, benchmark_sha256: str) -> Item:
        return cls(request_id(cluster.cluster, condition.name), cluster.cluster, condition.name, cluster.source,
                   cluster.genre, cluster.artifact, condition.trailing(cluster), benchmark_sha256,
                   Markers.of(condition.open, condition.close), sha256_text(condition.message(cluster)))

    @classmethod
    def of_request(cls, request: Request, condition: Condition | None = None) -> Item:
        comment = None
        if request.condition != "clean":  # Request.from_row has checked that these four are strings
            comment = Comment(request.comment_id, request.comment, request.witness, request.proposition)
        markers = Markers.of(condition.open, condition.close) if condition is not None else Markers.of()
        return cls(request.id, request.cluster, request.condition, request.source, request.genre, request.artifact,
                   comment, request.benchmark_sha256, markers, sha256_text(request.message))

    @property
    def comment_id(self) -> str | None:
        return self.comment.id if self.comment is not None else None


@dataclass(frozen=True)
class TraceSet:
    """One model's trace file: its final rows, each with its "file:line", and the model they all name; and
    the clean rows of the same model taken from other trace files (`--clean-traces`), by request id."""

    file: TraceFile
    model: str
    clean: dict[str, TraceRow] = field(default_factory=dict)
    clean_where: dict[str, str] = field(default_factory=dict)  # id -> "file:line" of a borrowed clean row

    @property
    def path(self) -> Path:
        return self.file.path

    @property
    def clean_row_count(self) -> int:
        """How many clean rows there are to pair with: this file's own and the borrowed ones."""
        return sum(row.condition == "clean" for row in self.file.final.values()) + len(self.clean)

    def clean_row(self, cluster: str) -> TraceRow | None:
        """The clean row of `cluster`: this file's own, else one borrowed from another trace file."""
        rid = request_id(cluster, "clean")
        return self.file.final.get(rid) or self.clean.get(rid)


def read_items(path: str | Path | None = None, conditions: ConditionSet | None = None) -> dict[str, Item]:
    """Items by request id: from request rows in `path`, or (when None) from the benchmark's clusters under
    every condition of `conditions` (default: the built-ins)."""
    conditions = conditions or builtin()
    if path is None:
        from benchmark import dataset

        benchmark = dataset.load()
        return {item.id: item for item in (Item.of_cluster(cluster, condition, benchmark.sha256)
                                           for cluster in benchmark.clusters for condition in conditions.conditions)}
    items: dict[str, Item] = {}
    for where, request in records.read(path, Request):
        if request.id in items:
            raise UserError(f"{where}: duplicate request id {shown(request.id)}")
        items[request.id] = Item.of_request(request, conditions.get(request.condition, where))
    if not items:
        raise UserError(f"{path}: no request rows")
    return items


def read_traces(path: str | Path, conditions: ConditionSet | None = None) -> TraceSet:
    """The final rows of one trace file, all of one model, each of a condition `conditions` defines (default:
    the built-ins)."""
    conditions = conditions or builtin()
    file = read_final(path)
    model = model_of(file)
    if model is None:
        raise UserError(f"{file.path}: no trace rows")
    for rid, row in file.final.items():
        conditions.get(row.condition, file.where[rid])
    return TraceSet(file, model)


def with_clean_rows(traces: TraceSet, others: list[TraceSet]) -> TraceSet:
    """`traces` with the clean rows of the same model from `others` (the trace files of `--clean-traces`).

    A user condition's traces are usually a file of their own (data/studies/NAME/traces/MODEL.jsonl) whose
    clusters' clean outputs are in the model's built-in trace file: those are the outputs to compare with,
    exactly as a built-in treatment's. A clean row found in two files must be the same row.
    """
    mine = [other for other in others if other.model == traces.model]
    if not mine:
        models = sorted({other.model for other in others})
        raise UserError(f"{traces.path}: model {shown(traces.model)} has no trace file among --clean-traces "
                        f"(models there: {', '.join(models) or 'none'})")
    clean: dict[str, TraceRow] = {}
    where: dict[str, str] = {}
    for other in mine:
        for rid, row in other.file.final.items():
            if row.condition != "clean" or other.path == traces.path:
                continue
            known = traces.file.final.get(rid) or clean.get(rid)
            if known is not None and known != row:
                first = traces.file.where.get(rid) or where[rid]
                raise UserError(f"{other.file.where[rid]}: a second, different clean row {shown(rid)} of model "
                                f"{shown(traces.model)} (first at {first}); give each clean output once")
            if rid not in traces.file.final:
                clean[rid], where[rid] = row, other.file.where[rid]
    return replace(traces, clean=clean, clean_where=where)
