"""Synthetic label rows for tests and the speed benchmark.

The scorer is written in parallel, and real labels need model runs, so the
statistics are exercised on labels drawn from a simple model: each model has a
base absorption propensity, each condition a multiplier (boundary and mitigation
lower it), and each cluster and casual comment its own offset, so that paired
contrasts, clustering by comment and the source table all have something to
find. Python's `random.Random` makes the rows the same on every machine.
"""

from __future__ import annotations

import random

from benchmark.render import TREATMENTS

SOURCES = (("humaneval", "code"), ("fissix", "code"), ("pyfaq", "code"),
           ("wikipedia", "prose"), ("austen", "prose"), ("aclsum", "prose"))
CONDITION_EFFECT = {"newline": 1.0, "blank": 0.85, "boundary": 0.45, "mitigation": 0.25, "native": 0.7}


def synthetic_labels(models: int = 3, clusters: int = 60, *, comments: int = 20, seed: int = 0,
                     conditions=TREATMENTS, entailment_ran: bool = True,
                     usable_rate: float = 0.97) -> list[dict]:
    """Label rows (docs/FORMATS.md) for `models` x `clusters` x `conditions`."""
    rng = random.Random(seed)
    names = [f"model-{m:02d}" for m in range(models)]
    propensity = {name: rng.uniform(0.1, 0.7) for name in names}
    comment_effect = [rng.uniform(-0.15, 0.15) for _ in range(comments)]
    rows = []
    for i in range(clusters):
        source, genre = SOURCES[i % len(SOURCES)]
        cluster = f"{source}-{i // len(SOURCES):03d}"
        casual = i % comments
        cluster_effect = rng.uniform(-0.2, 0.2)
        for name in names:
            for condition in conditions:
                rate = propensity[name] * CONDITION_EFFECT.get(condition, 1.0) + cluster_effect
                if condition != "native":
                    rate += comment_effect[casual]
                usable = rng.random() < usable_rate
                absorbed = rng.random() < min(max(rate, 0.0), 1.0) if usable else None
                prose = genre == "prose"
                run = ["witness", "content"] + (["entailment"] if prose and entailment_ran else [])
                rows.append({
                    "model": name, "cluster": cluster, "condition": condition, "source": source,
                    "genre": genre,
                    "comment_id": (f"native-{genre}-{casual:02d}" if condition == "native"
                                   else f"casual-{casual:02d}"),
                    "usable": usable, "absorbed": absorbed,
                    "tier": "witness" if absorbed else None, "evidence": None,
                    "reason": None if usable else "clean output unusable",
                    "tiers_run": run if usable else [],
                    "tiers_not_run": ["entailment"] if prose and not entailment_ran and usable else [],
                    "scorer_version": "synthetic", "nli_model_sha256": None,
                })
    return rows
