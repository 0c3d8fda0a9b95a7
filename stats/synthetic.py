"""Synthetic label rows for tests, examples and the speed benchmark.

Real labels need model runs, so the statistics are exercised on labels drawn
from a simple model: each model has a base absorption propensity, each
condition a multiplier (boundary and mitigation lower it), and each cluster and
casual comment its own offset, so that paired contrasts, clustering by comment
and the source table all have something to find. Python's `random.Random`
makes the rows the same on every machine. Every row is a `common.records.Label`
written with `to_row()`, and the sources and their genres are the benchmark's
own (`benchmark.sources.SOURCES`), so the rows cannot drift from the real ones.

The docstring examples of the report's tables, in stats/tables.py and the modules
it calls, read one small label set counted by hand (`example_labels`), and those
of the sensitivity analyses (stats/alternatives.py, stats/sensitivity.py) another
(`example_sensitivity_labels`): each defined once, here, rather than in every
module whose examples read it.
"""

from __future__ import annotations

import random

from benchmark.sources import SOURCES
from common.records import TREATMENTS, Label, request_id
from scorer.tiers import LEXICAL_TIERS, TIERS, tiers_for
from stats.labels import LabelSet, label_set_of

CONDITION_EFFECT = {"newline": 1.0, "blank": 0.85, "boundary": 0.45, "mitigation": 0.25, "native": 0.7}


def label_row(model: str, cluster: str, condition: str, absorbed: bool | None, *, source: str = "humaneval",
              genre: str | None = None, comment_id: str | None = "casual-00", usable: bool = True,
              entailment_ran: bool = True) -> dict:
    """One label row as the scorer writes it (docs/FORMATS.md), for a usable or an excluded pair.

    `genre` defaults to the source's genre in the benchmark. A prose row lists the
    entailment tier under `tiers_run` when `entailment_ran`, else under `tiers_not_run`.

    >>> row = label_row("m", "austen-000", "newline", True, source="austen")
    >>> row["id"], row["genre"], row["tier"], row["tiers_run"], row["tiers_not_run"]
    ('austen-000/newline', 'prose', 'witness', ['witness', 'content', 'entailment'], [])
    >>> label_row("m", "austen-000", "blank", None, source="austen", usable=False)["reason"]
    'clean output unusable'
    """
    genre = SOURCES[source] if genre is None else genre
    if usable:
        tiers_run = tuple(tier for tier in tiers_for(genre) if entailment_ran or tier in LEXICAL_TIERS)
        tiers_not_run = tuple(tier for tier in tiers_for(genre) if tier not in tiers_run)
        label = Label(id=request_id(cluster, condition), model=model, cluster=cluster, condition=condition,
                      source=source, genre=genre, comment_id=comment_id, usable=True, absorbed=bool(absorbed),
                      tier=TIERS[0] if absorbed else None, evidence=None, reason=None, tiers_run=tiers_run,
                      tiers_not_run=tiers_not_run, scorer_version="synthetic", nli_model_sha256=None,
                      extraction="plain", cut_before="", cut_after="", cut_commentary="")
    else:
        label = Label.excluded(id=request_id(cluster, condition), model=model, cluster=cluster,
                               condition=condition, source=source, genre=genre, comment_id=comment_id,
                               reason="clean output unusable", scorer_version="synthetic", nli_model_sha256=None)
    return label.to_row()


def synthetic_labels(models: int = 3, clusters: int = 60, *, comments: int = 20, seed: int = 0,
                     conditions=TREATMENTS, entailment_ran: bool = True,
                     usable_rate: float = 0.97) -> list[dict]:
    """Label rows (docs/FORMATS.md) for `models` x `clusters` x `conditions`, the clusters taking the
    benchmark's sources in turn.

    >>> rows = synthetic_labels(models=2, clusters=12, comments=4)
    >>> len(rows), sorted({(row["source"], row["genre"]) for row in rows})[:3]
    (120, [('aclsum', 'prose'), ('austen', 'prose'), ('fissix', 'code')])
    >>> rows == synthetic_labels(models=2, clusters=12, comments=4)  # the same on every machine
    True
    """
    rng = random.Random(seed)
    sources = tuple(SOURCES.items())
    names = [f"model-{m:02d}" for m in range(models)]
    propensity = {name: rng.uniform(0.1, 0.7) for name in names}
    comment_effect = [rng.uniform(-0.15, 0.15) for _ in range(comments)]
    rows = []
    for i in range(clusters):
        source, genre = sources[i % len(sources)]
        cluster = f"{source}-{i // len(sources):03d}"
        casual = i % comments
        cluster_effect = rng.uniform(-0.2, 0.2)
        for name in names:
            for condition in conditions:
                rate = propensity[name] * CONDITION_EFFECT.get(condition, 1.0) + cluster_effect
                if condition != "native":
                    rate += comment_effect[casual]
                usable = rng.random() < usable_rate
                absorbed = rng.random() < min(max(rate, 0.0), 1.0) if usable else None
                comment_id = f"native-{genre}-{casual:02d}" if condition == "native" else f"casual-{casual:02d}"
                rows.append(label_row(name, cluster, condition, absorbed, source=source, genre=genre,
                                      comment_id=comment_id, usable=usable, entailment_ran=entailment_ran))
    return rows


def example_labels() -> LabelSet:
    """The labels of the report's examples (stats/tables.py and the tables it assembles), small enough to
    count by hand: model a on four humaneval clusters under newline and boundary and on one austen cluster
    (entailment not run) under newline; model b under newline only.

    >>> labels = example_labels()
    >>> labels.models, labels.conditions, labels.lexical_only_models
    (('a', 'b'), ('newline', 'boundary'), ('a',))
    """
    rows = [label_row("a", f"humaneval-{i:03d}", "newline", True) for i in range(4)]
    rows += [label_row("a", f"humaneval-{i:03d}", "boundary", i == 0) for i in range(4)]
    rows += [label_row("b", f"humaneval-{i:03d}", "newline", i < 2) for i in range(4)]
    rows += [label_row("a", "austen-000", "newline", False, source="austen", entailment_ran=False)]
    return label_set_of(rows)


def example_sensitivity_labels() -> LabelSet:
    """The labels of the sensitivity analyses' examples (stats/alternatives.py, stats/sensitivity.py). Model a:
    newline absorbed in 8 of 10 clusters, boundary in none (one boundary output excluded; one not absorbed
    with its comment cut after the edit); model b: no difference.

    >>> labels = example_sensitivity_labels()
    >>> labels.models, labels.conditions, sorted(labels.cut_text)
    (('a', 'b'), ('newline', 'boundary'), [('a', 'boundary', 'humaneval-001')])
    """
    rows = []
    for i in range(10):
        cluster = f"humaneval-{i:03d}"
        rows.append(label_row("a", cluster, "newline", i < 8))
        rows.append(label_row("a", cluster, "boundary", None if i == 9 else False, usable=i != 9))
        rows.append(label_row("b", cluster, "newline", i < 3))
        rows.append(label_row("b", cluster, "boundary", i < 3))
    rows[5]["cut_after"] = "-----END TEXT-----\nbtw this goes out with friday's newsletter"
    return label_set_of(rows)
