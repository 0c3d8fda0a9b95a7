"""Reading labels: models and conditions come from the rows; bad rows name file and line."""

import json

import pytest

from benchmark import conditions
from common import jsonl
from common.errors import UserError
from stats.labels import condition_order, load_labels
from stats.synthetic import label_row


def row(**changes):
    """A valid label row (humaneval-000/newline of model m1, not absorbed) with `changes` applied; the id
    follows a changed cluster or condition unless `changes` sets it."""
    base = label_row("m1", changes.get("cluster", "humaneval-000"), changes.get("condition", "newline"), False)
    base.update(changes)
    return base


def write_raw(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_models_conditions_and_outcomes_come_from_the_rows(tmp_path):
    jsonl.write(tmp_path / "a.jsonl", [
        row(model="zeta", condition="boundary", absorbed=True),
        row(model="alpha", condition="odd-new-condition"),
        row(model="alpha", condition="newline", usable=False, absorbed=None),
    ])
    with pytest.raises(UserError, match=r"a\.jsonl:2: condition 'odd-new-condition' is not defined .*; pass "
                                        r"--conditions FILE"):
        load_labels([tmp_path])
    (tmp_path / "odd.toml").write_text('[conditions.odd-new-condition]\npool = "casual"\n', encoding="utf-8")
    labels, digest = load_labels([tmp_path], conditions.load(tmp_path / "odd.toml"))
    assert labels.models == ("alpha", "zeta")
    assert labels.conditions == ("newline", "boundary", "odd-new-condition")
    assert labels.outcome("zeta", "boundary") == {"humaneval-000": True}
    assert labels.outcome("alpha", "newline") == {"humaneval-000": None}
    assert labels.outcome("alpha", "native") == {}
    assert len(digest) == 64


def test_digest_ignores_file_split_and_row_order(tmp_path):
    rows = [row(cluster=f"humaneval-{i:03d}", absorbed=i % 2 == 0) for i in range(6)]
    jsonl.write(tmp_path / "one" / "all.jsonl", rows)
    jsonl.write(tmp_path / "two" / "x.jsonl", rows[3:][::-1])
    jsonl.write(tmp_path / "two" / "y.jsonl", rows[:3])
    assert load_labels([tmp_path / "one"])[1] == load_labels([tmp_path / "two"])[1]


def test_condition_order_puts_known_conditions_first():
    assert condition_order({"native", "zz", "newline", "aa"}) == ("newline", "native", "aa", "zz")


@pytest.mark.parametrize("change, message", [
    ({"usable": "yes"}, "field 'usable' is 'yes', expected true or false"),
    ({"absorbed": None}, "usable=true with absorbed=None; a usable row is absorbed true or false"),
    ({"model": ""}, "field 'model' is '', expected a non-empty string"),
    ({"source": ""}, "field 'source' is '', expected a non-empty string"),
    ({"tiers_not_run": "entailment"}, "field 'tiers_not_run' is 'entailment', expected a list of tier names"),
    ({"tiers_not_run": [1]}, "field 'tiers_not_run' must list tier names as strings"),
    ({"absorbed": 1}, "field 'absorbed' is 1, expected true, false or null"),
    ({"genre": "poetry"}, "field 'genre' is 'poetry', expected one of code, prose"),
    ({"id": "humaneval-000/blank"}, "id 'humaneval-000/blank' does not match cluster/condition"),
])
def test_bad_fields_name_file_and_line(tmp_path, change, message):
    path = write_raw(tmp_path / "bad.jsonl", [row(cluster="humaneval-001"), row(**change)])
    with pytest.raises(UserError) as caught:
        load_labels([path])
    assert f"{path}:2:" in str(caught.value)
    assert message in str(caught.value)


def test_missing_field_is_named(tmp_path):
    incomplete = row()
    del incomplete["source"]
    path = write_raw(tmp_path / "bad.jsonl", [incomplete])
    with pytest.raises(UserError, match=r"bad\.jsonl:1: field 'source' is missing, expected a string"):
        load_labels([path])


def test_duplicate_label_names_both_lines(tmp_path):
    path = write_raw(tmp_path / "dup.jsonl", [row(), row(cluster="humaneval-001"), row(absorbed=True)])
    with pytest.raises(UserError, match=r"dup\.jsonl:3: second label .* \(first at .*dup\.jsonl:1\)"):
        load_labels([path])


def test_inconsistent_cluster_metadata_is_rejected(tmp_path):
    path = write_raw(tmp_path / "x.jsonl", [row(), row(condition="blank", source="fissix")])
    with pytest.raises(UserError, match="source/genre"):
        load_labels([path])
    path = write_raw(tmp_path / "y.jsonl", [row(), row(condition="boundary", comment_id="casual-09")])
    with pytest.raises(UserError, match="same comment"):
        load_labels([path])


def test_native_rows_may_carry_their_own_comment(tmp_path):
    path = write_raw(tmp_path / "ok.jsonl", [row(), row(condition="native", comment_id="native-code-03")])
    labels, _ = load_labels([path])
    assert labels.clusters["humaneval-000"].casual_comment == "casual-00"


def test_malformed_json_names_the_line(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(row()) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"broken\.jsonl:2:"):
        load_labels([path])


def test_paths_that_hold_no_labels(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        load_labels([tmp_path / "missing.jsonl"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no \\*.jsonl label files"):
        load_labels([tmp_path / "empty"])
    (tmp_path / "blank.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(UserError, match="no rows"):
        load_labels([tmp_path / "blank.jsonl"])


def test_only_a_tier_of_the_labels_genre_counts_as_not_run(tmp_path):
    """A code label that lists the entailment tier as not run (a hand-made one: the scorer never writes it) says
    nothing about prose: the rates' entailment_not_run counts prose labels only."""
    prose = label_row("m1", "austen-000", "newline", False, source="austen", entailment_ran=False)
    code = row(tiers_not_run=["entailment"])
    jsonl.write(tmp_path / "a.jsonl", [code, prose])
    labels, _ = load_labels([tmp_path])
    assert labels.entailment_missing == {("m1", "newline"): 1}
