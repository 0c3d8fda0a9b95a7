"""Gather every treatment case the page shows: the message, its control's output, the verdict.

One `Case` per label row. The page gets them as a `Document` (`payload`): a
small index read at load and a line of details per case read when it is shown,
built so that the same inputs give the same bytes: models sorted, cases in
(benchmark order, condition, model) order, keys sorted. Each cluster's artifact
is stored once and the messages refer to it, so the page holds every message
of every condition without six copies of each paste. The conditions are the
built-ins and those of the condition file given (`--conditions FILE`); a
model's labels and traces may come in several files (a condition file's kept
apart from the built-in ones: docs/CONDITIONS.md), each id once. An output
longer than the kit reads is kept and shown cut (`SHOWN_OF_LONG`).
A case is shown with the output it was scored against: its control's, clean's
for every built-in treatment, a condition file's own control for a later turn
(`Condition.control`); a later turn holding the model's own reply is shown with
that reply too, the assistant's turn of its conversation (report/setups.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmark.conditions import Condition, ConditionSet, builtin
from benchmark.dataset import Benchmark
from common.errors import UserError
from common.records import MAX_OUTPUT_CHARS, Cluster, Label, TraceRow, read, request_id, shown
from common.traces import model_of, read_final
from report.segments import Piece, extraction_cuts, message_pieces, output_pieces
from report.setups import setups

VERDICTS = ("absorbed", "not absorbed", "excluded")
# An output longer than the kit reads (common.records.MAX_OUTPUT_CHARS: the runner cuts a reply to that length, so
# only a hand-made trace holds a longer one, and the scorer excludes it) is kept in part as soon as its trace file
# is read, its first SHOWN_OF_LONG characters, and shown as them followed by a note of its length (`omitted_note`).
# The whole of it once went into the page: one reply of 40 MB made a page of 50 MB and took `compare` to 886 MB.
SHOWN_OF_LONG = 10_000


def omitted_note(length: int) -> str:
    """What stands after the first SHOWN_OF_LONG characters of an output of `length` characters.

    >>> print(omitted_note(1_234_567))
    <BLANKLINE>
    [not shown: the other 1,224,567 characters. This output is 1,234,567 characters long, longer than the ...]
    """
    return (f"\n[not shown: the other {length - SHOWN_OF_LONG:,} characters. This output is {length:,} characters "
            f"long, longer than the {MAX_OUTPUT_CHARS:,} characters the kit reads.]")


@dataclass(frozen=True)
class Case:
    """One treatment row: its label, its treatment trace row and its control's (clean's, for a built-in)."""

    label: Label
    treatment: TraceRow
    control: TraceRow | None  # the row it was scored against, of its condition's control
    condition: Condition  # the label's condition, as defined
    # The length of the treatment (control, reply) output when it is longer than MAX_OUTPUT_CHARS: the row's
    # `output` then holds its first SHOWN_OF_LONG characters only (`bounded`). None for every other output.
    treatment_chars: int | None = None
    control_chars: int | None = None
    # A later turn holding the model's own reply (`Condition.needs_replies`): the model's row of the opening
    # condition, whose output is the conversation's assistant turn. None for every other case.
    reply: TraceRow | None = None
    reply_chars: int | None = None

    @property
    def verdict(self) -> str:
        if not self.label.usable:
            return "excluded"
        return "absorbed" if self.label.absorbed else "not absorbed"

    @property
    def stopped_by_limit(self) -> bool:
        """The treatment reply, or the control's it is compared with, was cut off by the output limit."""
        return "length" in (self.treatment.finish_reason, self.control.finish_reason if self.control else None)

    def unmarked_cuts(self) -> list[str]:
        """The extraction's cuts that the output's pieces cannot mark (see `extraction_cuts`): shown as text."""
        if self.treatment.output is None:
            return []
        if self.treatment_chars is not None:  # only the output's first part is at hand: no cut is marked in it
            return [cut for cut in (self.label.cut_before, self.label.cut_after) if cut]
        found = extraction_cuts(self.treatment.output, self.label.cut_before, self.label.cut_after)
        return [cut for cut, mark in zip((self.label.cut_before, self.label.cut_after), found, strict=True)
                if cut and not mark]

    def pieces(self) -> tuple[Piece, ...] | None:
        if self.treatment.output is None:
            return None
        if self.treatment_chars is not None:  # its first part, unmarked, and the note (muted on the page)
            return ("", self.treatment.output), ("none", omitted_note(self.treatment_chars))
        return output_pieces(self.treatment.output, cut_before=self.label.cut_before,
                             cut_after=self.label.cut_after, commentary=self.label.cut_commentary,
                             evidence=self.label.evidence)


