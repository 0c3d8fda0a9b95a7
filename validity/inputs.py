"""Read the traces for the validity checks, as the kit's own records, and find the edited text of a reply.

The conditions are the built-in ones and those of a condition file (`--conditions FILE`,
`benchmark.conditions.load`): a row of a condition neither defines is refused naming
the file to pass, as everywhere. A condition file's traces are a file of their own
(data/studies/NAME/traces/MODEL.jsonl) without clean rows; they are read beside the
model's built-in trace file, as two files of one model, so that each treatment finds
its control (clean there, a later turn's control beside it) among the same model's rows.

Traces are read only with the kit's one trace reader (`common.traces.read_final`),
so its policy holds here too: the last row of an id is final, a torn last line
is refused with the command that repairs it, and every row is a `TraceRow`
already checked field by field (attempt times included) with its file:line,
and a file holds one model's rows (`common.traces.model_of`, as for the scorer).
Left to check here is only what ties traces to the benchmark they are compared
with: each row names one of its clusters and, when it carries a checksum,
the same benchmark; a (model, id) is given once; and a row of a condition file's
condition, when it carries `message_sha256`, was sent as the file defines it now
(its markers decide what counts as an echo; a later turn's conversation is rebuilt
with the model's own reply from the trace files given, as the scorer checks it). The edited text
inside a reply is found with the scorer's own extraction (`scorer.extract.extract`,
with the markers of the row's condition), so that the validity checks look at
exactly the text the absorption labels looked at.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from benchmark.conditions import Condition, ConditionSet, builtin
from benchmark.dataset import Benchmark
from benchmark.replies import Replies
from common import jsonl
from common.errors import UserError
from common.records import MAX_OUTPUT_CHARS, Cluster, TraceRow, request_id, shown
from common.traces import model_of, read_final
from scorer.extract import extract
from scorer.markercut import BOUNDARY, Markers


def trace_files(paths) -> list[Path]:
    """The trace files named, a directory standing for its `*.jsonl` files."""
    return jsonl.files_named(paths, "trace")


def format_time(moment: datetime | None) -> str | None:
    """Canonical UTC text with milliseconds, as the runner writes it."""
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def markers_of(condition: Condition) -> Markers:
    """The marker lines a reply to `condition` is cut at, exactly as the scorer cuts it (`scorer.inputs.Item`):
    BEGIN TEXT and END TEXT always, and the condition's own open and close lines (code fences aside)."""
    return Markers.of(condition.open, condition.close)


def read_outputs(paths, benchmark: Benchmark, conditions: ConditionSet | None = None) -> list[TraceRow]:
    """Final rows of every trace file, checked against `benchmark` and `conditions` (default: the built-ins),
    sorted by model, cluster, condition (in the conditions' order)."""
    defined = conditions or builtin()
    outputs: dict[tuple[str, str], TraceRow] = {}
    given_in: dict[tuple[str, str], Path] = {}
    found_at: dict[tuple[str, str], str] = {}  # "file:line" of each final row
    later: dict[tuple[str, str], str] = {}  # the later turns' rows that say what they sent, and where they are
    for path in trace_files(paths):
        trace = read_final(path)
        model_of(trace)  # one model per file, as the scorer requires
        for rid, row in trace.final.items():
            where = trace.where[rid]
            condition = defined.get(row.condition, where)
            if row.cluster not in benchmark.by_name:
                raise UserError(f"{where}: cluster {shown(row.cluster)} is not in the benchmark "
                                "(traces from another benchmark version?)")
            if row.benchmark_sha256 and row.benchmark_sha256 != benchmark.sha256:
                raise UserError(f"{where}: rendered from benchmark {row.benchmark_sha256[:12]}…, but data/benchmark "
                                f"is {benchmark.sha256[:12]}…; check traces against the benchmark they were "
                                "made from")
            if not condition.builtin and not condition.later and row.message_sha256:
                # its markers decide what counts as an echo: the definition must be the one it was sent with
                sent = defined.conversation(condition.name, benchmark.by_name[row.cluster]).sha256
                if row.message_sha256 != sent:
                    raise UserError(f"{where}: the message sent (message_sha256 {row.message_sha256[:12]}…) is not "
                                    f"condition {shown(row.condition)}'s message as it is defined now "
                                    f"({sent[:12]}…); check with the condition file the traces were collected with")
            key = (row.model, row.id)
            if key in outputs:
                raise UserError(f"{where}: model {shown(row.model)} already has a final row for {shown(row.id)} "
                                f"in {given_in[key]}; give each model's trace once")
            outputs[key] = row
            given_in[key] = path
            found_at[key] = where
            if condition.later and row.message_sha256:
                later[key] = where
    _check_later_turns(outputs, later, benchmark, defined)
    _check_own_controls(outputs, given_in, found_at, defined)
    order = {c: i for i, c in enumerate(defined.names)}
    return sorted(outputs.values(), key=lambda o: (o.model, o.cluster, order[o.condition]))


