"""The headline counts: directions in contrasts.csv, directional counts in summary.csv, the resampling's
"keeps" and the resolution beside the paper's design."""

from __future__ import annotations

import csv
import io

import pytest

from stats.design_limits import resampling_table
from stats.headline import HeadlineCount, headline_sentence
from stats.labels import label_set_of
from stats.power import detectable_difference
from stats.render import to_csv, to_markdown
from stats.resample import ModelResampling, ResamplingResult
from stats.settings import TableSettings
from stats.synthetic import label_row
from stats.tables import build_report


def paired(model, pairs, first="newline", second="native"):
    """Label rows of one model from (first absorbed, second absorbed) per cluster."""
    rows = []
    for i, (x, y) in enumerate(pairs):
        rows.append(label_row(model, f"humaneval-{i:03d}", first, x))
        rows.append(label_row(model, f"humaneval-{i:03d}", second, y))
    return rows


def three_models():
    """down: native absorbed far less (b = 12, c = 0); up: far more (b = 0, c = 12); flat: b = c = 3."""
    return (paired("down", [(True, False)] * 12 + [(False, False)] * 3)
            + paired("up", [(False, True)] * 12 + [(True, True)] * 3)
            + paired("flat", [(True, False)] * 3 + [(False, True)] * 3 + [(True, True)] * 9))


def csv_of(report, name):
    table = next(t for t in report.tables if t.name == name)
    return table, list(csv.DictReader(io.StringIO(to_csv(table))))


def test_contrasts_name_the_direction_of_each_row():
    _, rows = csv_of(build_report(label_set_of(three_models()), TableSettings(resamples=20)), "contrasts")
    got = {r["model"]: (r["significant"], r["direction"]) for r in rows if r["contrast"] == "newline vs native"}
    assert got == {"down": ("true", "reduces"), "up": ("true", "raises"), "flat": ("false", "none")}


def test_a_significant_increase_is_never_counted_as_a_reduction():
    report = build_report(label_set_of(three_models()), TableSettings(resamples=20))
    _, contrasts = csv_of(report, "contrasts")
    assert sum(r["significant"] == "true" for r in contrasts) == 2  # what counting `significant` would say
    table, (row,) = csv_of(report, "summary")
    assert (row["contrast"], row["models"]) == ("newline vs native", "3")
    assert (row["reduces_significantly"], row["raises_significantly"], row["neither"]) == ("1", "1", "1")
    assert (row["reduces"], row["raises"], row["no_difference"], row["untested"]) == ("1", "1", "1", "0")
    assert row["statement"] == (
        "Compared with a bare line break, artifact-native comments significantly reduce absorption in 1 of 3 "
        "models and significantly raise it in 1 of 3; 1 of 3 shows no significant difference (Holm-adjusted "
        "exact McNemar, p < 0.05).")
    assert row["statement"] in to_markdown(table)


def test_a_model_without_pairs_is_untested_not_neither():
    rows = three_models() + [label_row("gone", "humaneval-000", "newline", True)]
    _, (row,) = csv_of(build_report(label_set_of(rows), TableSettings(resamples=20)), "summary")
    assert (row["models"], row["untested"], row["neither"]) == ("3", "1", "1")


@pytest.mark.parametrize("count, expected", [
    (HeadlineCount("newline", "blank", 14, 0, 0, 5, 9, 0, 0),
     "Compared with a bare line break, a blank line gives no significant reduction of absorption in any model "
     "(0 of 14) and significantly raises it in none; 14 of 14 show no significant difference"),
    (HeadlineCount("newline", "boundary", 14, 11, 0, 13, 1, 0, 0),
     "Compared with a bare line break, boundary markers significantly reduce absorption in 11 of 14 models and "
     "significantly raise it in none; 3 of 14 show no significant difference"),
    (HeadlineCount("boundary", "shout", 2, 1, 1, 1, 1, 0, 0),
     "Compared with boundary markers, the shout condition significantly reduces absorption in 1 of 2 models "
     "and significantly raises it in 1 of 2; 0 of 2 show no significant difference"),
    (HeadlineCount("newline", "native", 0, 0, 0, 0, 0, 0, 3),
     "Compared with a bare line break, artifact-native comments could not be tested"),
])
def test_the_sentence_follows_the_counts(count, expected):
    assert headline_sentence(count).startswith(expected)


def model(name, observed, significant_resamples, resamples=100):
    return ModelResampling(name, 100, 20, 5, observed, significant_resamples, resamples)


def test_resampling_keeps_only_reductions_significant_on_the_observed_labels():
    majority_only = model("lucky", False, 80)  # significant in most resamples, not on the labels
    kept = model("kept", True, 60)
    fragile = model("fragile", True, 40)
    assert (majority_only.majority, majority_only.keeps) == (True, False)
    assert (kept.keeps, fragile.keeps) == (True, False)
    result = ResamplingResult("newline", "boundary", 100, 1, 0.05, 10, 100, (majority_only, kept, fragile))
    assert (result.majority_models, result.kept_models) == (2, 1)
    table = resampling_table(result, [])
    assert table.notes[0].startswith("1 of 3 models keep their newline vs boundary reduction")
    assert [row[-1] for row in table.rows] == [False, True, False]


@pytest.mark.parametrize("given", [None, 0.3])
def test_resolution_states_its_discordance_and_the_papers_design_beside_it(given):
    rows = paired("m", [(True, False)] * 20 + [(False, True)] * 5 + [(False, False)] * 75, second="boundary")
    report = build_report(label_set_of(rows), TableSettings(resamples=20, discordance=given))
    table, (row,) = csv_of(report, "resolution")
    psi = 0.25 if given is None else given
    assert float(row["discordance"]) == pytest.approx(psi)
    assert row["discordance_source"] == ("observed, pooled" if given is None else "given")
    paper = detectable_difference(300, psi, tests=20).difference
    assert float(row["paper_resolution"]) == pytest.approx(paper, abs=1e-6)
    assert float(row["resolution"]) == pytest.approx(detectable_difference(100, psi, tests=1).difference, abs=1e-6)
    markdown = to_markdown(table)
    assert "At n = 300, K = 20" in markdown
    assert "at the paper's own discordance 0.27 that design resolves 11.6 points" in markdown
