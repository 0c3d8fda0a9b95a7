"""Collection provenance: times, served models, unusable shares, and the two flags."""

from datetime import timedelta

import pytest

from benchmark import dataset
from common import jsonl
from validity import provenance
from validity.inputs import format_time, read_outputs
from validity.synthetic import START, trace_row

BENCHMARK = dataset.load()
CLUSTERS = [f"austen-{i:03d}" for i in range(1, 6)]
CONDITIONS = ("clean", "newline", "native")


def entries_of(tmp_path, rows):
    jsonl.write(tmp_path / "trace.jsonl", rows)
    return provenance.by_condition(read_outputs([tmp_path / "trace.jsonl"], BENCHMARK))


def together(**overrides):
    """Every cluster's three conditions asked one after the other, one cluster a minute."""
    return [trace_row(cluster, condition, "text", at=timedelta(minutes=i, seconds=j), **overrides)
            for i, cluster in enumerate(CLUSTERS) for j, condition in enumerate(CONDITIONS)]


def test_a_run_collected_together_by_one_served_model_is_not_flagged(tmp_path):
    entries = entries_of(tmp_path, together())
    (flags,) = provenance.flags(entries)
    assert not flags.flagged and not flags.served_differs and not flags.days_apart
    assert flags.served == ("served-1",)
    assert flags.gap_days < 1 / 86400 * 3  # a few seconds
    clean = entries[0]
    assert (clean.condition, clean.rows, clean.ok) == ("clean", 5, 5)
    assert format_time(clean.first) == "2026-01-05T09:00:00.000Z"
    assert format_time(clean.median) == "2026-01-05T09:02:00.000Z"
    assert format_time(clean.last) == "2026-01-05T09:04:00.000Z"


def test_a_condition_answered_by_another_served_model_is_flagged(tmp_path):
    rows = [r if r["condition"] != "native" else {**r, "served_model": "served-2"} for r in together()]
    (flags,) = provenance.flags(entries_of(tmp_path, rows))
    assert flags.served_differs and flags.flagged
    assert flags.served == ("served-1", "served-2")


def test_a_mixture_seen_in_every_condition_is_not_a_difference_between_conditions(tmp_path):
    rows = [{**r, "served_model": "served-0" if r["cluster"] in ("austen-001", "austen-002") else "served-1"}
            for r in together()]
    (flags,) = provenance.flags(entries_of(tmp_path, rows))
    assert not flags.served_differs
    assert flags.served == ("served-0", "served-1")


def test_a_condition_collected_weeks_later_is_flagged_at_the_chosen_threshold(tmp_path):
    rows = [r if r["condition"] != "native" else
            trace_row(r["cluster"], "native", "text", at=timedelta(days=8)) for r in together()]
    entries = entries_of(tmp_path, rows)
    (flags,) = provenance.flags(entries)
    assert flags.days_apart and flags.flagged
    assert flags.gap_between == ("clean", "native")  # clean's median is the earliest
    assert flags.gap_days == pytest.approx(8 - 2 / (24 * 60))
    (relaxed,) = provenance.flags(entries, max_days=10)
    assert not relaxed.days_apart and not relaxed.flagged


def test_a_long_interleaved_run_is_not_flagged(tmp_path):
    # one cluster every five days, its conditions asked together: 20 days in all, conditions never apart
    rows = [trace_row(cluster, condition, "text", at=timedelta(days=5 * i, seconds=j))
            for i, cluster in enumerate(CLUSTERS) for j, condition in enumerate(CONDITIONS)]
    (flags,) = provenance.flags(entries_of(tmp_path, rows))
    assert not flags.days_apart
    assert flags.gap_days < 0.001


def test_a_few_rows_asked_again_later_move_the_last_time_not_the_median(tmp_path):
    rows = together()
    rows[0] = trace_row("austen-001", "clean", "text", at=timedelta(0), retried_at=timedelta(days=30))
    entries = entries_of(tmp_path, rows)
    clean = next(e for e in entries if e.condition == "clean")
    assert format_time(clean.first) == "2026-01-05T09:00:00.000Z"
    assert clean.last == START + timedelta(days=30)
    (flags,) = provenance.flags(entries)
    assert not flags.days_apart


def test_unusable_and_failed_rows_are_counted_and_fingerprints_listed(tmp_path):
    rows = together(fingerprint="fp_1")
    rows[0] = {**rows[0], "status": "unusable"}
    rows[3] = {**rows[3], "status": "failed", "output": None, "served_model": None, "response": None}
    clean = entries_of(tmp_path, rows)[0]
    assert (clean.rows, clean.ok, clean.unusable, clean.failed) == (5, 3, 1, 1)
    assert clean.served == (("served-1", 4),)  # the failed row reported no served model
    assert clean.fingerprints == (("fp_1", 4),)


def test_negative_threshold_is_refused():
    with pytest.raises(ValueError):
        provenance.flags([], max_days=-1)


def test_a_condition_without_any_served_identifier_is_flagged(tmp_path):
    rows = [r if r["condition"] != "native" else {**r, "served_model": None} for r in together()]
    (flags,) = provenance.flags(entries_of(tmp_path, rows))
    assert flags.served_missing == ("native",) and flags.flagged
    assert not flags.served_differs  # the other conditions agree with each other
    assert flags.reasons == ("no served identifier under native",)


def test_a_condition_missing_only_some_served_identifiers_or_only_failed_is_not_flagged(tmp_path):
    rows = together()
    rows[1] = {**rows[1], "served_model": None}  # one newline row without it: the others name it
    failed = [trace_row("austen-001", "blank", None, status="failed", served=None)]
    (flags,) = provenance.flags(entries_of(tmp_path, rows + failed))
    assert flags.served_missing == () and not flags.flagged