@dataclass(frozen=True)
class ModelCases:
    model: str
    cases: tuple[Case, ...]  # benchmark order, then condition order
    labels_paths: tuple[Path, ...]
    traces_paths: tuple[Path, ...]
    # The harnesses that collected the outputs, from the rows' request.harness (`seam.py import`), e.g.
    # "inspect_ai 0.3.285"; empty for outputs of the kit's own runner.
    harnesses: tuple[str, ...] = ()


@dataclass
class _Traces:
    """One model's final trace rows from one or more files, and the file each came from."""

    final: dict[str, TraceRow]
    where: dict[str, str]
    paths: list[Path]
    lengths: dict[str, int]  # id -> the length of an output longer than MAX_OUTPUT_CHARS, kept cut (`bounded`)
    files: dict[str, int] = field(default_factory=dict)  # id -> the index in `paths` of the file it came from

    def control(self, treatment_id: str, control_id: str, control: str) -> TraceRow | None:
        """The row a treatment was scored against, found as the scorer finds it (`scorer.inputs.TraceSet`):
        clean's from any of the model's files, a condition file's own control from the treatment's file only."""
        if control != "clean" and self.files.get(control_id) != self.files.get(treatment_id):
            return None
        return self.final.get(control_id)


def load(label_files: list[Path], trace_files: list[Path], benchmark: Benchmark,
         conditions: ConditionSet | None = None) -> tuple[ModelCases, ...]:
    """Pair the label files of each model with the trace files of that model; every label must find its
    trace row, and name a condition of `conditions` (default: the built-ins)."""
    conditions = conditions or builtin()
    traces: dict[str, _Traces] = {}
    for path in trace_files:
        trace = read_final(path)
        model = model_of(trace)
        if model is None:
            continue
        mine = traces.setdefault(model, _Traces({}, {}, [], {}))
        for rid, row in trace.final.items():
            if rid in mine.final:
                raise UserError(f"{trace.where[rid]}: a second final row {shown(rid)} of model {shown(model)} "
                                f"(first at {mine.where[rid]}); give each model's trace once")
            mine.final[rid], length = bounded(row)
            mine.where[rid] = trace.where[rid]
            mine.files[rid] = len(mine.paths)
            if length is not None:
                mine.lengths[rid] = length
        mine.paths.append(Path(path))
        del trace  # its rows' long outputs go with it, before the next file is read
    order = {c.cluster: i for i, c in enumerate(benchmark.clusters)}
    rank = {name: i for i, name in enumerate(conditions.names)}
    found: dict[str, list[Case]] = {}
    paths: dict[str, list[Path]] = {}
    seen: dict[tuple[str, str], str] = {}
    for path in label_files:
        labels = [(where, label) for where, label in read(path, Label)]
        if not labels:
            continue
        model = labels[0][1].model
        if model not in traces:
            raise UserError(f"{path}: labels of model {shown(model)}, but no trace file of that model was given")
        trace = traces[model]
        cases = found.setdefault(model, [])
        paths.setdefault(model, []).append(Path(path))
        for where, label in labels:
            if label.model != model:
                raise UserError(f"{where}: model {shown(label.model)}, but earlier rows are {shown(model)}")
            if (model, label.id) in seen:
                raise UserError(f"{where}: a second label {shown(label.id)} of model {shown(model)} (first at "
                                f"{seen[(model, label.id)]})")
            seen[(model, label.id)] = where
            condition = conditions.get(label.condition, where)
            if condition.control is None:
                raise UserError(f"{where}: a label of condition {shown(label.condition)}, a control (no remark): a "
                                "control's outputs are what treatments are scored against, never labelled")
            if label.cluster not in order:
                raise UserError(f"{where}: cluster {shown(label.cluster)} is not in the benchmark")
            treatment = trace.final.get(label.id)
            if treatment is None:
                raise UserError(f"{where}: no trace row {shown(label.id)} in {', '.join(map(str, trace.paths))}")
            control_id = request_id(label.cluster, condition.control)
            reply_id = request_id(label.cluster, condition.opening) if condition.needs_replies else None
            control = trace.control(label.id, control_id, condition.control)
            cases.append(Case(label, treatment, control, condition, trace.lengths.get(label.id),
                              trace.lengths.get(control_id) if control else None,
                              trace.final.get(reply_id) if reply_id else None,
                              trace.lengths.get(reply_id) if reply_id else None))
    if not found:
        raise UserError("no label rows in the label files given")
    loaded = []
    for model in sorted(found):
        cases = sorted(found[model], key=lambda c: (order[c.label.cluster], rank[c.label.condition]))
        loaded.append(ModelCases(model, tuple(cases), tuple(paths[model]), tuple(traces[model].paths),
                                 harnesses_of(traces[model].final.values())))
    return tuple(loaded)


