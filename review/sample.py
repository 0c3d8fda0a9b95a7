"""Draw the review sample: a stratified random sample of usable treatment outputs, without the verdicts.

Strata: model x kit verdict x genre x condition. The kit's negatives are
sampled more heavily than its positives on purpose: precision needs only the
positives, but recall needs the misses, and misses hide among the negatives,
which are most of the outputs. So a fixed share of the cases (`positives_share`,
default 0.3) comes from the positive strata and the rest from the negative
ones; within each group, cases go to strata in proportion to their size, at
least one to every non-empty stratum when the group has enough cases. The
report weights each stratum by population / drawn, so the unequal rates cost
nothing in bias.

Everything is decided by exact arithmetic and SHA-256 (never by a platform's
random generator): the same labels, traces and seed give the same file on any
machine and any Python version.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from fractions import Fraction

from common.errors import UserError
from common.records import CONDITIONS, GENRES, Label, shown
from review.records import CREATED_BY, KIT_VERDICTS, REVIEW_VERSION, Case, FileRef, Header, Stratum, kit_verdict

DEFAULT_POSITIVES_SHARE = 0.3
DESIGN = (
    "Stratified random sample of usable treatment outputs (labels with usable=true). Strata: model x kit verdict "
    "x genre x condition. round(n x positives_share) cases come from the kit's positive strata (absorbed), the rest "
    "from its negative strata (not absorbed), each group capped by its population. Within a group, cases are "
    "allocated in proportion to stratum population (largest remainders, exact fractions), at least one per "
    "non-empty stratum when the group has that many cases (else one each to its largest strata), never more than "
    "a stratum holds. Within a stratum, the cases drawn are the outputs with the smallest "
    "SHA-256('seam-review:<seed>:<model>:<id>'), a seeded simple random sample without replacement. Cases are "
    "numbered by SHA-256('seam-review-order:<seed>:<model>:<id>'), which interleaves the strata. Kit verdicts are "
    "not stored per case: the report joins them from the labels files, whose SHA-256 is recorded here."
)


@dataclass(frozen=True)
class Unit:
    """One usable treatment output: a member of the population the sample is drawn from."""

    model: str
    id: str
    cluster: str
    condition: str
    genre: str
    source: str
    verdict: str

    @property
    def stratum(self) -> tuple[str, str, str, str]:
        return (self.model, self.verdict, self.genre, self.condition)

    @classmethod
    def of(cls, label: Label) -> Unit:
        return cls(label.model, label.id, label.cluster, label.condition, label.genre, label.source,
                   kit_verdict(bool(label.absorbed)))


def stratum_order(key: tuple[str, str, str, str]) -> tuple:
    """Strata sort by model, verdict (absorbed first), genre, then the benchmark's condition order.

    >>> sorted([("m", "not_absorbed", "code", "newline"), ("m", "absorbed", "prose", "blank"),
    ...         ("m", "absorbed", "prose", "newline")], key=stratum_order)[0]
    ('m', 'absorbed', 'prose', 'newline')
    """
    model, verdict, genre, condition = key
    return (model, KIT_VERDICTS.index(verdict), GENRES.index(genre), CONDITIONS.index(condition))


def population(labels: dict[tuple[str, str], Label]) -> dict[tuple[str, str, str, str], list[Unit]]:
    """The usable treatment outputs by stratum, strata in `stratum_order`, units by id within each.

    >>> from stats.synthetic import label_row
    >>> rows = [label_row("m", "humaneval-000", "newline", True), label_row("m", "humaneval-001", "newline", False),
    ...         label_row("m", "humaneval-002", "newline", None, usable=False)]
    >>> labels = {(r["model"], r["id"]): Label.from_row(r, "x") for r in rows}
    >>> for key, units in population(labels).items():
    ...     print(key, [unit.id for unit in units])
    ('m', 'absorbed', 'code', 'newline') ['humaneval-000/newline']
    ('m', 'not_absorbed', 'code', 'newline') ['humaneval-001/newline']
    """
    strata: dict[tuple[str, str, str, str], list[Unit]] = {}
    for label in labels.values():
        if label.usable:
            unit = Unit.of(label)
            strata.setdefault(unit.stratum, []).append(unit)
    return {key: sorted(strata[key], key=lambda unit: unit.id) for key in sorted(strata, key=stratum_order)}


def allocate(sizes: list[int], n: int) -> list[int]:
    """Split `n` cases over strata of the given sizes: in proportion, at least 1 per non-empty stratum
    when n allows it, never more than a stratum holds (largest remainders on exact fractions).

    >>> allocate([60, 30, 10], 10)
    [6, 3, 1]
    >>> allocate([97, 2, 1], 10)  # the small strata get one each, taken from the largest
    [8, 1, 1]
    >>> allocate([5, 0, 3], 100)  # a census when n covers everything
    [5, 0, 3]
    >>> allocate([5, 9, 3], 2)  # fewer cases than strata: one each to the largest
    [1, 1, 0]
    """
    total = sum(sizes)
    if n >= total:
        return list(sizes)
    present = [i for i, size in enumerate(sizes) if size > 0]
    if n < len(present):
        largest = sorted(present, key=lambda i: (-sizes[i], i))[:n]
        return [1 if i in largest else 0 for i in range(len(sizes))]
    quota = [Fraction(n * size, total) for size in sizes]
    drawn = [min(size, max(1, math.floor(q))) if size else 0 for size, q in zip(sizes, quota, strict=True)]
    while sum(drawn) < n:
        room = [i for i in present if drawn[i] < sizes[i]]
        drawn[max(room, key=lambda i: (quota[i] - drawn[i], -i))] += 1
    while sum(drawn) > n:
        spare = [i for i in present if drawn[i] > 1]
        drawn[min(spare, key=lambda i: (quota[i] - drawn[i], -i))] -= 1
    return drawn


def split(n: int, positives_share: float, positives: int, negatives: int) -> tuple[int, int]:
    """How many cases come from the kit's positives and how many from its negatives.

    >>> split(150, 0.3, 224, 656)
    (45, 105)
    >>> split(150, 0.3, 20, 656)  # too few positives: the rest from the negatives
    (20, 130)
    >>> split(1000, 0.3, 224, 656)  # more than exist: everything
    (224, 656)
    """
    n = min(n, positives + negatives)
    take_positives = min(math.floor(n * positives_share + 0.5), positives)
    take_negatives = min(n - take_positives, negatives)
    return min(positives, n - take_negatives), take_negatives


def _key(seed: int, purpose: str, unit: Unit) -> bytes:
    return hashlib.sha256(f"{purpose}:{seed}:{unit.model}:{unit.id}".encode()).digest()


def draw(units: list[Unit], k: int, seed: int) -> list[Unit]:
    """`k` of the units: those with the smallest seeded SHA-256 key, a simple random sample without
    replacement (and a larger k keeps every unit a smaller k drew).

    >>> units = [Unit("m", f"humaneval-{i:03d}/newline", f"humaneval-{i:03d}", "newline", "code", "humaneval",
    ...               "absorbed") for i in range(10)]
    >>> [unit.cluster for unit in draw(units, 3, seed=0)] == [unit.cluster for unit in draw(units, 4, seed=0)][:3]
    True
    """
    return sorted(units, key=lambda unit: _key(seed, "seam-review", unit))[:k]


@dataclass(frozen=True)
class Sample:
    header: Header
    cases: tuple[Case, ...]

    def rows(self) -> list[dict]:
        return [self.header.to_row(), *(case.to_row() for case in self.cases)]


def draw_sample(labels: dict[tuple[str, str], Label], *, n: int, seed: int,
                positives_share: float = DEFAULT_POSITIVES_SHARE, label_refs: tuple[FileRef, ...] = (),
                trace_refs: tuple[FileRef, ...] = (), requests: FileRef | None = None,
                benchmark_sha256: str = "") -> Sample:
    """The header and the cases of a review file (see the module docstring for the design).

    >>> from stats.synthetic import synthetic_labels
    >>> rows = synthetic_labels(models=1, clusters=30, comments=4)
    >>> labels = {(r["model"], r["id"]): Label.from_row(r, "x") for r in rows}
    >>> sample = draw_sample(labels, n=20, seed=7)
    >>> len(sample.cases), sum(s.drawn for s in sample.header.strata if s.verdict == "absorbed")
    (20, 6)
    >>> "verdict" in sample.cases[0].to_row()
    False
    """
    strata = population(labels)
    if not strata:
        raise UserError("the labels have no usable treatment rows to review")
    groups = {verdict: [key for key in strata if key[1] == verdict] for verdict in KIT_VERDICTS}
    sizes = {key: len(units) for key, units in strata.items()}
    wanted = split(n, positives_share, *(sum(sizes[key] for key in groups[verdict]) for verdict in KIT_VERDICTS))
    counts: dict[tuple, int] = {}
    for verdict, group_n in zip(KIT_VERDICTS, wanted, strict=True):
        keys = groups[verdict]
        counts.update(zip(keys, allocate([sizes[key] for key in keys], group_n), strict=True))
    chosen = [unit for key, units in strata.items() for unit in draw(units, counts[key], seed)]
    chosen.sort(key=lambda unit: _key(seed, "seam-review-order", unit))
    cases = tuple(Case(kind="case", case=number, id=unit.id, model=unit.model, cluster=unit.cluster,
                       condition=unit.condition, genre=unit.genre, source=unit.source)
                  for number, unit in enumerate(chosen, start=1))
    header = Header(kind="header", review_version=REVIEW_VERSION, created_by=CREATED_BY, seed=seed, n=n,
                    positives_share=positives_share, design=DESIGN,
                    strata=tuple(Stratum(*key, population=sizes[key], drawn=counts[key]) for key in strata),
                    labels=label_refs, traces=trace_refs, requests=requests, benchmark_sha256=benchmark_sha256)
    return Sample(header, cases)


def check_outputs(sample: Sample, traces: dict[str, dict], asked: dict, benchmark_sha256: str) -> None:
    """Every case must have its treatment and clean outputs (status ok) and its request in the benchmark,
    rendered from the benchmark the page will show (else the page would show another text than the model saw)."""
    for case in sample.cases:
        rows = traces.get(case.model)
        if rows is None:
            raise UserError(f"no trace file for model {case.model!r} (give its trace file after the labels)")
        for rid in (case.id, f"{case.cluster}/clean"):
            row = rows.get(rid)
            if row is None or row.status != "ok":
                state = "missing" if row is None else f"status {row.status}"
                raise UserError(f"the traces of {case.model} have no usable output for {rid} ({state}), but the "
                                "labels call it usable: are these the traces the labels were made from?")
            if row.benchmark_sha256 not in (None, benchmark_sha256):
                raise UserError(f"{rid} of {case.model} was rendered from benchmark {shown(row.benchmark_sha256)}, "
                                f"not from {benchmark_sha256[:12]}…; give the matching --requests")
        if case.id not in asked:
            raise UserError(f"{case.id}: not in the benchmark (or the --requests file)")
