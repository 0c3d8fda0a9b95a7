"""Read label rows and index them by model, condition and cluster.

The tables never assume a fixed list of models or conditions: both come from the
labels, so a partial run (a model without `native`, a new condition) still gives
tables, with the gaps reported instead of a crash. Each row is read as a
`common.records.Label` (the one place a label's fields are checked); here come
only the checks across rows (a second label for the same pair, a cluster whose
rows disagree on its source or casual comment), so that the statistics below can
trust their input. A malformed row is a `UserError` naming file and line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from benchmark.conditions import ConditionSet, builtin
from common import jsonl
from common.errors import UserError
from common.records import Label
from scorer.tiers import MODEL_TIER, tiers_for

# The conditions that carry the casual comment (the same one across the three).
CASUAL_CONDITIONS = ("newline", "blank", "boundary")
# The source table pools the two plain casual conditions (no markers), and so does its count of undecided rows.
POOLED_CASUAL = ("newline", "blank")


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
    # What the extraction cut around the edited text of a usable row judged not absorbed (before and after,
    # and the commentary about editing the comment cut from inside it; joined by line breaks), with the row's
    # comment_id, where anything was cut:
    # (model, condition, cluster) -> (comment_id, cut text). The sensitivity analyses read it.
    cut_text: dict[tuple[str, str, str], tuple[str | None, str]] = field(default_factory=dict)

    def outcome(self, model: str, condition: str) -> dict[str, bool | None]:
        return self.outcomes.get((model, condition), {})

    def has_condition(self, condition: str) -> bool:
        return condition in self.conditions

    @property
    def lexical_only_models(self) -> tuple[str, ...]:
        """Models with at least one prose label whose entailment tier did not run."""
        return tuple(sorted({model for (model, _), count in self.entailment_missing.items() if count}))


def condition_order(conditions, defined: ConditionSet | None = None) -> tuple[str, ...]:
    """The order of the conditions defined (the built-ins', then a condition file's), then unknown ones by name.

    >>> condition_order({"native", "zz", "newline", "aa"})
    ('newline', 'native', 'aa', 'zz')
    """
    return (defined or builtin()).order(conditions)


def label_files(paths) -> list[Path]:
    """The label files named, a directory standing for its `*.jsonl` files.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for name in ("b.jsonl", "a.jsonl", "notes.txt"):
    ...         _ = (Path(tmp) / name).write_text("")
    ...     [path.name for path in label_files([tmp])]
    ['a.jsonl', 'b.jsonl']
    """
    return jsonl.files_named(paths, "label")


def build_label_set(located_labels: Iterable[tuple[str, Label]], defined: ConditionSet | None = None) -> LabelSet:
    """Index labels given as (where, label) pairs, `where` being "file:line" for messages. Each label's
    condition must be a treatment `defined` defines (default: the built-ins; a condition file adds more): a
    control (clean, a condition file's pool "none") is what treatments are scored against, never a row here.

    >>> from stats.synthetic import label_row
    >>> rows = [label_row("m", "humaneval-000", "newline", True), label_row("m", "humaneval-000", "blank", False)]
    >>> labels = build_label_set((f"mem:{i}", Label.from_row(row, f"mem:{i}")) for i, row in enumerate(rows, 1))
    >>> labels.models, labels.conditions, labels.outcome("m", "blank")
    (('m',), ('newline', 'blank'), {'humaneval-000': False})
    """
    outcomes: dict[tuple[str, str], dict[str, bool | None]] = {}
    seen: dict[tuple[str, str, str], str] = {}
    info: dict[str, tuple[str, str, str | None, str]] = {}  # cluster -> source, genre, comment, where
    entailment: dict[tuple[str, str], int] = {}
    entailment_by_source: dict[tuple[str, str], int] = {}
    cut_text: dict[tuple[str, str, str], tuple[str | None, str]] = {}
    defined = defined or builtin()
    models, conditions = set(), set()
    for where, label in located_labels:
        model, cluster, condition, source, genre = (label.model, label.cluster, label.condition, label.source,
                                                    label.genre)
        if condition not in conditions and defined.get(condition, where).control is None:
            raise UserError(f"{where}: a label of condition {condition!r}, a control (no remark): a control's "
                            "outputs are what treatments are scored against, never labelled or tabled")
        key = (model, cluster, condition)
        if key in seen:
            raise UserError(f"{where}: second label for model {model!r}, cluster {cluster!r}, "
                            f"condition {condition!r} (first at {seen[key]})")
        seen[key] = where
        casual = label.comment_id if condition in CASUAL_CONDITIONS else None
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
        outcomes.setdefault((model, condition), {})[cluster] = label.absorbed if label.usable else None
        parts = (label.cut_before, label.cut_after, label.cut_commentary)
        if label.usable and not label.absorbed and any(parts):
            cut = "\n".join(part for part in parts if part)
            cut_text[(model, condition, cluster)] = (label.comment_id, cut)
        if MODEL_TIER in label.tiers_not_run and MODEL_TIER in tiers_for(genre):
            entailment[(model, condition)] = entailment.get((model, condition), 0) + 1
            if condition in POOLED_CASUAL:
                entailment_by_source[(model, source)] = entailment_by_source.get((model, source), 0) + 1
    if not seen:
        raise UserError("the label files hold no rows")
    clusters = {name: ClusterInfo(source, genre, comment)
                for name, (source, genre, comment, _) in sorted(info.items())}
    return LabelSet(models=tuple(sorted(models)), conditions=condition_order(conditions, defined),
                    clusters=clusters, outcomes=outcomes, entailment_missing=entailment,
                    entailment_missing_by_source=entailment_by_source, cut_text=cut_text)


def label_set_of(rows, origin: str = "row", defined: ConditionSet | None = None) -> LabelSet:
    """A `LabelSet` of label rows held in memory (tests, examples, synthetic labels), each read as a
    `Label` at "`origin`:i" as if it were line i of a file.

    >>> from stats.synthetic import synthetic_labels
    >>> labels = label_set_of(synthetic_labels(models=2, clusters=12, comments=4))
    >>> labels.models, len(labels.clusters), labels.conditions[0]
    (('model-00', 'model-01'), 12, 'newline')
    """
    return build_label_set(((f"{origin}:{i}", Label.from_row(row, f"{origin}:{i}")) for i, row in enumerate(rows, 1)),
                           defined)


def load_labels(paths, defined: ConditionSet | None = None) -> tuple[LabelSet, str]:
    """Read the label files (or directories of them) into one `LabelSet`, of conditions `defined` defines.

    Also returns the SHA-256 of the rows as canonical JSON lines sorted bytewise: it
    names the labels' content whatever their split into files or order, so that
    provenance.json stays byte-identical for the same labels.

    >>> import tempfile
    >>> from stats.synthetic import synthetic_labels
    >>> rows = synthetic_labels(models=2, clusters=12, comments=4)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     jsonl.write(Path(tmp) / "one.jsonl", rows)
    ...     jsonl.write(Path(tmp) / "split" / "a.jsonl", rows[::2])
    ...     jsonl.write(Path(tmp) / "split" / "b.jsonl", rows[1::2])
    ...     labels, digest = load_labels([Path(tmp) / "one.jsonl"])
    ...     digest == load_labels([Path(tmp) / "split"])[1]
    True
    >>> labels.models, len(labels.clusters), len(digest)
    (('model-00', 'model-01'), 12, 64)
    """
    files = label_files(paths)
    lines: list[bytes] = []

    def located():
        for path in files:
            for number, row in jsonl.read(path):
                where = f"{path}:{number}"
                label = Label.from_row(row, where)
                # the row as read: for a row of exactly the Label fields (every released one) the same
                # bytes as `jsonl.dumps(label.to_row())`, without rebuilding the row to hash it
                lines.append(jsonl.dumps(row).encode("utf-8"))
                yield where, label

    labels = build_label_set(located(), defined)
    digest = hashlib.sha256(b"".join(sorted(lines))).hexdigest()
    return labels, digest
