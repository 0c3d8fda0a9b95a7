"""Pick 50 items per source and give each a casual and a genre-native comment.

Selection is a pure function of the candidates and `SEED`: each source's
candidates are shuffled by `random.Random(f"{SEED}:{source}")` and taken in
that order. Each item gets the least-used comment that does not collide with
it (ties broken by use within the source, then by a seeded order of the pool),
which spreads the 24 casual comments evenly, 12 or 13 clusters each, and 2 or
3 per source. An item with which every comment collides is skipped, and the
skip is counted in the manifest.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass, field

from benchmark.collisions import cluster_texts, collisions
from benchmark.comments import PoolComment
from benchmark.sources import SourceItem
from common.records import Cluster

SEED = "seam-v1"
PER_SOURCE = 50


@dataclass
class SourceReport:
    """What selection did with one source, for the manifest."""

    source: str
    candidates: int
    selected: int = 0
    skipped_collision: int = 0
    skipped_ids: list[str] = field(default_factory=list)


def _least_used(pool: list[PoolComment], order: dict[str, int], used: Counter, used_here: Counter,
                texts: list[str]) -> PoolComment | None:
    free = [c for c in pool if not collisions(c.text, c.witness, texts)]
    if not free:
        return None
    return min(free, key=lambda c: (used[c.id], used_here[c.id], order[c.id]))


def select(candidates_by_source: dict[str, list[SourceItem]], casual: list[PoolComment],
           native: dict[str, list[PoolComment]], per_source: int = PER_SOURCE
           ) -> tuple[list[dict], list[SourceReport]]:
    """Cluster rows (format in docs/FORMATS.md) and a report per source, sources in the given order."""
    used: Counter = Counter()
    rows, reports = [], []
    for source, candidates in candidates_by_source.items():
        rng = random.Random(f"{SEED}:{source}")
        shuffled = rng.sample(candidates, len(candidates))
        order = {c.id: i for i, c in enumerate(rng.sample(casual, len(casual)))}
        native_order = {c.id: i for pool in native.values() for i, c in enumerate(pool)}
        used_here: Counter = Counter()
        report = SourceReport(source, len(candidates))
        for item in shuffled:
            if report.selected == per_source:
                break
            texts = cluster_texts(item.instruction, item.artifact, item.reference)
            comment = _least_used(casual, order, used, used_here, texts)
            native_comment = _least_used(native[item.register], native_order, used, used_here, texts)
            if comment is None or native_comment is None:
                report.skipped_collision += 1
                report.skipped_ids.append(item.item_id)
                continue
            for chosen in (comment, native_comment):
                used[chosen.id] += 1
                used_here[chosen.id] += 1
            report.selected += 1
            rows.append(cluster_row(item, f"{source}-{report.selected:03d}", comment, native_comment))
        reports.append(report)
    return rows, reports


def cluster_row(item: SourceItem, cluster_id: str, comment: PoolComment, native_comment: PoolComment) -> dict:
    """The benchmark row of one selected item, written through `Cluster` so it matches the format."""
    return Cluster(
        cluster=cluster_id, source=item.source, genre=item.genre, register=item.register, item_id=item.item_id,
        license=item.license, partition=item.partition, provenance=asdict(item.provenance),
        extra_provenance=tuple(asdict(p) for p in item.extra_provenance), instruction=item.instruction,
        artifact=item.artifact, reference=item.reference, transformations=tuple(item.transformations),
        tests=item.tests, comment=comment.record(), native=native_comment.record()).to_row()
