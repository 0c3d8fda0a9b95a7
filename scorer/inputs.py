"""Read the scorer's two inputs: what each request asked (one `Item` per request id) and one model's traces.

Items: by default from the committed benchmark's clusters (`benchmark.dataset.load`),
taking only what scoring needs (the artifact, and the comment that trailed it
under each condition, `Cluster.trailing`); the messages themselves are never
rendered. With `--requests FILE`, from request rows (`records.Request`). Both
give the same `Item`, so nothing downstream knows where it came from.
Traces: read once through `common.traces.read_final` (the last row of an id is
final, a torn tail is refused with the command that repairs it); every row must
name the same model. Malformed rows are a UserError naming file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from common import records
from common.errors import UserError
from common.records import CONDITIONS, Cluster, Comment, Request, request_id, shown
from common.traces import TraceFile, model_of, read_final


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

    @classmethod
    def of_cluster(cls, cluster: Cluster, condition: str, benchmark_sha256: str) -> Item:
        return cls(request_id(cluster.cluster, condition), cluster.cluster, condition, cluster.source, cluster.genre,
                   cluster.artifact, cluster.trailing(condition), benchmark_sha256)

    @classmethod
    def of_request(cls, request: Request) -> Item:
        comment = None
        if request.condition != "clean":  # Request.from_row has checked that these four are strings
            comment = Comment(request.comment_id, request.comment, request.witness, request.proposition)
        return cls(request.id, request.cluster, request.condition, request.source, request.genre, request.artifact,
                   comment, request.benchmark_sha256)

    @property
    def comment_id(self) -> str | None:
        return self.comment.id if self.comment is not None else None


@dataclass(frozen=True)
class TraceSet:
    """One model's trace file: its final rows, each with its "file:line", and the model they all name."""

    file: TraceFile
    model: str

    @property
    def path(self) -> Path:
        return self.file.path


def read_items(path: str | Path | None = None) -> dict[str, Item]:
    """Items by request id: from request rows in `path`, or (when None) from the benchmark's clusters."""
    if path is None:
        from benchmark import dataset

        benchmark = dataset.load()
        return {item.id: item for item in (Item.of_cluster(cluster, condition, benchmark.sha256)
                                           for cluster in benchmark.clusters for condition in CONDITIONS)}
    items: dict[str, Item] = {}
    for where, request in records.read(path, Request):
        if request.id in items:
            raise UserError(f"{where}: duplicate request id {shown(request.id)}")
        items[request.id] = Item.of_request(request)
    if not items:
        raise UserError(f"{path}: no request rows")
    return items


def read_traces(path: str | Path) -> TraceSet:
    """The final rows of one trace file, all of one model."""
    file = read_final(path)
    model = model_of(file)
    if model is None:
        raise UserError(f"{file.path}: no trace rows")
    return TraceSet(file, model)
