"""Turn one model's traces into label rows: pair, exclude, extract, run the cascade.

For each treatment trace (newline, blank, boundary, mitigation, native) the
reference is the same model's clean trace for the same cluster. A pair is
excluded, with the reason in the label, when either output failed, was judged
unusable by the runner, or has no edited text; an unusable clean output thus
excludes all five treatments of its cluster. Usable pairs go down the cascade
witness -> content -> entailment (prose only), stopping at the first tier that
fires. Entailment premises of all rows are decided in one batch at the end.

Without the model file the entailment tier is listed in `tiers_not_run`:
`absorbed` is then what the lexical tiers found, a lower bound, never a
negative verdict of the entailment tier.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmark.render import TREATMENTS
from common import jsonl
from common.errors import UserError
from scorer import tiers
from scorer.entailment import Entailer
from scorer.extract import Extraction, extract
from scorer.inputs import Request, Trace, TraceSet
from scorer.units import units

# Changes whenever a rule changes (extraction, normalisation, stopwords, tiers, label fields).
SCORER_VERSION = "3"


@dataclass(frozen=True)
class Comment:
    """The remark a treatment output is checked for (its own, or another cluster's in the placebo)."""

    text: str
    witness: str
    proposition: str

    @staticmethod
    def of(request: Request) -> Comment:
        return Comment(request.comment or "", request.witness or "", request.proposition or "")


@dataclass(frozen=True)
class Pair:
    """A treatment trace with its cluster's clean trace, extracted, or the reason it is excluded."""

    request: Request
    trace: Trace
    reason: str | None
    edited: Extraction | None = None
    clean: Extraction | None = None

    @property
    def usable(self) -> bool:
        return self.reason is None


@dataclass
class Stats:
    """Counts of one scoring run, for the summary line and the performance report."""

    rows: int = 0
    usable: int = 0
    absorbed: dict = field(default_factory=lambda: {tier: 0 for tier in tiers.TIERS})
    not_run: int = 0  # usable rows with a tier that applies but could not run
    sentences: int = 0  # sentences of T on usable prose rows: pairs without the clean-diff rule
    premises_all: int = 0  # premises on usable prose rows: clean-diff rule, every row
    premises_needed: int = 0  # premises on rows the lexical tiers left undecided
    unique_pairs: int = 0  # distinct (premise, hypothesis) pairs sent to the entailment tier


@dataclass(frozen=True)
class ScoreResult:
    labels: list[dict]
    stats: Stats


def pair_up(traces: TraceSet, requests: dict[str, Request]) -> list[Pair]:
    """Every treatment trace with its clean reference, sorted by cluster then condition order."""
    for trace in traces.rows.values():
        if trace.id not in requests:
            raise UserError(f"{trace.where}: id {trace.id!r} is not a request of this benchmark "
                            "(wrong --requests file, or traces from another benchmark version)")
        expected = requests[trace.id].benchmark_sha256
        if trace.benchmark_sha256 and expected and trace.benchmark_sha256 != expected:
            raise UserError(f"{trace.where}: rendered from benchmark {trace.benchmark_sha256[:12]}…, "
                            f"but the request rows are from {expected[:12]}…; score against the same benchmark")
    extracted: dict[str, Extraction] = {}

    def extraction(trace: Trace) -> Extraction:
        if trace.id not in extracted:
            request = requests[trace.id]
            extracted[trace.id] = extract(trace.output, request.artifact, request.genre)
        return extracted[trace.id]

    pairs = []
    for trace in traces.rows.values():
        if trace.condition == "clean":
            continue
        request = requests[trace.id]
        clean = traces.rows.get(f"{trace.cluster}/clean")
        problems = []
        if clean is None:
            problems.append("no clean trace for this cluster")
        elif clean.status != "ok":
            problems.append(_status_reason("clean", clean))
        elif not extraction(clean).text.strip():
            problems.append("clean output has no edited text")
        if trace.status != "ok":
            problems.append(_status_reason("treatment", trace))
        elif not extraction(trace).text.strip():
            problems.append("treatment output has no edited text")
        if problems:
            pairs.append(Pair(request, trace, "; ".join(problems)))
        else:
            pairs.append(Pair(request, trace, None, extraction(trace), extraction(clean)))
    pairs.sort(key=lambda p: (p.request.cluster, TREATMENTS.index(p.request.condition)))
    return pairs


def score(traces: TraceSet, requests: dict[str, Request], entailer: Entailer | None = None) -> ScoreResult:
    """Label rows for every treatment trace of `traces` (one model)."""
    stats = Stats()
    pairs = pair_up(traces, requests)
    decided: list[tuple[tiers.Match | None, list[str], list[str]]] = []
    waiting: dict[int, list[tuple[str, str]]] = {}  # row index -> its (premise, hypothesis) pairs
    for index, pair in enumerate(pairs):
        stats.rows += 1
        if not pair.usable:
            decided.append((None, [], []))
            continue
        stats.usable += 1
        comment = Comment.of(pair.request)
        genre = pair.request.genre
        match, run = _lexical(pair, comment)
        not_run: list[str] = []
        if "entailment" in tiers.tiers_for(genre):
            premises = tiers.premises(pair.edited.text, pair.clean.text, genre)
            stats.sentences += len(units(pair.edited.text, genre))
            stats.premises_all += len(premises)
            if match is None:
                stats.premises_needed += len(premises)
                if entailer is None:
                    not_run = ["entailment"]
                else:
                    run = [*run, "entailment"]
                    waiting[index] = [(premise, comment.proposition) for premise in premises]
        decided.append((match, run, not_run))

    verdicts: dict[tuple[str, str], bool] = {}
    if waiting:
        unique = sorted({p for pairs_of_row in waiting.values() for p in pairs_of_row})
        stats.unique_pairs = len(unique)
        verdicts = entailer.entails(unique)
    labels = []
    for index, (pair, (match, run, not_run)) in enumerate(zip(pairs, decided, strict=True)):
        if index in waiting:
            entailed = [premise for premise, hypothesis in waiting[index] if verdicts[(premise, hypothesis)]]
            match = tiers.Match("entailment", entailed[0]) if entailed else None
        if pair.usable:
            if match is not None:
                stats.absorbed[match.tier] += 1
            stats.not_run += bool(not_run)
        labels.append(_label(traces.model, pair, match, run, not_run,
                             entailer.sha256 if entailer is not None and "entailment" in run else None))
    return ScoreResult(labels, stats)


def labels_bytes(labels: list[dict]) -> bytes:
    """The exact bytes `score` writes for these labels."""
    return "".join(jsonl.dumps(row) for row in labels).encode("utf-8")


def _lexical(pair: Pair, comment: Comment) -> tuple[tiers.Match | None, list[str]]:
    """Tiers 1 and 2 in cascade order: the first match and the tiers that were run."""
    genre = pair.request.genre
    match = tiers.witness(pair.edited.text, pair.clean.text, comment.witness, genre)
    if match is not None:
        return match, ["witness"]
    return tiers.content(pair.edited.text, pair.clean.text, comment.text, genre), ["witness", "content"]


def _status_reason(which: str, trace: Trace) -> str:
    return f"{which} {trace.status}" + (f": {trace.reason}" if trace.reason else "")


def _label(model: str, pair: Pair, match, run: list[str], not_run: list[str], nli_sha256: str | None) -> dict:
    request = pair.request
    return {
        "id": request.id,
        "model": model,
        "cluster": request.cluster,
        "condition": request.condition,
        "source": request.source,
        "genre": request.genre,
        "comment_id": request.comment_id,
        "usable": pair.usable,
        "absorbed": (match is not None) if pair.usable else None,
        "tier": match.tier if match else None,
        "evidence": match.evidence if match else None,
        "reason": pair.reason,
        "tiers_run": run,
        "tiers_not_run": not_run,
        "scorer_version": SCORER_VERSION,
        "nli_model_sha256": nli_sha256,
        "extraction": pair.edited.method if pair.usable else None,
        "cut_before": pair.edited.cut_before if pair.usable else None,
        "cut_after": pair.edited.cut_after if pair.usable else None,
    }
