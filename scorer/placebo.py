"""Placebo check: score every treatment output against a comment it was never shown.

If the tiers find "absorption" of a remark that was not in the message, they
are matching something other than absorption (common words, boilerplate the
model adds anyway), and the real rates are inflated by about that much. So
each usable treatment output is checked for the comment of another cluster, of
the same genre and condition, with each tier run on its own (not as a
cascade), and the positive rate of each tier is reported. It should be zero.
The tiers read the edited text exactly as scoring would with that comment:
less the commentary about editing it (scorer/commentary.py).

The donor is fixed: clusters of one genre in sorted order, and each takes the
comment of the next one (wrapping around) whose comment id differs from its own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from benchmark.conditions import ConditionSet
from scorer import tiers
from scorer.entailment import Entailer, first_entailed
from scorer.inputs import Item, TraceSet
from scorer.score import pair_up

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
class PlaceboRow:
    """One usable treatment output checked against a donor's comment (docs/FORMATS.md, "Placebo rows")."""

    id: str
    model: str
    cluster: str
    condition: str
    genre: str
    donor_cluster: str
    donor_comment_id: str
    # one field per tier of scorer.tiers.CASCADE (tests/test_scorer_placebo.py checks they are the same)
    witness: bool
    content: bool
    entailment: bool | None  # None when the tier did not run (code, or no model)
    evidence: dict[str, str]  # tier -> the text that made it fire

    def to_row(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class PlaceboResult:
    model: str
    rates: tuple[TierRate, ...]  # witness, content, entailment, then any tier
    rows: list[PlaceboRow]  # one per usable treatment row with a donor


def donors(items: dict[str, Item]) -> dict[str, Item]:
    """Treatment request id -> the donor item whose comment it is checked against."""
    result = {}
    for condition in dict.fromkeys(item.condition for item in items.values() if item.comment is not None):
        by_genre: dict[str, list[Item]] = {}
        for item in items.values():
            if item.condition == condition:
                by_genre.setdefault(item.genre, []).append(item)
        for group in by_genre.values():
            group.sort(key=lambda r: r.cluster)
            for i, item in enumerate(group):
                for step in range(1, len(group)):
                    donor = group[(i + step) % len(group)]
                    if donor.comment_id != item.comment_id:
                        result[item.id] = donor
                        break
    return result


def placebo(traces: TraceSet, items: dict[str, Item], entailer: Entailer | None = None,
            conditions: ConditionSet | None = None) -> PlaceboResult:
    """Per-tier placebo positive rates of one model's traces."""
    given = donors(items)
    checked = [(pair, given[pair.item.id]) for pair in pair_up(traces, items, conditions)
               if pair.usable and pair.item.id in given]
    found, waiting = [], {}
    for index, (pair, donor) in enumerate(checked):
        comment, genre = donor.comment, pair.item.genre
        edited = pair.kept(comment).text
        found.append(tiers.each_lexical(edited, pair.control.text, comment, genre))
        if tiers.MODEL_TIER in tiers.tiers_for(genre) and entailer is not None:
            waiting[index] = [(p, comment.proposition) for p in tiers.premises(edited, pair.control.text, genre)]
    entailed = first_entailed(entailer, waiting) if waiting else {}
    rows = []
    for index, ((pair, donor), matches) in enumerate(zip(checked, found, strict=True)):
        evidence = {tier: match.evidence for tier, match in matches.items() if match}
        flags = {tier: match is not None for tier, match in matches.items()}
        flags[tiers.MODEL_TIER] = None
        if index in waiting:
            flags[tiers.MODEL_TIER] = entailed[index] is not None
            if entailed[index] is not None:
                evidence[tiers.MODEL_TIER] = entailed[index]
        item = pair.item
        rows.append(PlaceboRow(item.id, traces.model, item.cluster, item.condition, item.genre, donor.cluster,
                               donor.comment_id, evidence=evidence, **flags))
    return PlaceboResult(traces.model, _rates(rows, entailer is not None), rows)


def _rates(rows: list[PlaceboRow], entailment_ran: bool) -> tuple[TierRate, ...]:
    rates = []
    for tier in tiers.TIERS:
        applies = [r for r in rows if tier in tiers.tiers_for(r.genre)]
        ran = [r for r in applies if getattr(r, tier) is not None]
        rates.append(TierRate(tier, sum(bool(getattr(r, tier)) for r in ran), len(ran), len(applies) - len(ran)))
    positives = sum(any(getattr(r, t) for t in tiers.TIERS) for r in rows)
    not_run = 0 if entailment_ran else sum(tiers.MODEL_TIER in tiers.tiers_for(r.genre) for r in rows)
    rates.append(TierRate(ANY, positives, len(rows), not_run))
    return tuple(rates)
