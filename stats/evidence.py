"""What the sensitivity analyses read besides the labels: the benchmark's comments and the trace outputs.

The labels say what the scorer decided, not what it looked at: an excluded
label keeps no output text, and no label keeps its comment's witness phrase.
Two analyses need them (`stats.alternatives`): whether an excluded output
nevertheless holds the witness phrase (the trace outputs), and whether a
comment was reproduced in the text the extraction cut around the edit (the
comments). The comments come from the committed benchmark through the scorer's
own reader (`scorer.inputs.read_items`), so they are exactly the comments the
labels were scored against; traces are read with the kit's one trace reader
(`common.traces.read_final`), so a torn tail is refused here as everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from benchmark.conditions import ConditionSet, builtin
from common import jsonl
from common.errors import UserError
from common.records import Comment, TraceRow, shown
from common.traces import model_of, read_final


@dataclass(frozen=True)
class Evidence:
    """The comments of the benchmark and, when traces were given, every final trace row.

    `outputs` is None when no traces were given (the analyses that need them are then
    not computed), else (model, request id) -> final row.
    """

    comments: Mapping[str, Comment] = field(default_factory=dict)  # request id -> the comment that trailed it
    benchmark_sha256: str | None = None
    outputs: Mapping[tuple[str, str], TraceRow] | None = None
    trace_files: tuple[str, ...] = ()
    # treatment -> the control it is scored against, where that is not clean (a later turn's: docs/CONDITIONS.md)
    controls: Mapping[str, str] = field(default_factory=dict)
    origins: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (model, request id) -> its trace file


def benchmark_comments(data_dir: Path | None = None,
                       conditions: ConditionSet | None = None) -> tuple[dict[str, Comment], str]:
    """The comment that trailed each treatment request of the benchmark (request id -> `Comment`) under every
    treatment of `conditions` (default: the built-ins), and the benchmark's SHA-256, from the scorer's items.

    >>> comments, digest = benchmark_comments()
    >>> comment = comments["humaneval-001/native"]
    >>> comment.id.startswith("native-code-"), len(comments), len(digest)
    (True, 1500, 64)
    """
    from benchmark import dataset
    from scorer.inputs import Item

    conditions = conditions or builtin()
    benchmark = dataset.load() if data_dir is None else dataset.load(data_dir)
    comments = {}
    for cluster in benchmark.clusters:
        for name in conditions.treatments:
            item = Item.of_cluster(cluster, conditions.get(name), benchmark.sha256, conditions)
            comments[item.id] = item.comment
    return comments, benchmark.sha256


def read_outputs(paths) -> tuple[dict[tuple[str, str], TraceRow], tuple[str, ...]]:
    """Every final trace row of the trace files named (a directory standing for its `*.jsonl` files), by
    (model, request id), and the files read. One model per file, each (model, id) given once.

    >>> import tempfile
    >>> from scorer.synthetic import trace_row
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     jsonl.write(Path(tmp) / "m.jsonl", [trace_row("humaneval-001", "clean", "pass", model="m").to_row()])
    ...     outputs, files = read_outputs([tmp])
    >>> sorted(outputs), outputs[("m", "humaneval-001/clean")].status, len(files)
    ([('m', 'humaneval-001/clean')], 'ok', 1)
    """
    outputs, files, _ = _read_outputs(paths)
    return outputs, files


def _read_outputs(paths) -> tuple[dict[tuple[str, str], TraceRow], tuple[str, ...], dict[tuple[str, str], str]]:
    """`read_outputs`, and the file each row was read from, by the same key."""
    outputs: dict[tuple[str, str], TraceRow] = {}
    given_in: dict[tuple[str, str], Path] = {}
    files = jsonl.files_named(paths, "trace")
    for path in files:
        trace = read_final(path)
        model_of(trace)  # one model per file, as the scorer requires
        for rid, row in trace.final.items():
            key = (row.model, rid)
            if key in outputs:
                raise UserError(f"{trace.where[rid]}: model {shown(row.model)} already has a final row for "
                                f"{shown(rid)} in {given_in[key]}; give each model's trace once")
            outputs[key] = row
            given_in[key] = path
    return outputs, tuple(str(path) for path in files), {key: str(path) for key, path in given_in.items()}


def read_evidence(trace_paths=None, conditions: ConditionSet | None = None) -> Evidence:
    """The benchmark's comments (under every treatment of `conditions`, default the built-ins) and, when
    `trace_paths` is given, the trace outputs.

    Without traces a missing benchmark is no error: the tables need it only for the
    analysis of text cut around the edit, which is then left out with a note.

    >>> evidence = read_evidence()
    >>> evidence.outputs is None, len(evidence.comments), evidence.controls
    (True, 1500, {})
    """
    defined = conditions or builtin()
    controls = {name: control for name in defined.treatments
                if (control := defined.control_of(name)) not in (None, "clean")}
    try:
        comments, digest = benchmark_comments(conditions=conditions)
    except UserError:
        if trace_paths is not None:
            raise
        return Evidence(controls=controls)
    if trace_paths is None:
        return Evidence(comments, digest, controls=controls)
    outputs, files, origins = _read_outputs(trace_paths)
    if not outputs:
        raise UserError(f"{', '.join(map(str, trace_paths))}: no trace rows (--traces)")
    return Evidence(comments, digest, outputs, files, controls, origins)