def _check_later_turns(outputs: dict[tuple[str, str], TraceRow], later: dict[tuple[str, str], str],
                       benchmark: Benchmark, defined: ConditionSet) -> None:
    """Each later turn was sent as its condition builds it now, with the model's own reply from the trace files
    given (its clean output, in the built-in file), as the scorer checks it: a row built from another reply or
    another definition is refused, so that validity and the labels count the same outputs."""
    by_model: dict[str, Replies] = {}
    for (model, rid), where in later.items():
        row = outputs[(model, rid)]
        if model not in by_model:
            by_model[model] = Replies({i: r for (m, i), r in outputs.items() if m == model}, "the trace files given",
                                      model)
        replies = by_model[model]
        conversation = defined.conversation(row.condition, benchmark.by_name[row.cluster], replies)
        if conversation is None:
            opening = defined.get(row.condition).opening
            why = replies.missed[rid]
            fix = {"missing": f"give the model's trace file with its {opening} outputs too (for a released model, "
                              f"data/traces/{model}.jsonl)",
                   "unusable": f"it was collected from another trace of the {opening} requests: give that one",
                   "a reply to another message": f"it was collected from another trace of the {opening} requests, "
                                                 "or another definition: give that trace and condition file"}[why]
            raise UserError(f"{where}: a later turn holding the model's own reply to its {opening} request, which is "
                            f"{why} in the trace files given; {fix}")
        if conversation.sha256 != row.message_sha256:
            raise UserError(f"{where}: the conversation sent (message_sha256 {row.message_sha256[:12]}…) is not "
                            f"condition {shown(row.condition)}'s as it is defined now with the model's own reply in "
                            f"the trace files given ({conversation.sha256[:12]}…); check with the condition file and "
                            "the trace file of the replies the traces were collected with")


def _check_own_controls(outputs: dict[tuple[str, str], TraceRow], given_in: dict[tuple[str, str], Path],
                        found_at: dict[tuple[str, str], str], defined: ConditionSet) -> None:
    """A condition file's own control (later-control) is paired with its treatment only within one trace file, as
    the scorer pairs it (`scorer.inputs`: it is collected beside its treatments; only clean is borrowed from
    another file): a pair split across two files is refused, so that validity and the labels pair the same rows."""
    for (model, rid), row in outputs.items():
        control = defined.control_of(row.condition)
        if control is None or control == "clean":
            continue
        key = (model, request_id(row.cluster, control))
        if key in outputs and given_in[key] != given_in[(model, rid)]:
            raise UserError(f"{found_at[(model, rid)]}: the control of {shown(rid)}, {shown(control)}, is at "
                            f"{found_at[key]}, another file; the scorer pairs a condition file's own control only "
                            "within one trace file: keep a study's treatments and their control in one file")


def readable(output: str) -> bool:
    """Whether a reply is within the length the kit reads (`common.records.MAX_OUTPUT_CHARS`), as the scorer
    requires of the replies it labels: a longer one (only a hand-made trace holds one) is unusable here too."""
    return len(output) <= MAX_OUTPUT_CHARS


def edited_text(row: TraceRow, cluster: Cluster, markers: Markers = BOUNDARY) -> str | None:
    """The edited text of a usable output (the scorer's extraction, cut at `markers`, those of the row's
    condition: `markers_of`; default the boundary markers, every built-in condition's), or None when there is none.

    Usable means what it means for the absorption labels: the runner judged the
    reply ok, it is no longer than the kit reads (`readable`) and the extraction
    leaves some text.
    """
    if row.status != "ok" or row.output is None or not readable(row.output):
        return None
    text = extract(row.output, cluster.artifact, cluster.genre, markers).text
    return text if text.strip() else None
