from collections import Counter

from benchmark import select as selection
from benchmark.collisions import cluster_texts, collisions
from benchmark.comments import casual_pool, native_pools
from benchmark.sources import Provenance, SourceItem

PROV = Provenance("pypi", "pkg", "1.0", "data.txt", "0" * 64)


def item(source: str, n: int, artifact: str | None = None) -> SourceItem:
    return SourceItem(source=source, item_id=f"{source}/{n}", license="MIT", partition="permissive",
                      genre="prose", register="literary", provenance=PROV,
                      instruction="Simplify this paragraph for a modern reader.",
                      artifact=artifact or f"Paragraph number {n} about nothing in particular.")


def candidates(per_source=30):
    return {s: [item(s, n) for n in range(per_source)] for s in ("alpha", "beta")}


def test_selection_is_deterministic_and_takes_the_requested_count():
    first, reports = selection.select(candidates(), casual_pool(), native_pools(), per_source=20)
    second, _ = selection.select(candidates(), casual_pool(), native_pools(), per_source=20)
    assert first == second
    assert [r.selected for r in reports] == [20, 20]
    assert [r["cluster"] for r in first[:2]] == ["alpha-001", "alpha-002"]


def test_selection_depends_on_the_seed(monkeypatch):
    first, _ = selection.select(candidates(), casual_pool(), native_pools(), per_source=10)
    monkeypatch.setattr(selection, "SEED", "another-seed")
    second, _ = selection.select(candidates(), casual_pool(), native_pools(), per_source=10)
    assert [r["item_id"] for r in first] != [r["item_id"] for r in second]


def test_casual_comments_are_spread_evenly():
    rows, _ = selection.select(candidates(per_source=60), casual_pool(), native_pools(), per_source=60)
    uses = Counter(r["comment"]["id"] for r in rows)
    assert len(uses) == 24
    assert max(uses.values()) - min(uses.values()) <= 1
    for source in ("alpha", "beta"):
        here = Counter(r["comment"]["id"] for r in rows if r["source"] == source)
        assert max(here.values()) - min(here.values()) <= 1


def test_no_assigned_comment_collides_and_hopeless_items_are_skipped():
    pool = casual_pool()[:2]
    # Item 0 mentions both casual comments' words, so nothing can be assigned to it.
    crowded = item("alpha", 0, artifact=" ".join(c.text for c in pool))
    cands = {"alpha": [crowded] + [item("alpha", n) for n in range(1, 6)]}
    rows, reports = selection.select(cands, pool, native_pools(), per_source=5)
    assert reports[0].skipped_collision == 1 and reports[0].skipped_ids == ["alpha/0"]
    assert len(rows) == 5
    for row in rows:
        texts = cluster_texts(row["instruction"], row["artifact"], row["reference"])
        for key in ("comment", "native"):
            assert collisions(row[key]["text"], row[key]["witness"], texts) == []
