"""The screen's selftest: its goals hold on SEAM's own messages and the hand-written conversations, a miss
fails the command, the held-out set cannot be listed, and a malformed case is one line."""

from __future__ import annotations

import json

import pytest

import seam
from benchmark.dataset import requests
from common.errors import UserError
from occurrence import selftest


@pytest.fixture(scope="module")
def rows():
    files = {name: selftest.CASES_DIR / f"{name}.jsonl" for name in selftest.HAND_WRITTEN}
    return selftest.selftest(requests(), files)


def test_every_goal_is_met_on_seams_messages_and_the_development_sets(rows):
    goals = [row for row in rows if row.goal and row.part != "heldout"]
    assert goals and all(row.n for row in goals)
    assert [(row.set, row.part, row.group) for row in goals if not row.met] == []


def test_the_held_out_set_is_measured_and_kept_from_getting_worse(rows):
    """The held-out set was written blind to the rules and measured once; it misses the issue's goals (recall
    0.90, flagged 0.10: docs/OCCURRENCE.md gives the figures). These floors only keep it from getting worse."""
    held = {row.group: row for row in rows if row.part == "heldout"}
    assert (held["positives"].n, held["negatives"].n) == (60, 40)
    assert held["positives"].share >= 0.85 and held["negatives"].share <= 0.20


def test_the_goals_cover_newline_blank_native_clean_and_every_hand_written_set(rows):
    seam_goals = {(row.part, row.group) for row in rows if row.set == "seam" and row.goal}
    assert seam_goals == {(part, group) for part in (*selftest.HALVES, "all")
                          for group in ("clean", "newline", "blank", "native")}
    assert {row.part for row in rows if row.set == "hand-written"} == set(selftest.HAND_WRITTEN)
    assert selftest.HAND_WRITTEN[-1] == "heldout" and "heldout" not in selftest.DEVELOPMENT


def test_a_found_seam_must_cut_the_remark_itself():
    message = "Fix this:\ndef f(x):\n    return x\nbtw it's for class"
    assert selftest.found_remark(message, "btw it's for class")
    assert not selftest.found_remark(message, "it's for class")  # a candidate, but not this seam
    assert not selftest.found_remark("Fix this:\ndef f(x):\n    return x", None)


def test_the_halves_split_clusters_not_messages_and_both_are_used():
    halves = {}
    for request in requests():
        halves.setdefault(request.cluster, set()).add(selftest.half_of(request.cluster))
    assert all(len(found) == 1 for found in halves.values())
    assert {half for found in halves.values() for half in found} == set(selftest.HALVES)


def test_a_missed_goal_fails_the_command(monkeypatch, capsys):
    monkeypatch.setattr(selftest, "find_seam", lambda message: None)
    assert seam.main(["occurrence", "selftest"]) == 1
    out = capsys.readouterr().out
    assert "MISSED" in out and "goal(s) missed" in out


def test_the_command_prints_the_table_and_lists_the_misses_of_a_development_set_only(rows, capsys):
    missed = sum(row.met is False for row in rows)
    assert seam.main(["occurrence", "selftest", "--misses", "dev"]) == (1 if missed else 0)
    out = capsys.readouterr().out
    assert selftest.table(rows) in out and "case(s) of dev the screen gets wrong" in out
    assert (f"{missed} goal(s) missed" if missed else "every goal met") in out
    with pytest.raises(SystemExit) as done:
        seam.main(["occurrence", "selftest", "--misses", "heldout"])
    assert done.value.code == 2


@pytest.mark.parametrize("row, message", [
    ({"id": "x", "note": "n", "message": "a\nb\nthanks", "remark": "b"}, "field 'remark'"),
    ({"id": "x", "note": "n", "message": 3, "remark": None}, "field 'message'"),
])
def test_a_malformed_case_is_one_line_naming_file_line_and_field(tmp_path, row, message):
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"id": "ok", "note": "n", "message": "m", "remark": None}) + "\n" + json.dumps(row)
                    + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=rf"cases.jsonl:2: {message}"):
        selftest.read_cases(path)


def test_the_hand_written_sets_are_well_formed_and_distinct():
    seen = set()
    for name in selftest.HAND_WRITTEN:
        cases = selftest.read_cases(selftest.CASES_DIR / f"{name}.jsonl")
        assert len(cases) >= 60, name
        assert sum(case.remark is None for case in cases) >= 20, name
        for case in cases:
            assert case.message not in seen, case.id
            seen.add(case.message)
