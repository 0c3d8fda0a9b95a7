"""The review's inputs: labels (the kit's verdicts), traces (the outputs) and what each request asked.

Each input file is identified by the SHA-256 of its bytes, recorded in the review
file's header when the sample is drawn and checked whenever the file is read
again (by the page's server and by the report), so that a review is always
judged against, and joined with, exactly the files it was drawn from.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from benchmark.conditions import builtin, builtin_only
from common import jsonl, records
from common.errors import UserError
from common.records import Cluster, Label, Request, request_id, shown
from common.traces import model_of, read_final
from review.records import FileRef

# A review is drawn from the built-in conditions' labels (its strata and page know those); a label of a condition
# file's is refused saying so (docs/CONDITIONS.md).
BUILTIN_ONLY = builtin_only("a review is drawn from the built-in conditions' labels only")


@dataclass(frozen=True)
class Asked:
    """What a request asked, as the review page shows it: the instruction, the artifact, the trailing comment."""

    instruction: str
    artifact: str
    comment: str | None  # None for clean


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_labels(paths) -> tuple[dict[tuple[str, str], Label], tuple[FileRef, ...]]:
    """Labels by (model, id), from label files or directories of them, and a `FileRef` per file."""
    labels: dict[tuple[str, str], Label] = {}
    seen: dict[tuple[str, str], str] = {}
    refs = []
    for path in jsonl.files_named(paths, "label"):
        refs.append(FileRef(path.as_posix(), sha256_of(path)))
        for number, row in jsonl.read(path):
            where = f"{path}:{number}"
            label = Label.from_row(row, where)
            BUILTIN_ONLY.get(label.condition, where)
            key = (label.model, label.id)
            if key in seen:
                raise UserError(f"{where}: second label for model {label.model!r}, {label.id} (first at {seen[key]})")
            seen[key] = where
            labels[key] = label
    if not labels:
        raise UserError(f"{', '.join(map(str, paths))}: no label rows")
    return labels, tuple(refs)


def load_traces(paths) -> tuple[dict[str, dict], tuple[FileRef, ...]]:
    """Final trace rows by model and id, from trace files (one model each), and a `FileRef` per file."""
    by_model: dict[str, dict] = {}
    refs = []
    for path in jsonl.files_named(paths, "trace"):
        file = read_final(path)
        model = model_of(file)
        if model is None:
            raise UserError(f"{path}: no trace rows")
        if model in by_model:
            raise UserError(f"{path}: a second trace file of model {model!r}; give one trace file per model")
        by_model[model] = file.final
        refs.append(FileRef(path.as_posix(), sha256_of(path), model))
    return by_model, tuple(refs)


def check_unchanged(refs: tuple[FileRef, ...], what: str) -> None:
    """Refuse when a file the header names is missing or no longer has the bytes it was drawn from."""
    for ref in refs:
        path = Path(ref.path)
        if not path.is_file():
            raise UserError(f"{path}: the {what} file this review was drawn from is missing (run the review from "
                            "the folder 'seam.py review sample' ran in: the header names files as given there)")
        if sha256_of(path) != ref.sha256:
            raise UserError(f"{path}: this {what} file changed since the sample was drawn (SHA-256 "
                            f"{sha256_of(path)[:12]}…, the header records {ref.sha256[:12]}…); the review must be "
                            "read against the files it was drawn from")


def load_asked(requests: Path | None) -> tuple[dict[str, Asked], str]:
    """What each request id asked, and the benchmark's checksum: from the committed benchmark, or from
    request rows (`seam.py prompts`, `--requests`), whose instruction is read off the clean message."""
    if requests is None:
        from benchmark import dataset

        benchmark = dataset.load()
        asked = {}
        for cluster in benchmark.clusters:
            asked.update(_of_cluster(cluster))
        return asked, benchmark.sha256
    rows = [request for _, request in _read_requests(requests)]
    if not rows:
        raise UserError(f"{requests}: no request rows")
    clean = {row.cluster: row for row in rows if row.condition == "clean"}
    asked = {}
    for row in rows:
        base = clean.get(row.cluster)
        if base is None:
            raise UserError(f"{requests}: cluster {row.cluster!r} has no clean request, from which the instruction "
                            "is read")
        suffix = "\n\n" + base.artifact
        if not base.message.endswith(suffix):
            raise UserError(f"{requests}: the clean message of {row.cluster!r} is not the instruction, a blank "
                            "line and the artifact")
        asked[row.id] = Asked(base.message[:-len(suffix)], row.artifact, row.comment)
    return asked, rows[0].benchmark_sha256


def _of_cluster(cluster: Cluster) -> dict[str, Asked]:
    asked = {}
    for condition in builtin().conditions:
        comment = condition.trailing(cluster)
        asked[request_id(cluster.cluster, condition.name)] = Asked(cluster.instruction, cluster.artifact,
                                                                   comment.text if comment else None)
    return asked


def _read_requests(path: Path):
    seen: dict[str, str] = {}
    for where, request in records.read(path, Request):
        if request.id in seen:
            raise UserError(f"{where}: duplicate request id {shown(request.id)} (first at {seen[request.id]})")
        seen[request.id] = where
        yield where, request
