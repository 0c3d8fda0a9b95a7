"""The recovered share (stats/recovered.py), its table and condition-file key, and the same request asked twice
(stats/reruns.py)."""

import dataclasses
import math
import random

import numpy as np
import pytest

from benchmark import conditions
from common.errors import UserError
from scorer.synthetic import trace_row
from stats.labels import label_set_of
from stats.recovered import recovered_share, recovered_share_of
from stats.reruns import ONE_RUN, TWO_RUNS, reruns
from stats.settings import TableSettings
from stats.synthetic import label_row
from stats.tables import build_report

SETTINGS = TableSettings(resamples=20)


def fieller_by_scan(base, candidate, oracle, z=1.959963984540054):
    """The Fieller set found by testing a fine grid of shares one by one: the definition, not the algebra."""
    x = np.array(base) - np.array(candidate)
    y = np.array(base) - np.array(oracle)
    n = len(x)
    inside = []
    for theta in np.arange(-3, 3, 0.0005):
        d = x - theta * y
        if d.mean() ** 2 <= z * z * d.var(ddof=1) / n:
            inside.append(theta)
    return min(inside), max(inside)


def test_the_interval_is_the_set_of_shares_a_z_test_does_not_reject():
    rng = random.Random(3)
    for _ in range(5):
        base = [int(rng.random() < 0.45) for _ in range(200)]
        oracle = [b if rng.random() < 0.6 else 0 for b in base]
        candidate = [o if rng.random() < 0.8 else b for b, o in zip(base, oracle, strict=True)]
        result = recovered_share(base, candidate, oracle)
        low, high = fieller_by_scan(base, candidate, oracle)
        assert result.bounded
        assert result.confidence_interval.low == pytest.approx(low, abs=0.001)
        assert result.confidence_interval.high == pytest.approx(high, abs=0.001)
        assert low <= result.statistic <= high


def test_the_share_and_reductions_are_the_ratio_of_paired_differences():
    base, candidate, oracle = [1] * 40 + [0] * 60, [1] * 16 + [0] * 84, [1] * 10 + [0] * 90
    result = recovered_share(base, candidate, oracle)
    assert (result.n, result.base_absorbed, result.candidate_absorbed, result.oracle_absorbed) == (100, 40, 16, 10)
    assert result.reduction == pytest.approx(0.24) and result.oracle_reduction == pytest.approx(0.30)
    assert result.statistic == pytest.approx(0.8)
    # the order of the clusters is no information
    order = list(range(100))
    random.Random(0).shuffle(order)
    shuffled = recovered_share(*([v[i] for i in order] for v in (base, candidate, oracle)))
    assert shuffled.confidence_interval == result.confidence_interval


def test_the_interval_covers_the_true_share_about_as_often_as_it_says():
    """2,000 simulated studies of 300 clusters whose true share is 0.6: Fieller's 95% set covers it
    in 93% to 97% of them (the binomial sd of the coverage at 2,000 draws is 0.5 points)."""
    rng = np.random.default_rng(20261205)
    covered = 0
    for _ in range(2000):
        base = rng.random(300) < 0.4
        oracle = base & (rng.random(300) < 0.5)            # the oracle removes half: p_oracle = 0.2
        candidate = np.where(rng.random(300) < 0.6, oracle, base)  # the candidate does so on 60% of clusters
        result = recovered_share(base.tolist(), candidate.tolist(), oracle.tolist())
        ci = result.confidence_interval
        covered += result.bounded and ci.low <= 0.6 <= ci.high
    assert 0.93 <= covered / 2000 <= 0.97


