"""Absorption cluster by cluster: how many models absorbed each cluster's comment under each condition
(clusters.csv), and the clusters at either end of that count (cluster_extremes.csv).

The rates and contrasts pool the clusters; these two tables take the pooling apart, so a reader can see
which clusters, sources and comments a result rests on, and whether a few of them carry it.
"""

from __future__ import annotations

from dataclasses import dataclass

from stats.labels import LabelSet
from stats.rates import NAN
from stats.render import Column, Table
from stats.settings import TableSettings
from stats.specs import CLUSTER_EXTREMES, CLUSTERS


def _example() -> LabelSet:
    """The labels of the examples below: those of the report's examples (`stats.synthetic.example_labels`)."""
    from stats.synthetic import example_labels

    return example_labels()


@dataclass(frozen=True)
class ClusterCounts:
    """How many models absorbed one cluster's comment, per condition."""

    cluster: str
    source: str
    genre: str
    comment: str | None
    per_condition: tuple[tuple[int, int], ...]  # (models absorbed, models usable) per condition

    @property
    def absorbed(self) -> int:
        return sum(a for a, _ in self.per_condition)

    @property
    def usable(self) -> int:
        return sum(u for _, u in self.per_condition)

    @property
    def share(self) -> float:
        return self.absorbed / self.usable if self.usable else NAN


def cluster_counts(labels: LabelSet) -> list[ClusterCounts]:
    """Per cluster (by name) and condition: models that absorbed, models with a usable pair.

    >>> counts = cluster_counts(_example())
    >>> [(c.cluster, c.per_condition, c.share) for c in counts[:2]]
    [('austen-000', ((0, 1), (0, 0)), 0.0), ('humaneval-000', ((2, 2), (1, 1)), 1.0)]
    """
    tallies: dict[str, dict[str, list[int]]] = {c: {} for c in labels.clusters}
    for (_, condition), outcomes in labels.outcomes.items():
        for cluster, x in outcomes.items():
            if x is not None:
                tally = tallies[cluster].setdefault(condition, [0, 0])
                tally[0] += x
                tally[1] += 1
    return [ClusterCounts(cluster, info.source, info.genre, info.casual_comment,
                          tuple(tuple(tallies[cluster].get(c, (0, 0))) for c in labels.conditions))
            for cluster, info in labels.clusters.items()]


def clusters_table(labels: LabelSet, counts: list[ClusterCounts], notes: list[str]) -> Table:
    """One row per cluster: the counts of `cluster_counts`, flattened; displayed as "absorbed/usable".

    >>> labels = _example()
    >>> table = clusters_table(labels, cluster_counts(labels), [])
    >>> table.rows[1]
    ('humaneval-000', 'humaneval', 'code', 'casual-00', 2, 2, 1, 1, 3, 3, 1.0)
    >>> table.display.rows[1]
    ('humaneval-000', 'humaneval', '2/2', '1/1', 1.0)
    """
    rows, shown = [], []
    for item in counts:
        flat = [value for pair in item.per_condition for value in pair]
        rows.append((item.cluster, item.source, item.genre, item.comment, *flat, item.absorbed, item.usable,
                     item.share))
        shown.append((item.cluster, item.source,
                      *(f"{a}/{u}" if u else "\u2014" for a, u in item.per_condition), item.share))
    display = Table("clusters", "", (Column("cluster", "Cluster"), Column("source", "Source"),
                                     *(Column(c, c, align="r") for c in labels.conditions),
                                     Column("share", "Share (%)", "proportion")), tuple(shown))
    method = ("Per cluster and condition: models that absorbed the comment / models with a usable pair; "
              "share: absorbed over usable across all conditions, in percent.")
    return CLUSTERS.table("Absorption per cluster", rows, (method, *notes), display,
                          columns=CLUSTERS.columns_for(labels.conditions))


def extremes_table(counts: list[ClusterCounts], settings: TableSettings, notes: list[str]) -> Table:
    """The `settings.top` clusters most and least often absorbed.

    >>> for row in extremes_table(cluster_counts(_example()), TableSettings(top=1), []).rows:
    ...     print(row)
    ('most', 1, 'humaneval-000', 'humaneval', 'casual-00', 3, 3, 1.0)
    ('least', 1, 'austen-000', 'austen', 'casual-00', 0, 1, 0.0)
    """
    scored = [c for c in counts if c.usable]
    most = sorted(scored, key=lambda c: (-c.share, -c.usable, c.cluster))[: settings.top]
    least = sorted(scored, key=lambda c: (c.share, -c.usable, c.cluster))[: settings.top]
    rows = [(end, rank, c.cluster, c.source, c.comment, c.absorbed, c.usable, c.share)
            for end, chosen in (("most", most), ("least", least))
            for rank, c in enumerate(chosen, start=1)]
    method = (f"The {settings.top} clusters most and least often absorbed, over all models and conditions "
              "(share in percent; ties broken by more usable pairs, then by name).")
    return CLUSTER_EXTREMES.table("Clusters most and least often absorbed", rows, (method, *notes))
