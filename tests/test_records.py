"""The shared record types: docs/FORMATS.md lists exactly their fields, every released row
round-trips byte for byte, and a malformed row is one clear line naming file, line and field."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from support.samples import trace_row

from common import jsonl, records
from common.errors import UserError
from common.records import Attempt, Cluster, Comment, Label, Request, TraceRow

ROOT = Path(__file__).resolve().parents[1]
FORMATS = (ROOT / "docs" / "FORMATS.md").read_text(encoding="utf-8")


def _section(heading: str) -> str:
    start = FORMATS.index(f"\n## {heading}")
    end = FORMATS.find("\n## ", start + 1)
    return FORMATS[start:end if end > 0 else None]


def _table_rows(section: str) -> list[list[str]]:
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("|")]
    return [cells for cells in rows[2:]]  # skip the header and its rule


def _documented(heading: str) -> set[str]:
    """The field names in the first column of the section's table (several may share a cell)."""
    return {name for cells in _table_rows(_section(heading)) for name in re.findall(r"`([a-z_0-9]+)`", cells[0])}


def _cell(heading: str, field: str, column: int) -> set[str]:
    for cells in _table_rows(_section(heading)):
        if f"`{field}`" in cells[0]:
            return set(re.findall(r"`([a-z_0-9]+)`", cells[column]))
    raise AssertionError(f"{heading}: no row for {field}")


def _fields(kind) -> set[str]:
    return {field.name for field in dataclasses.fields(kind)}


@pytest.mark.parametrize(("heading", "kind"), [
    ("Cluster rows", Cluster), ("Request rows", Request), ("Trace rows", TraceRow), ("Label rows", Label)])
def test_formats_md_lists_exactly_the_fields_of_each_record(heading, kind):
    assert _documented(heading) == _fields(kind)


def test_formats_md_lists_the_nested_records_fields():
    assert _cell("Trace rows", "attempts", 1) == _fields(Attempt)
    assert _cell("Cluster rows", "comment", 2) == _fields(Comment)


RELEASED = [
    *[(path, Cluster) for path in sorted((ROOT / "data" / "benchmark").glob("*.jsonl"))],
    *[(path, TraceRow) for path in sorted((ROOT / "data" / "traces").glob("*.jsonl"))],
    *[(path, Label) for path in sorted((ROOT / "data" / "labels").glob("*.jsonl"))],
]


@pytest.mark.parametrize(("path", "kind"), RELEASED, ids=[f"{p.parent.name}/{p.name}" for p, _ in RELEASED])
def test_every_released_row_reads_and_writes_back_to_the_same_bytes(path, kind):
    raw = [line.decode("utf-8") + "\n" for line in path.read_bytes().split(b"\n")[:-1]]  # not str.splitlines:
    # U+2028 and U+0085 may stand inside a row's strings
    rebuilt = [jsonl.dumps(record.to_row()) for _, record in records.read(path, kind)]
    assert len(rebuilt) == len(raw)
    assert rebuilt == raw


def _label(**changes) -> dict:
    row = {"id": "austen-001/blank", "model": "m", "cluster": "austen-001", "condition": "blank",
           "source": "austen", "genre": "prose", "comment_id": "casual-01", "usable": True, "absorbed": False,
           "tier": None, "evidence": None, "reason": None, "tiers_run": ["witness", "content"],
           "tiers_not_run": ["entailment"], "scorer_version": "3", "nli_model_sha256": None,
           "extraction": "plain", "cut_before": "", "cut_after": ""}
    row.update(changes)
    return row


@pytest.mark.parametrize(("changes", "message"), [
    ({"usable": "yes"}, "x.jsonl:7: field 'usable' is 'yes', expected true or false"),
    ({"absorbed": None}, "x.jsonl:7: usable=true with absorbed=None"),
    ({"usable": False, "absorbed": True}, "x.jsonl:7: usable=false with absorbed=True"),
    ({"genre": "poetry"}, "x.jsonl:7: field 'genre' is 'poetry', expected one of code, prose"),
    ({"id": "austen-002/blank"}, "x.jsonl:7: id 'austen-002/blank' does not match cluster/condition"),
    ({"tiers_run": ["witness", 3]}, "x.jsonl:7: field 'tiers_run' must list tier names as strings"),
    ({"usable": 1}, "x.jsonl:7: field 'usable' is 1, expected true or false"),
    ({"model": ""}, "x.jsonl:7: field 'model' is '', expected a non-empty string"),
])
def test_a_malformed_label_is_one_line_naming_where_the_field_and_what_was_expected(changes, message):
    with pytest.raises(UserError) as caught:
        Label.from_row(_label(**changes), "x.jsonl:7")
    assert str(caught.value).startswith(message)


