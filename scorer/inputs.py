"""Read the scorer's two inputs: what each request asked (one `Item` per request id) and one model's traces.

Items: by default from the committed benchmark's clusters (`benchmark.dataset.load`),
taking only what scoring needs (the artifact, the comment that trailed it
under each condition, `Condition.trailing`, the condition's marker lines,
which the extraction cuts at, the control it is scored against, and the
SHA-256 of the conversation as the condition renders it, which a trace row's
`message_sha256` must match: a condition file changed after its traces were
collected would otherwise be scored with markers, a system prompt or turns
the model never saw). A later-turn condition holding the model's own reply
(`Condition.needs_replies`) has no such SHA-256 until that reply is read from
the model's traces: its item keeps the cluster, and `asked_sha256` rebuilds
the conversation at scoring time.
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
from benchmark.replies import Replies
from common import records
from common.errors import UserError
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
    comment: Comment | None  # None exactly for a control (clean, or a condition file's pool "none")
    benchmark_sha256: str  # the benchmark the request was rendered from
    markers: Markers = Markers.of()  # the marker lines a reply to it is cut at (its condition's)
    message_sha256: str | None = None  # of the conversation as asked, which a trace row's must match (None: not known)
    control: str | None = None  # the condition it is scored against (`ConditionSet.control_of`); None for a control
    # The cluster, kept only where the conversation holds the model's own reply (`Condition.needs_replies`), so
    # that `asked_sha256` can rebuild it from the model's traces; message_sha256 is then None.
    awaiting: Cluster | None = field(default=None, compare=False, repr=False)
    reply_model: str | None = None  # a request row's: the model whose own reply its earlier turns hold

    @classmethod
    def of_cluster(cls, cluster: Cluster, condition: Condition, benchmark_sha256: str,
                   conditions: ConditionSet | None = None) -> Item:
        """The item of `cluster` under `condition`, one of `conditions` (default: the built-ins, and `condition`
        itself when it is not one of them)."""
        defined = conditions or _with(builtin(), condition)
        awaiting = cluster if condition.needs_replies else None
        asked = None if awaiting is not None else defined.conversation(condition.name, cluster).sha256
        return cls(request_id(cluster.cluster, condition.name), cluster.cluster, condition.name, cluster.source,
                   cluster.genre, cluster.artifact, condition.trailing(cluster), benchmark_sha256,
                   Markers.of(condition.open, condition.close), asked, defined.control_of(condition.name), awaiting)

    @classmethod
    def of_request(cls, request: Request, condition: Condition | None = None) -> Item:
        comment = None
        if request.treated:  # Request.from_row has checked that these four are strings
            comment = Comment(request.comment_id, request.comment, request.witness, request.proposition)
        markers = Markers.of(condition.open, condition.close) if condition is not None else Markers.of()
        control = condition.control if condition is not None else "clean" if request.treated else None
        return cls(request.id, request.cluster, request.condition, request.source, request.genre, request.artifact,
                   comment, request.benchmark_sha256, markers, request.conversation.sha256, control,
                   reply_model=request.reply_model)

    @property
    def comment_id(self) -> str | None:
        return self.comment.id if self.comment is not None else None


def _with(defined: ConditionSet, condition: Condition) -> ConditionSet:
    """`defined` with `condition` too, when it does not hold it (an item made from a condition given alone)."""
    if defined.by_name.get(condition.name) == condition:
        return defined
    return replace(defined, conditions=(*defined.conditions, condition))


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

    def control_row(self, cluster: str, control: str) -> TraceRow | None:
        """The row of `cluster` under `control`: this file's own, else (clean only) one borrowed from another
        trace file. A condition file's control (later-control) is collected beside its treatments, so it is
        taken from the same file only."""
        rid = request_id(cluster, control)
        return self.file.final.get(rid) or self.clean.get(rid)

    def where(self, rid: str) -> str:
        """The "file:line" of a final row, own or borrowed."""
        return self.file.where.get(rid) or self.clean_where[rid]

    def replies(self) -> Replies:
        """The model's own replies a later-turn conversation holds: this file's final rows and the borrowed
        clean ones (`benchmark.replies.Replies`, as `--replies` gives them to `prompts` and `run`)."""
        source = str(self.path) + (" and --clean-traces" if self.clean else "")
        return Replies({**self.clean, **self.file.final}, source, self.model)


def asked_sha256(item: Item, replies: Replies | None, conditions: ConditionSet, where: str) -> str | None:
    """The SHA-256 of what `item` asked, for a trace row at `where` to match: the item's own, or for a
    conversation holding the model's own reply (`Item.awaiting`) that conversation rebuilt with the reply in
    `replies` (which must then be given). A reply missing or unusable there is refused: the conversation cannot
    be known, so neither can the markers, system prompt and turns the model was sent."""
    if item.awaiting is None:
        return item.message_sha256
    assert replies is not None, "a conversation holding the model's own reply is rebuilt from its replies"
    conversation = conditions.conversation(item.condition, item.awaiting, replies)
    if conversation is None:
        opening = conditions.get(item.condition).opening
        rid = request_id(item.cluster, opening)
        how = replies.missed.get(item.id, "missing")
        raise UserError(f"{where}: condition {item.condition!r} holds the model's own reply to {shown(rid)}, which "
                        f"is {how} in {replies.source}; score with the trace file the conversation was built from "
                        f"(its --replies), itself or by --clean-traces")
    return conversation.sha256


def read_items(path: str | Path | None = None, conditions: ConditionSet | None = None) -> dict[str, Item]:
    """Items by request id: from request rows in `path`, or (when None) from the benchmark's clusters under
    every condition of `conditions` (default: the built-ins)."""
    conditions = conditions or builtin()
    if path is None:
        from benchmark import dataset

        benchmark = dataset.load()
        return {item.id: item for item in (Item.of_cluster(cluster, condition, benchmark.sha256, conditions)
                                           for cluster in benchmark.clusters for condition in conditions.conditions)}
    items: dict[str, Item] = {}
    for where, request in records.read(path, Request):
        if request.id in items:
            raise UserError(f"{where}: duplicate request id {shown(request.id)}")
        condition = conditions.check_request(request, where)
        items[request.id] = Item.of_request(request, condition)
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