def bounded(row: TraceRow) -> tuple[TraceRow, int | None]:
    """The row as the page keeps it, and the length of its output when that is longer than MAX_OUTPUT_CHARS:
    then the row holds the output's first SHOWN_OF_LONG characters, and no `response` (which a hand-made row may
    fill with another copy of the reply; the page never reads it). Every other row is returned as it is."""
    if row.output is None or len(row.output) <= MAX_OUTPUT_CHARS:
        return row, None
    return replace(row, output=row.output[:SHOWN_OF_LONG], response=None), len(row.output)


def harnesses_of(rows) -> tuple[str, ...]:
    """The harnesses named in the rows' `request.harness` (name and version), sorted; () for the runner's rows."""
    found = set()
    for row in rows:
        harness = row.request.get("harness")
        if isinstance(harness, dict) and isinstance(harness.get("name"), str):
            version = harness.get("version")
            found.add(f"{harness['name']} {version}" if isinstance(version, str) else harness["name"])
    return tuple(sorted(found))


@dataclass(frozen=True)
class Document:
    """What the page's script reads, in two blocks: `index` is read at load, `details` only when shown.

    `index` (the #seam-data block, one JSON document): "models", "conditions", "clusters" (each with its
    artifact and its message under every condition), "cases" and, on a page of `seam.py compare`,
    "origins". A case is a row [model index, cluster, condition, source, verdict, tier, clean line]:
    enough to filter, count and list it. `details` (the #seam-outputs block, one JSON text a line):
    line i is case i's output pieces and label fields; "clean line" is the line of that model's output
    of the cluster under the case's control, clean for every built-in treatment (a JSON string; null
    when it has none), each stored once. With conditions that send more than one message or have
    another control (report/setups.py), the index has "setups" and a later turn's details "reply",
    the line of the model's own reply its conversation holds. A 20-model page holds about 40 MB of
    outputs: the browser parses the index and the few lines it shows, not all.
    """

    index: dict
    details: tuple[object, ...]


