"""ACL abstracts reader: licence by year, footnote cleaning, bounds, determinism, bad input."""

from __future__ import annotations

import dataclasses
import json
from importlib import metadata

import pytest

from benchmark.sources import aclsum, locate
from benchmark.sources.locate import MissingSource
from common.errors import UserError


@pytest.fixture(scope="module")
def items():
    return aclsum.candidates()


@pytest.mark.parametrize("paper_id, year", [
    ("2020.acl-main.1", 2020), ("2021.naacl-main.470", 2021), ("2022.acl-long.286", 2022),
    ("P16-1001", 2016), ("D15-1205", 2015), ("D07-1016", 2007), ("W96-0206", 1996), ("E99-1005", 1999),
    ("P93-1015", 1993), ("N01-1024", 2001), ("C65-1001", 1965),
])
def test_year_from_both_id_styles(paper_id, year):
    assert aclsum.paper_year(paper_id) == year


@pytest.mark.parametrize("paper_id", ["2020", "acl-main.1", "P16-100", "p16-1001", "2020.acl-main", ""])
def test_malformed_ids_are_refused(paper_id):
    with pytest.raises(ValueError, match="not an ACL Anthology id"):
        aclsum.paper_year(paper_id)


def test_licence_switches_in_2016():
    assert aclsum.licence_for("D15-1311") == aclsum.Licence(2015, "CC-BY-NC-SA-3.0", "noncommercial")
    assert aclsum.licence_for("D16-1135") == aclsum.Licence(2016, "CC-BY-4.0", "permissive")
    assert aclsum.licence_for("2020.acl-main.47").partition == "permissive"
    assert aclsum.licence_for("W99-0615").partition == "noncommercial"


def test_clean_abstract_rules():
    text, done = aclsum.clean_abstract("First  sentence.\nSecond one is here. 1 ")
    assert text == "First sentence. Second one is here."
    assert done == ("normalised white space to single spaces", 'removed the trailing footnote marker "1"')
    text, done = aclsum.clean_abstract("Results in terms of quality and diversity 1 .")
    assert text == "Results in terms of quality and diversity." and len(done) == 1
    assert aclsum.clean_abstract("We gain 10 F 1 points on 5 languages.") == (
        "We gain 10 F 1 points on 5 languages.", ())
    for leaked in ("We release code. 1 Nuclear reactors produce waste.", "A system. * Work done at X.",
                   "A result. \u2020 Contact us."):
        assert aclsum.clean_abstract(leaked) == (None, ())


def test_enough_candidates_within_bounds(items):
    assert len(items) >= 150
    for item in items:
        assert aclsum.MIN_WORDS <= len(item.artifact.split()) <= aclsum.MAX_WORDS, item.item_id
        assert "\n" not in item.artifact and "  " not in item.artifact
        assert item.artifact == item.artifact.strip()
        assert not item.artifact.endswith((" 1", " 1 ."))


def test_deterministic_unique_and_sorted(items):
    again = aclsum.candidates()
    assert [dataclasses.asdict(i) for i in again] == [dataclasses.asdict(i) for i in items]
    ids = [item.item_id for item in items]
    assert len(set(ids)) == len(ids) and ids == sorted(ids)


def test_both_partitions_follow_the_year_rule(items):
    partitions = {item.partition for item in items}
    assert partitions == {"permissive", "noncommercial"}
    for item in items:
        year = aclsum.paper_year(item.item_id)
        expected = ("CC-BY-4.0", "permissive") if year >= 2016 else ("CC-BY-NC-SA-3.0", "noncommercial")
        assert (item.license, item.partition) == expected, item.item_id
        assert (item.source, item.genre, item.register) == ("aclsum", "prose", "scientific")
        assert item.reference is None


def test_each_item_is_its_own_file_and_matches_it(items):
    version = metadata.version("aclsum")
    for item in items[::11]:
        path, provenance = locate.pypi_file("aclsum", f"{aclsum.PAPER_DIR}/{item.item_id}.json")
        assert item.provenance == provenance and provenance.version == version
        original = json.loads(path.read_text(encoding="utf-8"))["abstract"]
        assert " ".join(original.split()).startswith(item.artifact[:-1])  # at most a footnote marker dropped
        assert (item.artifact != original) == bool(item.transformations)
    assert len({item.provenance.sha256 for item in items}) == len(items)


def test_known_footnote_leaks_are_excluded(items):
    ids = {item.item_id for item in items}
    assert "D15-1205" in ids and "2021.acl-long.420" not in ids and "P19-1252" not in ids
    cleaned = next(item for item in items if item.item_id == "D15-1205")
    assert cleaned.artifact.endswith("available for general use.")


def test_instructions(items):
    assert {item.instruction for item in items} == set(aclsum.INSTRUCTIONS)
    assert all(i.endswith((".", ":")) and "comment" not in i.lower() for i in aclsum.INSTRUCTIONS)


def test_malformed_paper_file_names_the_file(tmp_path):
    bad = tmp_path / "P16-1001.json"
    bad.write_text('{"abstract": ', encoding="utf-8")
    with pytest.raises(UserError, match="P16-1001.json: cannot read the paper JSON"):
        aclsum.read_abstract(bad)
    bad.write_text('{"abstract": null}', encoding="utf-8")
    with pytest.raises(UserError, match="P16-1001.json: expected an S2ORC paper object"):
        aclsum.read_abstract(bad)


def test_missing_package_names_the_install_command(monkeypatch):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(locate.metadata, "distribution", not_installed)
    with pytest.raises(MissingSource, match=r"'aclsum'.*pip install --no-deps -r requirements-build.txt"):
        aclsum.candidates()
