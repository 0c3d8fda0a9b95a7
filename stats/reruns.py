"""The same request asked twice: where two conditions sent one model byte-identical messages on a cluster.

A condition file's layouts can coincide with another condition's on some clusters: the guard's markers are the
`boundary` message wherever it splits the paste exactly, and the paste-size rule's message is `boundary` or
`newline`. Such a pair is the same request asked twice, so its outputs tell how far the run itself reproduces:

* asked in one run (one trace file), greedy decoding on one server build and thread count gives the same bytes,
  so any difference there is a determinism failure;
* asked in two runs (the study's trace file and the model's built-in one), any difference is what the two runs'
  environments (machine, build, kernels) do to the same request, and so the noise floor under every contrast
  that pairs a condition of one run with a condition of the other.

Per model and pair of conditions the table counts the clusters where both sent the same message (the
`message_sha256` of the request, which covers a conversation's system prompt and turns), how many of those got
byte-identical outputs, and, on those usable under both, the paired absorption table with its exact McNemar
test: the absorption labels of one request asked twice should agree. Nothing is written when no two conditions
sent the same message (as in the release and the example study).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from common.records import TraceRow
from stats.contrasts import contrast_name
from stats.paired import PairedComparison, compare_paired
from stats.render import Column, Table, interval_text
from stats.settings import TableSettings
from stats.specs import RERUNS

ONE_RUN, TWO_RUNS = "one trace file", "two trace files"


@dataclass(frozen=True)
class Rerun:
    """Conditions `first` and `second` sent model `model` the same message on `same_messages` clusters."""

    model: str
    first: str
    second: str
    runs: str  # ONE_RUN or TWO_RUNS: whether the two rows of each such cluster came from one trace file
    same_messages: int
    identical_outputs: int  # of those, clusters whose two outputs are the same bytes (two failed requests: not)
    result: PairedComparison  # their absorption labels, on the clusters usable under both


def reruns(outputs: Mapping[tuple[str, str], TraceRow], files: Mapping[tuple[str, str], str],
           outcomes: Mapping[tuple[str, str], Mapping[str, bool | None]], order: Sequence[str],
           settings: TableSettings) -> list[Rerun]:
    """Every (model, first, second) whose conditions sent the same message on some cluster, `first` before
    `second` in `order` (the conditions' order), by model then that order; `files[(model, request id)]` is the
    trace file of each row of `outputs`. A pair whose rows came from one file on some clusters and from two on
    others is two rows of the result, one per case.

    >>> import dataclasses
    >>> from scorer.synthetic import trace_row
    >>> rows = [dataclasses.replace(trace_row("humaneval-000", name, "same", model="m"), message_sha256="s")
    ...         for name in ("boundary", "guarded")]
    >>> files = {("m", "humaneval-000/boundary"): "built-in.jsonl", ("m", "humaneval-000/guarded"): "study.jsonl"}
    >>> (found,) = reruns({("m", r.id): r for r in rows}, files, {}, ["boundary", "guarded"], TableSettings())
    >>> found.first, found.second, found.runs, found.same_messages, found.identical_outputs
    ('boundary', 'guarded', 'two trace files', 1, 1)
    """
    rank = {name: index for index, name in enumerate(order)}
    by_message: dict[tuple[str, str, str], list[str]] = defaultdict(list)  # (model, cluster, sha) -> request ids
    for (model, rid), row in outputs.items():
        if row.message_sha256 is not None and row.condition in rank:
            by_message[(model, row.cluster, row.message_sha256)].append(rid)
    pairs: dict[tuple[str, str, str, str], list[tuple[str, bool]]] = defaultdict(list)
    for (model, cluster, _), rids in by_message.items():
        rows = sorted((outputs[(model, rid)] for rid in rids), key=lambda r: rank[r.condition])
        for i, one in enumerate(rows):
            for other in rows[i + 1:]:
                runs = ONE_RUN if files[(model, one.id)] == files[(model, other.id)] else TWO_RUNS
                pairs[(model, one.condition, other.condition, runs)].append(
                    (cluster, one.output is not None and one.output == other.output))
    found = []
    for (model, first, second, runs), clusters in sorted(
            pairs.items(), key=lambda kv: (kv[0][0], rank[kv[0][1]], rank[kv[0][2]], kv[0][3])):
        kept = {cluster for cluster, _ in clusters}
        labels = [{k: v for k, v in outcomes.get((model, name), {}).items() if k in kept} for name in (first, second)]
        result = compare_paired(*labels, confidence_level=settings.confidence_level,
                                permutations=settings.permutations, seed=settings.seed)
        found.append(Rerun(model, first, second, runs, len(clusters), sum(same for _, same in clusters), result))
    return found


def reruns_table(found: list[Rerun], settings: TableSettings, notes: Sequence[str]) -> Table:
    """reruns.csv: one row per model, pair of conditions and one or two trace files (`reruns`).

    >>> from stats.paired import compare_paired
    >>> found = [Rerun("m", "boundary", "guarded", TWO_RUNS, 3, 2, compare_paired({"a": True}, {"a": False}))]
    >>> reruns_table(found, TableSettings(), []).rows[0][:8]
    ('m', 'boundary vs guarded', 'two trace files', 3, 2, 1, 1, 0)
    """
    raw, shown = [], []
    for r in found:
        table, ci = r.result.table, r.result.confidence_interval
        pvalue = r.result.mcnemar.pvalue if table.n else None
        raw.append((r.model, contrast_name(r.first, r.second), r.runs, r.same_messages, r.identical_outputs,
                    table.n, table.first_only, table.second_only, r.result.difference, ci.low, ci.high, pvalue))
        shown.append((contrast_name(r.first, r.second), r.model, r.runs, r.same_messages, r.identical_outputs,
                      table.n, table.first_only, table.second_only,
                      interval_text(r.result.difference, ci.low, ci.high), pvalue))
    display = Table(RERUNS.name, "", (
        Column("pair", "Same message under"), Column("model", "Model"), Column("runs", "Asked in"),
        Column("same", "Clusters", "int"), Column("identical", "Identical outputs", "int"),
        Column("n", "n", "int"), Column("b", "b", "int"), Column("c", "c", "int"),
        Column("diff", f"Diff (pp) [{settings.confidence_level:.0%} CI]", align="r"),
        Column("p", "p McNemar", "pvalue")), tuple(shown))
    method = ("The same request asked twice: clusters where the two conditions sent the model byte-identical "
              "messages (the requests' message_sha256), asked in one trace file or in two (the study's and the "
              "built-in one). Identical outputs: the two outputs are the same bytes. n: of those clusters, the "
              "ones usable under both; b: absorbed only under the first condition, c: only under the second; "
              f"Diff = (b - c)/n with a {settings.confidence_level:.0%} Newcombe interval; p McNemar: exact, "
              "not adjusted (a check of the runs, not a family of hypotheses). In one trace file greedy decoding "
              "gives the same bytes; in two, a difference is what the runs' environments did to the same request, "
              "the noise under any contrast of conditions asked in different runs (stats/reruns.py).")
    return RERUNS.table("The same request asked twice", raw, (method, *notes), display)