def payload(models: tuple[ModelCases, ...], benchmark: Benchmark,
            conditions: ConditionSet | None = None) -> Document:
    """The document the page's script reads (see `Document`): clusters with their messages under every
    condition of `conditions` (default: the built-ins), and every case, cluster by cluster in benchmark
    order, then by condition, then by model, so that a window of the case browser holds every model's
    take on the same few cases."""
    conditions = conditions or builtin()
    used = {c.label.cluster for m in models for c in m.cases}
    clusters = {c.cluster: _cluster_entry(c, conditions) for c in benchmark.clusters if c.cluster in used}
    order = {name: i for i, name in enumerate(clusters)}
    rank = {name: i for i, name in enumerate(conditions.names)}
    ordered = sorted(((order[case.label.cluster], rank[case.label.condition], index, case)
                      for index, mc in enumerate(models) for case in mc.cases), key=lambda item: item[:3])
    rows, details = [], []
    lines: dict[tuple[int, str, str], int] = {}  # (model index, cluster, condition) -> its output's line
    outputs: list[str] = []  # the controls' outputs (and replies), each once, after the cases' lines

    def line_of(index: int, cluster: str, condition: str, row: TraceRow | None, chars: int | None) -> int | None:
        if row is None or row.output is None:
            return lines.get((index, cluster, condition))
        if (index, cluster, condition) not in lines:
            lines[(index, cluster, condition)] = len(ordered) + len(outputs)
            outputs.append(row.output + omitted_note(chars) if chars is not None else row.output)
        return lines[(index, cluster, condition)]

    for _, _, index, case in ordered:
        label = case.label
        rows.append([index, label.cluster, label.condition, label.source, case.verdict, label.tier or "none",
                     line_of(index, label.cluster, case.condition.control, case.control, case.control_chars)])
        entry = {
            "extraction": label.extraction, "reason": label.reason, "evidence": label.evidence,
            "commentary": label.cut_commentary, "finish": case.treatment.finish_reason, "output": case.pieces(),
            "clean_finish": case.control.finish_reason if case.control else None,  # the control's, clean's or not
        }
        if unmarked := case.unmarked_cuts():  # rare: only then, to keep the page small
            entry["cuts_unmarked"] = unmarked
        if case.condition.needs_replies:  # the assistant's turn of its conversation: the model's own reply
            entry["reply"] = line_of(index, label.cluster, case.condition.opening, case.reply, case.reply_chars)
        details.append(entry)
    index = {"models": [m.model for m in models], "conditions": list(conditions.names), "clusters": clusters,
             "cases": rows}
    if described := setups(conditions):  # only where a condition sends more than a message: other pages unchanged
        index["setups"] = described
    return Document(index, (*details, *outputs))


def script_json(document: object) -> str:
    """JSON that can stand inside a <script> element: no "<", ">" or "&" as such, so no text can end it.

    ASCII only (every other character as a \\u escape): a browser then holds the block's text, tens of
    megabytes on a page of many models, as one byte a character, and parses it markedly faster.
    """
    text = json.dumps(document, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def script_lines(values: tuple[object, ...]) -> str:
    """Each value as `script_json` on a line of its own (JSON never holds a raw line break), each line ended."""
    return "".join(script_json(value) + "\n" for value in values)


def _cluster_entry(cluster: Cluster, conditions: ConditionSet) -> dict:
    messages = {}
    for condition in conditions.conditions:
        trailing = condition.trailing(cluster)
        pieces = message_pieces(condition.message(cluster), trailing.text if trailing else None)
        messages[condition.name] = _artifact_referenced(pieces, cluster.artifact)
    return {"source": cluster.source, "genre": cluster.genre, "artifact": cluster.artifact,
            "comment": cluster.comment.text, "native": cluster.native.text, "messages": messages}


def _artifact_referenced(pieces: tuple[Piece, ...], artifact: str) -> list[list]:
    """The pieces with the first copy of the artifact replaced by ["artifact", null] (the page puts it back)."""
    out: list[list] = []
    done = False
    for mark, text in pieces:
        at = text.find(artifact) if not done and mark == "" and artifact else -1
        if at < 0:
            out.append([mark, text])
            continue
        out += [[mark, text[:at]], ["artifact", None], [mark, text[at + len(artifact):]]]
        done = True
    return [p for p in out if p[1] != ""]
