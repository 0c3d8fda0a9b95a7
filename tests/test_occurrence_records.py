"""The occurrence files' rows: docs/FORMATS.md lists exactly their fields, and a malformed file is one
clear line naming file, line and field (a field that could carry text is refused, not ignored)."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest
from support.occurrencedata import write_corpus

import occurrence
import seam
from common.errors import UserError
from occurrence import SCREEN_VERSION, store
from occurrence.records import (
    Answer,
    Candidate,
    Case,
    CorpusRef,
    Judged,
    JudgeHeader,
    SampleHeader,
    ScreenHeader,
    Truncated,
)

ROOT = Path(__file__).resolve().parents[1]
FORMATS = (ROOT / "docs" / "FORMATS.md").read_text(encoding="utf-8")


def _between(start: str, end: str | None) -> str:
    first = FORMATS.index(start)
    return FORMATS[first:FORMATS.index(end, first + len(start)) if end else None]


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


def test_formats_md_lists_exactly_the_fields_of_each_occurrence_row():
    header, corpus, candidate = _tables(_between("### Candidates (", "### Judged ("))
    assert header == _fields(ScreenHeader) and corpus == _fields(CorpusRef) and candidate == _fields(Candidate)
    assert "`line` (where" in _between("### Candidates (", "### Judged (") and _fields(Truncated) == {
        "line", "offset", "bytes"}
    assert _tables(_between("### Judged (", "### Samples (")) == [_fields(JudgeHeader), _fields(Judged)]
    assert _tables(_between("### Samples (", "### Occurrence report")) == [_fields(SampleHeader), _fields(Case),
                                                                            _fields(Answer)]


def test_formats_md_lists_the_report_csv_columns(tmp_path):
    corpus = write_corpus(tmp_path / "c.json", "sharegpt")
    out = tmp_path / "c.candidates.jsonl"
    assert seam.main(["occurrence", "screen", str(corpus), "--format", "sharegpt", "--out", str(out)]) == 0
    assert seam.main(["occurrence", "report", str(out), "--out", str(tmp_path / "r")]) == 0
    documented = {}
    for line in _between("### Occurrence report", None).splitlines():
        cells = line.split("|")[1:-1]
        for name in re.findall(r"`(occurrence_[a-z]+)`", cells[0]) if cells else []:
            documented[name] = [c.strip() for c in cells[1].split(",")]
            if "`--second`" in cells[0]:  # written only with a second reader (tests/test_table_specs.py has it)
                del documented[name]
    written = {path.stem: path.read_text(encoding="utf-8").split("\n")[0].split(",")
               for path in (tmp_path / "r").glob("*.csv")}
    assert written == documented


@pytest.fixture
def candidates(tmp_path) -> Path:
    corpus = write_corpus(tmp_path / "c.json", "sharegpt")
    out = tmp_path / "c.candidates.jsonl"
    assert seam.main(["occurrence", "screen", str(corpus), "--format", "sharegpt", "--out", str(out)]) == 0
    return out


def _rewrite(path: Path, line: int, change) -> None:
    rows = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]
    change(rows[line - 1])
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.mark.parametrize(("line", "change", "message"), [
    (2, lambda row: row.update(text="a message"), ":2: unknown field(s) 'text' in a candidate row"),
    (2, lambda row: row.update(message_sha256="abc"), ":2: field 'message_sha256' is 'abc', expected a SHA-256"),
    (2, lambda row: row.update(features=["remark_said_thanks"]), ":2: field 'features' holds 'remark_said_thanks'"),
    (2, lambda row: row.update(remark_start=0), ":2: the offsets are not in order"),
    (2, lambda row: row.update(artifact_kind="poem"), ":2: field 'artifact_kind' is 'poem', expected one of"),
    (2, lambda row: row.update(kind="case"), ":2: a row of kind 'case', expected 'candidate'"),
    (6, lambda row: row.update(repeat=1), ":6: repeat 1, but this is occurrence 2 of its message_sha256"),
    (1, lambda row: row.update(candidates=9), ": the header counts 9 candidates (4 unique), the file holds 5"),
    (1, lambda row: row.update(screen_version="0"), f":1: screen_version '0', expected '{SCREEN_VERSION}'"),
    (1, lambda row: row.update(created_by="seam.py occurrence sample"), ":1: not a candidates file"),
    (1, lambda row: row["corpora"][0].update(note="x"), ":1: corpus 0: unknown field(s) 'note'"),
    (1, lambda row: row["corpora"][0].update(truncated={"line": 0, "offset": 1, "bytes": 2}),
     ":1: corpus 0: truncated: field 'line' is 0, expected a whole number of at least 1"),
])
def test_a_malformed_candidates_file_is_one_line(candidates, line, change, message):
    _rewrite(candidates, line, change)
    with pytest.raises(UserError) as caught:
        store.read_candidates(candidates)
    assert str(caught.value).startswith(str(candidates) + message)


def test_a_torn_candidates_file_is_refused(candidates):
    with open(candidates, "ab") as f:
        f.write(b'{"kind":"cand')
    with pytest.raises(UserError, match=r":7: the last line is torn \(13 bytes"):
        store.read_candidates(candidates)


def test_a_sample_answer_must_name_its_case_and_one_reviewer(candidates, tmp_path):
    sample = tmp_path / "s.jsonl"
    assert seam.main(["occurrence", "sample", str(candidates), "--n", "2", "--seed", "1", "--out", str(sample)]) == 0
    first = json.loads(sample.read_text(encoding="utf-8").splitlines()[1])
    answer = {"kind": "answer", "case": 1, "message_sha256": first["message_sha256"], "reviewer": "ada",
              "answer": "yes", "note": "", "answered_at": "2026-01-01T00:00:00.000Z"}
    with open(sample, "a", encoding="utf-8") as f:
        f.write(json.dumps(answer) + "\n")
        f.write(json.dumps({**answer, "reviewer": "bob"}) + "\n")
    with pytest.raises(UserError, match=r":5: reviewer 'bob', but earlier answers are by 'ada'"):
        store.read_sample(sample)
    lines = sample.read_text(encoding="utf-8").splitlines()
    sample.write_text("\n".join(lines[:3] + [json.dumps({**answer, "case": 2})]) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r":4: an answer to case 2 names message [0-9a-f]{12}…, but case 2 is "):
        store.read_sample(sample)
    sample.write_text("\n".join(lines[:3] + [json.dumps({**answer, "answer": "maybe"})]) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r":4: field 'answer' is 'maybe', expected one of yes, no, unsure"):
        store.read_sample(sample)


MODULES = sorted(info.name for info in pkgutil.iter_modules(occurrence.__path__, "occurrence."))


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_hold(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that wrote a file would leave it here, and fail the last check
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert list(tmp_path.iterdir()) == []
