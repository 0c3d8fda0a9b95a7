"""The review file's rows: docs/FORMATS.md lists exactly their fields, and a malformed file is one clear line."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest

import review
from common.errors import UserError
from review import store
from review.records import Answer, Case, Header, Stratum

ROOT = Path(__file__).resolve().parents[1]
FORMATS = (ROOT / "docs" / "FORMATS.md").read_text(encoding="utf-8")
MODULES = sorted(info.name for info in pkgutil.iter_modules(review.__path__, "review."))


def _between(start: str, end: str) -> str:
    first = FORMATS.index(start)
    return FORMATS[first:FORMATS.index(end, first + len(start))]


def _tables(text: str) -> list[set[str]]:
    """The field names in the first column of each Markdown table in `text`."""
    found, current = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = line.split("|")[1:-1]
            if current is None:
                current = set()
            elif not set(cells[0]) <= set(":- "):
                current.update(re.findall(r"`([a-z_0-9]+)`", cells[0]))
        elif current is not None:
            found.append(current)
            current = None
    if current is not None:
        found.append(current)
    return found


def _fields(kind) -> set[str]:
    return {item.name for item in dataclasses.fields(kind)}


def test_formats_md_lists_exactly_the_fields_of_each_review_row():
    header, strata = _tables(_between("### Header row", "### Case rows"))
    assert header == _fields(Header) and strata == _fields(Stratum)
    assert _tables(_between("### Case rows", "### Answer rows")) == [_fields(Case)]
    assert _tables(_between("### Answer rows", "## Review report")) == [_fields(Answer)]


def test_formats_md_lists_the_report_csv_columns(tmp_path):
    from support.reviewdata import make_inputs

    import seam

    inputs = make_inputs(tmp_path / "in", per_source=3)
    out = tmp_path / "r.jsonl"
    assert seam.main(["review", "sample", str(inputs.labels), str(inputs.traces), "--requests", str(inputs.requests),
                      "--n", "10", "--seed", "1", "--out", str(out)]) == 0
    copy = tmp_path / "second.jsonl"
    copy.write_bytes(out.read_bytes())
    assert seam.main(["review", "report", str(out), "--labels", str(inputs.labels), "--out", str(tmp_path / "o"),
                      "--second", str(copy)]) == 0
    documented = {}
    for line in _between("## Review report", "## Exclusions").splitlines():
        cells = line.split("|")[1:-1]
        names = re.findall(r"`(review_[a-z]+)`", cells[0]) if cells else []
        for name in names:
            documented[name] = [c.strip() for c in cells[1].split(",")]
    written = {path.stem: path.read_text(encoding="utf-8").split("\n")[0].split(",")
               for path in (tmp_path / "o").glob("*.csv")}
    assert written == documented


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert list(tmp_path.iterdir()) == []


def test_the_review_modules_have_examples():
    assert sum(doctest.testmod(importlib.import_module(name)).attempted for name in MODULES) >= 25


# ---------------------------------------------------------------- malformed files

HEADER = {"kind": "header", "review_version": "1", "created_by": "seam.py review sample", "seed": 1, "n": 1,
          "positives_share": 0.3, "design": "d", "benchmark_sha256": "0" * 64, "requests": None,
          "labels": [{"path": "l.jsonl", "sha256": "1" * 64}],
          "traces": [{"path": "t.jsonl", "sha256": "2" * 64, "model": "m"}],
          "strata": [{"model": "m", "verdict": "absorbed", "genre": "code", "condition": "newline",
                      "population": 3, "drawn": 1}]}
CASE = {"kind": "case", "case": 1, "id": "humaneval-000/newline", "model": "m", "cluster": "humaneval-000",
        "condition": "newline", "genre": "code", "source": "humaneval"}
ANSWER = {"kind": "answer", "case": 1, "id": "humaneval-000/newline", "model": "m", "reviewer": "ada",
          "verdict": "absorbed", "absorption_kind": None, "note": "", "answered_at": "2026-01-01T00:00:00.000Z"}


def _write(path: Path, *rows) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_well_formed_file_reads_and_writes_back_the_same_rows(tmp_path):
    path = _write(tmp_path / "r.jsonl", HEADER, CASE, ANSWER, {**ANSWER, "verdict": "unsure"})
    read = store.read(path)
    assert read.header.to_row() == HEADER and read.cases[0].to_row() == CASE
    assert [a.to_row() for a in read.answers] == [ANSWER, {**ANSWER, "verdict": "unsure"}]
    assert read.latest()[1].verdict == "unsure" and read.reviewer == "ada" and read.first_unanswered() is None


@pytest.mark.parametrize(("rows", "message"), [
    ((CASE, HEADER), r"r.jsonl:1: a review file begins with its header row"),
    ((HEADER, CASE, HEADER), r"r.jsonl:3: a second header row"),
    ((HEADER, {**CASE, "case": 2}), r"r.jsonl:2: case number 2, expected 1"),
    ((HEADER, CASE, {**ANSWER, "case": 2}), r"r.jsonl:3: an answer to case 2, but the file has 1 cases"),
    ((HEADER, CASE, {**ANSWER, "id": "humaneval-000/blank"}), r"r.jsonl:3: an answer to case 1 names m"),
    ((HEADER, CASE, ANSWER, {**ANSWER, "reviewer": "bob"}), r"r.jsonl:4: reviewer 'bob', but earlier answers"),
    ((HEADER, CASE, {**ANSWER, "verdict": "maybe"}), r"r.jsonl:3: field 'verdict' is 'maybe', expected one of"),
    ((HEADER, CASE, {**ANSWER, "tier": "witness"}), r"r.jsonl:3: unknown field\(s\) 'tier'"),
    ((HEADER, {**CASE, "absorbed": True}), r"r.jsonl:2: unknown field\(s\) 'absorbed'"),
    ((HEADER, CASE, ANSWER, CASE), r"r.jsonl:4: a case row after the answers began"),
    (({**HEADER, "review_version": "2"},), r"r.jsonl:1: review_version '2', expected '1'"),
    ((HEADER,), r"r.jsonl: no case rows"),
    ((HEADER, {**CASE, "kind": "note"}), r"r.jsonl:2: field 'kind' is 'note'"),
])
def test_a_malformed_review_file_is_one_line_naming_file_and_line(tmp_path, rows, message):
    path = _write(tmp_path / "r.jsonl", *rows)
    with pytest.raises(UserError, match=message):
        store.read(path)