def test_no_interval_when_the_oracle_reduction_is_not_distinguishable_from_zero():
    # the oracle buys 2 of 100 clusters: its z-test does not reject 0, so no share is estimable
    base = [1] * 30 + [0] * 70
    oracle = [0] * 2 + [1] * 28 + [0] * 70
    candidate = [0] + [1] * 29 + [0] * 70
    result = recovered_share(base, candidate, oracle)
    assert not result.bounded and math.isnan(result.confidence_interval.low)
    assert result.statistic == pytest.approx(0.5)
    # nothing at all to divide by
    assert math.isnan(recovered_share([1, 0, 1], [0, 0, 1], [1, 0, 1]).statistic)
    assert recovered_share([], [], []).n == 0


@pytest.mark.parametrize("args, kwargs, message", [
    (([1], [1, 0], [0]), {}, r"base, candidate, oracle: expected one outcome per cluster in each, got 1, 2 and 1"),
    (([1, 2], [1, 0], [0, 0]), {}, r"base: expected 0/1 or False/True outcomes, got 2 at position 1"),
    (([1, 0], [1.0, 0], [0, 0]), {}, r"candidate: expected 0/1 or False/True outcomes, got 1\.0 at position 0"),
    (([1], [1], [0]), {"confidence_level": 95}, r"confidence_level: expected a number strictly between 0 and 1"),
])
def test_bad_arguments_name_the_parameter_and_what_it_allows(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        recovered_share(*args, **kwargs)


def test_only_clusters_usable_under_all_three_are_used():
    result = recovered_share_of({"a": True, "b": True, "c": None, "d": True},
                                {"a": False, "b": True, "c": True, "d": None},
                                {"a": False, "b": False, "c": False})
    assert result.n == 2 and (result.base_absorbed, result.candidate_absorbed, result.oracle_absorbed) == (2, 1, 0)


# ---------------------------------------------------------------- the condition file's key and the table


def write(tmp_path, text):
    path = tmp_path / "mine.toml"
    path.write_text(text)
    return path


GUARDED = '[conditions.g]\npool = "casual"\nopen = "<<"\nclose = ">>"\n'


@pytest.mark.parametrize("text, message", [
    ('recovered = "g of newline vs boundary"\n' + GUARDED, r"mine\.toml: recovered is 'g of newline vs boundary', "
                                                          r"expected a list of \"CANDIDATE of BASE vs ORACLE\""),
    ('recovered = ["g from newline vs boundary"]\n' + GUARDED, r"recovered\[0\] is 'g from newline vs boundary', "
                                                              r"expected a list"),
    ('recovered = ["g of newline vs boundary vs blank"]\n' + GUARDED, r"recovered\[0\] is .*, expected a list"),
    ('recovered = ["g of newline vs nowhere"]\n' + GUARDED, r"recovered\[0\] is .*: 'nowhere' is not defined"),
    ('recovered = ["clean of newline vs boundary"]\n' + GUARDED, r"recovered\[0\] is .*: 'clean' has no comment"),
    ('recovered = ["g of g vs boundary"]\n' + GUARDED, r"recovered\[0\] is .*: expected three different conditions"),
    ('recovered = ["g of newline vs boundary", "g of newline vs boundary"]\n' + GUARDED,
     r"recovered\[1\] is .*: listed twice"),
    ('recovered = [' + ", ".join(['"g of newline vs boundary"'] * 6) + ']\n' + GUARDED,
     r"mine\.toml: recovered is .*, at most 5$"),
    ('recovered = [3]\n' + GUARDED, r"recovered\[0\] is 3, expected"),
])
def test_a_malformed_recovered_key_is_one_line(tmp_path, text, message):
    with pytest.raises(UserError, match=message) as caught:
        conditions.load(write(tmp_path, text))
    assert "\n" not in str(caught.value)


def test_the_key_is_read_and_the_builtins_and_other_files_have_none(tmp_path):
    defined = conditions.load(write(tmp_path, 'recovered = ["g of newline vs boundary", "blank of newline vs g"]\n'
                                    + GUARDED))
    assert defined.recovered == (("g", "newline", "boundary"), ("blank", "newline", "g"))
    assert conditions.builtin().recovered == ()
    assert conditions.load(conditions.PROJECT_FILES / "example.toml").recovered == ()
    # a condition may be called "vs" or "of": the five words are read by position
    defined = conditions.load(write(tmp_path, 'recovered = ["of of vs vs boundary"]\n'
                                    '[conditions.vs]\npool = "casual"\nopen = "<<"\nclose = ">>"\n'
                                    '[conditions.of]\npool = "casual"\nopen = "[["\nclose = "]]"\n'))
    assert defined.recovered == (("of", "vs", "boundary"),)
    # a file may add shares of built-in conditions only
    assert conditions.load(write(tmp_path, 'recovered = ["blank of newline vs boundary"]\n')).recovered == (
        ("blank", "newline", "boundary"),)


def labels_for(outcomes):
    """Label rows from {condition: [True/False/None per cluster]} for one model."""
    return [label_row("m", f"humaneval-{i:03d}", condition, value, usable=value is not None)
            for condition, values in outcomes.items() for i, value in enumerate(values)]


def test_the_table_has_a_row_per_model_and_share_and_is_written_only_when_asked(tmp_path):
    rng = random.Random(1)
    base = [rng.random() < 0.5 for _ in range(120)]
    oracle = [b and rng.random() < 0.4 for b in base]
    blank = [o if rng.random() < 0.5 else b for b, o in zip(base, oracle, strict=True)]
    rows = labels_for({"newline": base, "boundary": oracle, "blank": blank})
    defined = conditions.load(write(tmp_path, 'recovered = ["blank of newline vs boundary"]\n'))
    report = build_report(label_set_of(rows), SETTINGS, conditions=defined)
    (table,) = [t for t in report.tables if t.name == "recovered"]
    expected = recovered_share(base, blank, oracle)
    (row,) = table.rows
    assert row[:5] == ("m", "blank of newline vs boundary", "blank", "newline", "boundary")
    assert row[5:] == (120, sum(base), sum(blank), sum(oracle), sum(b != o for b, o in zip(blank, oracle, strict=True)),
                       expected.reduction, expected.oracle_reduction, expected.statistic,
                       expected.confidence_interval.low, expected.confidence_interval.high, True)
    assert report.provenance["recovered"]["shares"] == [["blank", "newline", "boundary"]]
    assert "recovered" not in [t.name for t in build_report(label_set_of(rows), SETTINGS).tables]
    # a model without one of the three conditions has no row; without any such model, no table
    other = [dict(row, model="n") for row in rows if row["condition"] != "blank"]
    report = build_report(label_set_of(rows + other), SETTINGS, conditions=defined)
    assert [r[0] for r in next(t for t in report.tables if t.name == "recovered").rows] == ["m"]
    report = build_report(label_set_of(other), SETTINGS, conditions=defined)
    assert "recovered" not in [t.name for t in report.tables] and "recovered" not in report.provenance


def test_a_candidate_equal_to_the_oracle_everywhere_is_a_point_and_says_so():
    base, oracle = [1] * 33 + [0] * 117, [1] * 21 + [0] * 129
    result = recovered_share(base, oracle, oracle)
    assert result.discordant == 0 and result.statistic == 1.0
    assert (result.confidence_interval.low, result.confidence_interval.high) == (1.0, 1.0)
    moved = recovered_share(base, [0] + oracle[1:], oracle)
    assert moved.discordant == 1 and moved.confidence_interval.high - moved.confidence_interval.low > 0.2


# ---------------------------------------------------------------- the same request asked twice


def trace(cluster, condition, output, sha, model="m"):
    return dataclasses.replace(trace_row(cluster, condition, output, model=model), message_sha256=sha)


def test_reruns_pair_the_same_message_by_file_and_count_identical_outputs():
    rows = [trace("humaneval-000", "boundary", "out A", "s0"), trace("humaneval-000", "blank", "out A", "s0"),
            trace("humaneval-001", "boundary", "out B", "s1"), trace("humaneval-001", "blank", "other", "s1"),
            trace("humaneval-002", "boundary", "out C", "s2"), trace("humaneval-002", "blank", "out C", "s9"),
            trace("humaneval-003", "newline", "x", "s3"), trace("humaneval-003", "blank", "x", "s3")]
    outputs = {("m", r.id): r for r in rows}
    files = {("m", r.id): "built-in.jsonl" if r.condition != "blank" else "study.jsonl" for r in rows}
    files[("m", "humaneval-003/newline")] = "study.jsonl"
    outcomes = {("m", "boundary"): {"humaneval-000": True, "humaneval-001": True, "humaneval-002": False},
                ("m", "blank"): {"humaneval-000": True, "humaneval-001": False, "humaneval-002": True,
                                 "humaneval-003": None},
                ("m", "newline"): {"humaneval-003": True}}
    found = reruns(outputs, files, outcomes, conditions.builtin().names, SETTINGS)
    assert [(r.first, r.second, r.runs, r.same_messages, r.identical_outputs) for r in found] == [
        ("newline", "blank", ONE_RUN, 1, 1), ("blank", "boundary", TWO_RUNS, 2, 1)]
    pair = found[1].result.table
    assert (pair.n, pair.first_only, pair.second_only) == (2, 0, 1)  # blank absorbed only where boundary was too
    assert found[0].result.table.n == 0  # unusable under blank


def test_two_failed_requests_are_not_identical_outputs():
    rows = [trace("humaneval-000", "boundary", None, "s0"), trace("humaneval-000", "blank", None, "s0")]
    (found,) = reruns({("m", r.id): r for r in rows}, {("m", r.id): "t.jsonl" for r in rows}, {},
                      conditions.builtin().names, SETTINGS)
    assert (found.same_messages, found.identical_outputs) == (1, 0)


def test_no_reruns_table_without_two_conditions_sending_one_message(tmp_path):
    from stats.evidence import Evidence

    rows = [trace("humaneval-000", "boundary", "a", "s0"), trace("humaneval-000", "blank", "a", "s1")]
    evidence = Evidence(outputs={("m", r.id): r for r in rows}, origins={("m", r.id): "t.jsonl" for r in rows})
    labels = label_set_of(labels_for({"boundary": [True], "blank": [True]}))
    assert "reruns" not in [t.name for t in build_report(labels, SETTINGS, evidence=evidence).tables]
    same = [dataclasses.replace(rows[1], message_sha256="s0"), rows[0]]
    evidence = dataclasses.replace(evidence, outputs={("m", r.id): r for r in same})
    (table,) = [t for t in build_report(labels, SETTINGS, evidence=evidence).tables if t.name == "reruns"]
    assert table.rows == (("m", "blank vs boundary", ONE_RUN, 1, 1, 1, 0, 0, 0.0, table.rows[0][9],
                           table.rows[0][10], 1.0),)


def test_the_summary_says_each_share_with_its_interval_or_that_none_is_estimable(tmp_path):
    from stats.summary import summary_lines

    base = [True] * 40 + [False] * 60
    rows = labels_for({"newline": base, "boundary": [True] * 10 + [False] * 90,
                       "blank": [True] * 16 + [False] * 84})
    rows += [dict(row, model="n") for row in labels_for({"newline": [True, False] * 50,
                                                          "boundary": [True, False] * 50, "blank": [False] * 100})]
    defined = conditions.load(write(tmp_path, 'recovered = ["blank of newline vs boundary"]\n'))
    report = build_report(label_set_of(rows), SETTINGS, conditions=defined)
    lines = [line for line in summary_lines({t.name: t for t in report.tables}) if "of newline vs boundary" in line]
    assert lines == [
        "  m blank of newline vs boundary: recovers 80.0% [64.9%, 95.1%] of the oracle's reduction "
        "(24.0 of 30.0 points, n=100)",
        "  n blank of newline vs boundary: no share estimable: the oracle's reduction is not distinguishable "
        "from 0 (50.0 of 0.0 points, n=100)"]