def test_a_missing_field_is_named_and_a_huge_value_is_cut_short():
    row = _label()
    del row["source"]
    with pytest.raises(UserError, match=r"^x:1: field 'source' is missing, expected a string$"):
        Label.from_row(row, "x:1")
    with pytest.raises(UserError) as caught:
        Label.from_row(_label(cluster=["x" * 100_000]), "x:1")
    assert len(str(caught.value)) < 200 and "characters" in str(caught.value)


def test_read_names_the_file_and_line(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(_label()) + "\n" + json.dumps(_label(genre=None)) + "\n")
    with pytest.raises(UserError, match=r"labels.jsonl:2: field 'genre' is None"):
        list(records.read(path, Label))


def test_excluded_labels_carry_only_their_reason():
    label = Label.excluded(id="a-001/blank", model="m", cluster="a-001", condition="blank", source="a",
                           genre="code", comment_id="casual-01", reason="clean unusable",
                           scorer_version="3", nli_model_sha256=None)
    row = label.to_row()
    assert row["usable"] is False and row["absorbed"] is None and row["reason"] == "clean unusable"
    assert Label.from_row(row, "here") == label


def test_lists_are_checked_element_by_element_and_usage_is_taken_as_sent():
    row = json.loads((ROOT / "data" / "traces" / "smollm2-135m.jsonl").open().readline())
    with pytest.raises(UserError, match=r"^t:1: field 'previous' is \[1\], expected a list of earlier rows"):
        TraceRow.from_row({**row, "previous": [1]}, "t:1")
    assert TraceRow.from_row({**row, "usage": [1, 2]}, "t:1").to_row()["usage"] == [1, 2]  # runner 1 kept it
    cluster = json.loads((ROOT / "data" / "benchmark" / "permissive.jsonl").open().readline())
    with pytest.raises(UserError, match=r"^c:1: field 'transformations' is \[None\], expected a list of strings"):
        Cluster.from_row({**cluster, "transformations": [None]}, "c:1")


def test_a_trace_row_needs_an_output_when_ok_and_a_readable_attempt_time():
    row = trace_row()
    TraceRow.from_row(row, "t:1")
    with pytest.raises(UserError, match="^t:1: status ok needs a string 'output'$"):
        TraceRow.from_row({**row, "output": None}, "t:1")
    late = {**row, "attempts": [{**row["attempts"][0], "started_at": "yesterday"}]}
    with pytest.raises(UserError, match=r"^t:1: attempt 1: attempt 'started_at' is 'yesterday'"):
        TraceRow.from_row(late, "t:1")


def test_a_request_under_a_treatment_needs_its_comment():
    row = {"id": "a-001/clean", "cluster": "a-001", "source": "a", "genre": "code", "license": "MIT",
           "condition": "clean", "message": "m", "artifact": "x", "comment": None, "comment_id": None,
           "witness": None, "proposition": None, "benchmark_sha256": "0" * 64}
    assert Request.from_row(row, "r:1").to_row() == row
    with pytest.raises(UserError, match="^r:1: a blank request needs its comment"):
        Request.from_row({**row, "id": "a-001/blank", "condition": "blank"}, "r:1")


def test_a_cluster_names_the_comment_of_each_pool():
    row = json.loads((ROOT / "data" / "benchmark" / "permissive.jsonl").open().readline())
    cluster = Cluster.from_row(row, "c:1")
    assert cluster.comment_of("none") is None
    assert cluster.comment_of("native") == cluster.native
    assert cluster.comment_of("casual") == cluster.comment
    with pytest.raises(ValueError, match="pool: expected one of none, casual, native"):
        cluster.comment_of("shouting")
    with pytest.raises(UserError, match=r"^c:1: field 'native': field 'witness' is missing"):
        Cluster.from_row({**row, "native": {"id": "n", "text": "t", "proposition": "p"}}, "c:1")


def test_formats_says_a_validity_item_is_usable_only_within_the_length_the_kit_reads():
    """validity/inputs.py's `edited_text` (and so `usable` in validity_items.jsonl) requires the output to be at most
    MAX_OUTPUT_CHARS long, as the scorer does; docs/FORMATS.md once said "status ok and the extraction left some
    text" only."""
    from common.records import MAX_OUTPUT_CHARS

    section = _section("Tables")
    items = section[section.index("`validity_items.jsonl`, one row per output"):]
    usable = next(cells for cells in _table_rows(items) if cells[0].strip() == "`usable`")
    assert f"at most {MAX_OUTPUT_CHARS:,} characters" in usable[2] and "MAX_OUTPUT_CHARS" in usable[2]
    assert "extraction left some text" in usable[2]
