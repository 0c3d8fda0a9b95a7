"""Austen reader: the real lazy-load database, paragraph rules, bounds, determinism, missing package."""

from __future__ import annotations

import collections
import dataclasses
from pathlib import Path

import pytest

from benchmark.sources import austen, locate, rdata
from benchmark.sources.locate import MissingSource

# The tests that read the unpacked r-cran-janeaustenr (skipped without it, except on CI: tests/conftest.py).
needs_janeaustenr = pytest.mark.debian_source(austen.PACKAGE, austen.DATA_PATH)


@pytest.fixture(scope="module")
def items():
    return austen.candidates()


@pytest.fixture(scope="module")
def novels():
    novels, _, _ = austen.read_novels()
    return dict(novels)


@needs_janeaustenr
def test_the_database_decodes_to_six_novels(novels):
    assert tuple(novels) == austen.NOVELS
    pride = novels["prideprejudice"]
    assert pride[0] == "PRIDE AND PREJUDICE"
    assert "It is a truth universally acknowledged, that a single man in possession" in pride[:20]
    assert all(isinstance(line, str) for lines in novels.values() for line in lines)
    assert sum(len(lines) for lines in novels.values()) > 70_000


@needs_janeaustenr
def test_enough_candidates_within_bounds(items):
    assert len(items) >= 2000
    per_novel = collections.Counter(item.item_id.split(":")[0] for item in items)
    assert set(per_novel) == set(austen.NOVELS) and min(per_novel.values()) >= 100
    for item in items:
        assert austen.MIN_WORDS <= len(item.artifact.split()) <= austen.MAX_WORDS, item.item_id
        assert item.artifact == item.artifact.strip() and "\n\n" not in item.artifact


@needs_janeaustenr
def test_deterministic_unique_and_in_documented_order(items):
    again = austen.candidates()
    assert [dataclasses.asdict(i) for i in again] == [dataclasses.asdict(i) for i in items]
    ids = [item.item_id for item in items]
    assert len(set(ids)) == len(ids)
    keys = [(austen.NOVELS.index(i.split(":")[0]), int(i.split("para-")[1])) for i in ids]
    assert keys == sorted(keys)


@needs_janeaustenr
def test_artifact_is_the_source_paragraph_verbatim(items, novels):
    """Hard wraps kept: the artifact's lines are consecutive source lines between blank lines."""
    for item in items[::97]:
        novel, number = item.item_id.split(":para-")
        lines = novels[novel]
        paragraph_lines = item.artifact.split("\n")
        starts = [k for k in range(len(lines)) if lines[k:k + len(paragraph_lines)] == tuple(paragraph_lines)]
        assert len(starts) == 1, item.item_id
        start, end = starts[0], starts[0] + len(paragraph_lines)
        assert (start == 0 or not lines[start - 1].strip()) and (end == len(lines) or not lines[end].strip())
        numbered = austen.paragraphs(novel, lines)[int(number)]
        assert numbered.text == item.artifact
    assert max(len(line) for item in items for line in item.artifact.split("\n")) <= 80
    assert sum(item.artifact.count("\n") for item in items) > 10 * len(items)


@needs_janeaustenr
def test_labels_licence_provenance_and_instructions(items):
    _, data_provenance = locate.debian_file(austen.PACKAGE, austen.DATA_PATH)
    _, index_provenance = locate.debian_file(austen.PACKAGE, austen.INDEX_PATH)
    for item in items:
        assert (item.source, item.license, item.partition, item.genre, item.register) == (
            "austen", "LicenseRef-public-domain", "permissive", "prose", "literary")
        assert item.provenance == data_provenance and item.extra_provenance == (index_provenance,)
        assert item.reference is None and item.transformations == () and item.tests is None
        assert item.instruction in austen.INSTRUCTIONS and item.instruction.endswith((".", ":"))
    assert {item.instruction for item in items} == set(austen.INSTRUCTIONS)
    assert data_provenance.path.endswith("Rdata.rdb") and index_provenance.path.endswith("Rdata.rdx")


@needs_janeaustenr
def test_no_headings_indented_letters_or_editorial_marks(items):
    for item in items:
        first = item.artifact.split("\n", 1)[0]
        assert not first.upper().startswith(("CHAPTER", "VOLUME")), item.item_id
        assert not any(line[:1].isspace() for line in item.artifact.split("\n")), item.item_id
        assert "*" not in item.artifact and "[" not in item.artifact, item.item_id


def test_paragraph_rules_on_made_up_lines():
    body = ["word " * 12] * 8  # 96 words over 8 lines
    lines = ("CHAPTER IV", "", *body, "   ", "THE HEADING OF A LONG BLOCK " + "WORD " * 90, "",
             "     " + "indented " * 90, "", "short line", "", *(line + "*" for line in body))
    found = austen.paragraphs("novel", lines)
    assert [p.number for p in found] == [0, 1, 2, 3, 4, 5]
    assert found[1].lines == tuple(body)  # the line of spaces ended the paragraph
    problems = [austen.paragraph_problem(p) for p in found]
    assert problems[0].startswith("2 words") and problems[1] is None
    assert problems[2] == "a heading" and problems[3].startswith("indented")
    assert problems[4].startswith("2 words") and problems[5].startswith("holds an editorial mark")
    assert found[1].item_id == "novel:para-0001"


def test_missing_package_names_the_fetch_command(monkeypatch, tmp_path):
    if Path(austen.DATA_PATH).is_file():
        pytest.skip("r-cran-janeaustenr is installed system-wide here")
    monkeypatch.setattr(locate, "sources_dir", lambda: tmp_path)
    with pytest.raises(MissingSource, match="bash scripts/fetch_debian_sources.sh"):
        austen.candidates()


@needs_janeaustenr
def test_corrupt_database_is_a_clear_error(monkeypatch, tmp_path):
    unpacked = tmp_path / "debian" / austen.PACKAGE
    real_index, _ = locate.debian_file(austen.PACKAGE, austen.INDEX_PATH)
    for path, content in ((austen.INDEX_PATH, real_index.read_bytes()), (austen.DATA_PATH, b"\x00" * 64)):
        target = unpacked / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    (unpacked / "VERSION").write_text("test\n")
    monkeypatch.setattr(locate, "sources_dir", lambda: tmp_path)
    with pytest.raises(rdata.RDataError, match=r"Rdata\.rdb"):
        austen.candidates()
