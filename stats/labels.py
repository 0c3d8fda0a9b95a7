"""Read label rows and index them by model, condition and cluster.

The tables never assume a fixed list of models or conditions: both come from the
labels, so a partial run (a model without `native`, a new condition) still gives
tables, with the gaps reported instead of a crash. Rows are checked here, once,
so that the statistics below can trust their input; a malformed row is a
`UserError` naming file and line.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from benchmark.render import CONDITIONS
from common import jsonl
from common.errors import UserError

# The conditions that carry the casual comment (the same one across the three).
CASUAL_CONDITIONS = ("newline", "blank", "boundary")


@dataclass(frozen=True)
class ClusterInfo:
    """What the tables need to know about a cluster besides its outcomes."""

    source: str
    genre: str
    casual_comment: str | None  # comment_id carried by newline/blank/boundary rows


@dataclass(frozen=True)
class LabelSet:
    """All labels, indexed. `outcomes[(model, condition)][cluster]` is True/False when
    usable and None when the pair was excluded; a missing key means no row."""

    models: tuple[str, ...]
    conditions: tuple[str, ...]
    clusters: dict[str, ClusterInfo]
    outcomes: dict[tuple[str, str], dict[str, bool | None]]
    # (model, condition) -> number of prose rows whose entailment tier did not run
    entailment_missing: dict[tuple[str, str], int]
    # (model, source) -> the same count, restricted to the casual newline/blank rows
    entailment_missing_by_source: dict[tuple[str, str], int]

    def outcome(self, model: str, condition: str) -> dict[str, bool | None]:
        return self.outcomes.get((model, condition), {})

    def has_condition(self, condition: str) -> bool:
        return condition in self.conditions

    @property
    def lexical_only_models(self) -> tuple[str, ...]:
        """Models with at least one prose label whose entailment tier did not run."""
        return tuple(sorted({model for (model, _), count in self.entailment_missing.items() if count}))


def condition_order(conditions) -> tuple[str, ...]:
    """The benchmark's order for known conditions, then unknown ones by name."""
    known = [c for c in CONDITIONS if c in conditions]
    return tuple(known + sorted(set(conditions) - set(CONDITIONS)))


def label_files(paths) -> list[Path]:
    """The label files named, a directory standing for its `*.jsonl` files."""
    return jsonl.files_named(paths, "label")


def _require(row: dict, key: str, types, where: str, expected: str):
    if key not in row:
        raise UserError(f"{where}: label row has no '{key}' field (expected {expected})")
    value = row[key]
    # bool is a subclass of int; the checks below never accept it by accident
    if not isinstance(value, types) or (isinstance(value, str) and not value and types is str):
        raise UserError(f"{where}: field '{key}' is {value!r}; expected {expected}")
    return value


def _check_row(row: dict, where: str) -> tuple:
    model = _require(row, "model", str, where, "a non-empty string")
    cluster = _require(row, "cluster", str, where, "a non-empty string")
    condition = _require(row, "condition", str, where, "a non-empty string")
    source = _require(row, "source", str, where, "a non-empty string")
    genre = _require(row, "genre", str, where, "'code' or 'prose'")
    comment_id = _require(row, "comment_id", (str, type(None)), where, "a string")
    usable = _require(row, "usable", bool, where, "true or false")
    absorbed = _require(row, "absorbed", (bool, type(None)), where, "true, false or null")
    if usable and absorbed is None:
        raise UserError(f"{where}: usable row has absorbed=null; expected true or false")
    not_run = _require(row, "tiers_not_run", list, where, "a list of tier names")
    if not all(isinstance(t, str) for t in not_run):
        raise UserError(f"{where}: field 'tiers_not_run' must list tier names as strings")
    return model, cluster, condition, source, genre, comment_id, usable, absorbed, not_run


def build_label_set(located_rows) -> LabelSet:
    """Index rows given as (where, row) pairs, `where` being "file:line" for messages."""
    outcomes: dict[tuple[str, str], dict[str, bool | None]] = {}
    seen: dict[tuple[str, str, str], str] = {}
    info: dict[str, tuple[str, str, str | None, str]] = {}  # cluster -> source, genre, comment, where
    entailment: dict[tuple[str, str], int] = {}
    entailment_by_source: dict[tuple[str, str], int] = {}
    models, conditions = set(), set()
    for where, row in located_rows:
        checked = _check_row(row, where)
        model, cluster, condition, source, genre, comment_id, usable, absorbed, not_run = checked
        key = (model, cluster, condition)
        if key in seen:
            raise UserError(f"{where}: second label for model {model!r}, cluster {cluster!r}, "
                            f"condition {condition!r} (first at {seen[key]})")
        seen[key] = where
        casual = comment_id if condition in CASUAL_CONDITIONS else None
        if cluster in info:
            known_source, known_genre, known_comment, first = info[cluster]
            if (known_source, known_genre) != (source, genre):
                raise UserError(f"{where}: cluster {cluster!r} has source/genre {source}/{genre} here "
                                f"but {known_source}/{known_genre} at {first}")
            if casual is not None and known_comment is not None and casual != known_comment:
                raise UserError(f"{where}: cluster {cluster!r} carries casual comment {casual!r} here "
                                f"but {known_comment!r} at {first}; newline, blank and boundary "
                                "must carry the same comment")
            if known_comment is None and casual is not None:
                info[cluster] = (source, genre, casual, where)
        else:
            info[cluster] = (source, genre, casual, where)
        models.add(model)
        conditions.add(condition)
        outcomes.setdefault((model, condition), {})[cluster] = bool(absorbed) if usable else None
        if genre == "prose" and "entailment" in not_run:
            entailment[(model, condition)] = entailment.get((model, condition), 0) + 1
            if condition in ("newline", "blank"):
                entailment_by_source[(model, source)] = entailment_by_source.get((model, source), 0) + 1
    if not seen:
        raise UserError("the label files hold no rows")
    clusters = {name: ClusterInfo(source, genre, comment)
                for name, (source, genre, comment, _) in sorted(info.items())}
    return LabelSet(models=tuple(sorted(models)), conditions=condition_order(conditions),
                    clusters=clusters, outcomes=outcomes, entailment_missing=entailment,
                    entailment_missing_by_source=entailment_by_source)


def load_labels(paths) -> tuple[LabelSet, str]:
    """Read the label files (or directories of them) into one `LabelSet`.

    Also returns the SHA-256 of the rows as canonical JSON lines sorted bytewise: it
    names the labels' content whatever their split into files or order, so that
    provenance.json stays byte-identical for the same labels.
    """
    files = label_files(paths)
    lines: list[bytes] = []

    def located():
        for path in files:
            for number, row in jsonl.read(path):
                lines.append(jsonl.dumps(row).encode("utf-8"))
                yield f"{path}:{number}", row

    labels = build_label_set(located())
    digest = hashlib.sha256(b"".join(sorted(lines))).hexdigest()
    return labels, digest
