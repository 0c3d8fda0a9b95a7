"""Read the traces for the validity checks, as the kit's own records, and find the edited text of a reply.

Traces are read only with the kit's one trace reader (`common.traces.read_final`),
so its policy holds here too: the last row of an id is final, a torn last line
is refused with the command that repairs it, and every row is a `TraceRow`
already checked field by field (attempt times included) with its file:line,
and a file holds one model's rows (`common.traces.model_of`, as for the scorer).
Left to check here is only what ties traces to the benchmark they are compared
with: each row names one of its clusters and, when it carries a checksum,
the same benchmark; and a (model, id) is given once. The edited text inside a
reply is found with the scorer's own extraction (`scorer.extract.extract`), so
that the validity checks look at exactly the text the absorption labels looked at.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from benchmark.conditions import builtin_only
from benchmark.dataset import Benchmark
from common import jsonl
from common.errors import UserError
from common.records import CONDITIONS, MAX_OUTPUT_CHARS, Cluster, TraceRow, shown
from common.traces import model_of, read_final
from scorer.extract import extract

# The conditions the validity checks read: the built-in ones (their clean-contrasts and syntax checks are defined
# for those layouts); a trace or label of a condition file's is refused saying so (docs/CONDITIONS.md).
BUILTIN_ONLY = builtin_only("the validity checks read the built-in conditions' traces and labels only")

def trace_files(paths) -> list[Path]:
    """The trace files named, a directory standing for its `*.jsonl` files."""
    return jsonl.files_named(paths, "trace")


def format_time(moment: datetime | None) -> str | None:
    """Canonical UTC text with milliseconds, as the runner writes it."""
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def read_outputs(paths, benchmark: Benchmark) -> list[TraceRow]:
    """Final rows of every trace file, checked against `benchmark`, sorted by model, cluster, condition."""
    outputs: dict[tuple[str, str], TraceRow] = {}
    given_in: dict[tuple[str, str], Path] = {}
    for path in trace_files(paths):
        trace = read_final(path)
        model_of(trace)  # one model per file, as the scorer requires
        for rid, row in trace.final.items():
            where = trace.where[rid]
            BUILTIN_ONLY.get(row.condition, where)
            if row.cluster not in benchmark.by_name:
                raise UserError(f"{where}: cluster {shown(row.cluster)} is not in the benchmark "
                                "(traces from another benchmark version?)")
            if row.benchmark_sha256 and row.benchmark_sha256 != benchmark.sha256:
                raise UserError(f"{where}: rendered from benchmark {row.benchmark_sha256[:12]}…, but data/benchmark "
                                f"is {benchmark.sha256[:12]}…; check traces against the benchmark they were "
                                "made from")
            key = (row.model, row.id)
            if key in outputs:
                raise UserError(f"{where}: model {shown(row.model)} already has a final row for {shown(row.id)} "
                                f"in {given_in[key]}; give each model's trace once")
            outputs[key] = row
            given_in[key] = path
    order = {c: i for i, c in enumerate(CONDITIONS)}
    return sorted(outputs.values(), key=lambda o: (o.model, o.cluster, order[o.condition]))


def readable(output: str) -> bool:
    """Whether a reply is within the length the kit reads (`common.records.MAX_OUTPUT_CHARS`), as the scorer
    requires of the replies it labels: a longer one (only a hand-made trace holds one) is unusable here too."""
    return len(output) <= MAX_OUTPUT_CHARS


def edited_text(row: TraceRow, cluster: Cluster) -> str | None:
    """The edited text of a usable output (the scorer's extraction), or None when there is none.

    Usable means what it means for the absorption labels: the runner judged the
    reply ok, it is no longer than the kit reads (`readable`) and the extraction
    leaves some text.
    """
    if row.status != "ok" or row.output is None or not readable(row.output):
        return None
    text = extract(row.output, cluster.artifact, cluster.genre).text
    return text if text.strip() else None
