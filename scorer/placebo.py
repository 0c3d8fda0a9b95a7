"""Placebo check: score every treatment output against a comment it was never shown.

If the tiers find "absorption" of a remark that was not in the message, they
are matching something other than absorption (common words, boilerplate the
model adds anyway), and the real rates are inflated by about that much. So
each usable treatment output is checked for the comment of another cluster, of
the same genre and condition, with each tier run on its own (not as a
cascade), and the positive rate of each tier is reported. It should be zero.

The donor is fixed: clusters of one genre in sorted order, and each takes the
comment of the next one (wrapping around) whose comment id differs from its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmark.render import TREATMENTS
from scorer import tiers
from scorer.entailment import Entailer
from scorer.inputs import Request, TraceSet
from scorer.score import Comment, pair_up

ANY = "any"


@dataclass(frozen=True)
class TierRate:
    """Placebo positives of one tier: `positives` of `rows` checked; `not_run` rows it applied to but could not run."""

    tier: str
    positives: int
    rows: int
    not_run: int

    @property
    def rate(self) -> float | None:
        return self.positives / self.rows if self.rows else None


@dataclass(frozen=True)
class PlaceboResult:
    model: str
    rates: tuple[TierRate, ...]  # witness, content, entailment, then any tier
    rows: list[dict]  # one per usable treatment row with a donor


def donors(requests: dict[str, Request]) -> dict[str, Request]:
    """Treatment request id -> the donor request whose comment it is checked against."""
    result = {}
    for condition in TREATMENTS:
        by_genre: dict[str, list[Request]] = {}
        for request in requests.values():
            if request.condition == condition:
                by_genre.setdefault(request.genre, []).append(request)
        for group in by_genre.values():
            group.sort(key=lambda r: r.cluster)
            for i, request in enumerate(group):
                for step in range(1, len(group)):
                    donor = group[(i + step) % len(group)]
                    if donor.comment_id != request.comment_id:
                        result[request.id] = donor
                        break
    return result


def placebo(traces: TraceSet, requests: dict[str, Request], entailer: Entailer | None = None) -> PlaceboResult:
    """Per-tier placebo positive rates of one model's traces."""
    given = donors(requests)
    checked = []
    for pair in pair_up(traces, requests):
        if pair.usable and pair.request.id in given:
            checked.append((pair, given[pair.request.id]))
    rows, waiting = [], {}
    for index, (pair, donor) in enumerate(checked):
        comment = Comment.of(donor)
        genre = pair.request.genre
        found = {
            "witness": tiers.witness(pair.edited.text, pair.clean.text, comment.witness, genre),
            "content": tiers.content(pair.edited.text, pair.clean.text, comment.text, genre),
        }
        if "entailment" in tiers.tiers_for(genre) and entailer is not None:
            waiting[index] = [(p, comment.proposition)
                              for p in tiers.premises(pair.edited.text, pair.clean.text, genre)]
        rows.append({"id": pair.request.id, "model": traces.model, "cluster": pair.request.cluster,
                     "condition": pair.request.condition, "genre": genre,
                     "donor_cluster": donor.cluster, "donor_comment_id": donor.comment_id,
                     **{tier: found[tier] is not None for tier in found},
                     "entailment": None, "evidence": {t: m.evidence for t, m in found.items() if m}})
    if waiting:
        verdicts = entailer.entails(sorted({p for ps in waiting.values() for p in ps}))
        for index, pairs in waiting.items():
            entailed = [premise for premise, hypothesis in pairs if verdicts[(premise, hypothesis)]]
            rows[index]["entailment"] = bool(entailed)
            if entailed:
                rows[index]["evidence"]["entailment"] = entailed[0]
    return PlaceboResult(traces.model, _rates(rows, entailer is not None), rows)


def _rates(rows: list[dict], entailment_ran: bool) -> tuple[TierRate, ...]:
    rates = []
    for tier in tiers.TIERS:
        applies = [r for r in rows if tier in tiers.tiers_for(r["genre"])]
        ran = [r for r in applies if r[tier] is not None]
        rates.append(TierRate(tier, sum(bool(r[tier]) for r in ran), len(ran), len(applies) - len(ran)))
    positives = sum(any(r[t] for t in tiers.TIERS) for r in rows)
    not_run = 0 if entailment_ran else sum("entailment" in tiers.tiers_for(r["genre"]) for r in rows)
    rates.append(TierRate(ANY, positives, len(rows), not_run))
    return tuple(rates)
