"""Synthetic labels: valid label rows of the real schema, with the benchmark's sources and genres."""

from benchmark.sources import SOURCES
from common.records import TREATMENTS, Label
from stats.synthetic import label_row, synthetic_labels


def test_rows_are_labels_that_read_back_unchanged():
    rows = synthetic_labels(2, 18, comments=5, seed=4, usable_rate=0.8)
    assert not all(row["usable"] for row in rows)  # both kinds of row are covered
    for number, row in enumerate(rows, 1):
        assert Label.from_row(row, f"synthetic:{number}").to_row() == row


def test_sources_and_genres_are_the_benchmarks():
    rows = synthetic_labels(1, 12, comments=3)
    assert {(row["source"], row["genre"]) for row in rows} == set(SOURCES.items())
    assert {row["genre"] for row in rows if row["source"] == "pyfaq"} == {"prose"}
    assert {row["condition"] for row in rows} == set(TREATMENTS)


def test_entailment_is_listed_as_not_run_only_on_usable_prose_rows():
    rows = synthetic_labels(2, 12, comments=3, entailment_ran=False, usable_rate=0.8)
    missing = {(row["genre"], row["usable"]) for row in rows if "entailment" in row["tiers_not_run"]}
    assert missing == {("prose", True)}
    assert not any("entailment" in row["tiers_run"] for row in rows)
    ran = synthetic_labels(2, 12, comments=3)
    assert not any(row["tiers_not_run"] for row in ran)
    assert {row["genre"] for row in ran if "entailment" in row["tiers_run"]} == {"prose"}


def test_label_row_takes_the_genre_from_the_source():
    assert label_row("m", "pyfaq-000", "newline", True, source="pyfaq")["genre"] == "prose"
    assert label_row("m", "fissix-000", "newline", True, source="fissix")["genre"] == "code"
    excluded = label_row("m", "fissix-000", "blank", None, source="fissix", usable=False)
    assert (excluded["usable"], excluded["absorbed"], excluded["tier"]) == (False, None, None)
