"""fissix reader: pair parsing, layout, bounds, determinism, licence, bad input."""

from __future__ import annotations

import ast
import dataclasses
import textwrap
from importlib import metadata

import pytest

from benchmark.sources import fissix, locate
from benchmark.sources.locate import MissingSource
from common.errors import UserError


@pytest.fixture(scope="module")
def items():
    return fissix.candidates()


@pytest.fixture(scope="module")
def by_id(items):
    return {item.item_id: item for item in items}


def test_enough_candidates_within_bounds(items):
    assert len(items) >= 50
    for item in items:
        assert fissix.nonblank_lines(item.artifact) >= fissix.MIN_NONBLANK_LINES, item.item_id
        assert len(item.artifact.split("\n")) <= fissix.MAX_LINES, item.item_id


def test_deterministic_unique_and_deduplicated(items):
    again = fissix.candidates()
    assert [dataclasses.asdict(i) for i in again] == [dataclasses.asdict(i) for i in items]
    ids = [i.item_id for i in items]
    assert len(set(ids)) == len(ids)
    artifacts = [i.artifact for i in items]
    assert len(set(artifacts)) == len(artifacts)
    assert all(i.startswith("test_fixers.py:Test_") for i in ids)


def test_labels_licence_and_provenance(items):
    path, _ = locate.pypi_file("fissix", fissix.DATA_PATH)
    for item in items:
        assert (item.source, item.license, item.partition, item.genre, item.register) == (
            "fissix", "PSF-2.0", "permissive", "code", "code")
        assert item.provenance.package == "fissix" and item.provenance.version == metadata.version("fissix")
        assert item.provenance.sha256 == locate.sha256_file(path)
        assert item.tests is None


def test_artifacts_and_instructions_are_pasteable(items):
    for item in items:
        assert item.artifact == item.artifact.rstrip() and item.artifact.split("\n")[0].strip()
        assert item.artifact == textwrap.dedent(item.artifact), item.item_id
        assert item.instruction in fissix.INSTRUCTIONS
        assert item.reference and item.reference != item.artifact
    assert len({i.instruction for i in items}) > 1, "templates are spread over the items"


def test_references_are_python3(items):
    for item in items:
        ast.parse(item.reference)  # raises on Python 2 syntax left over


def test_pairs_read_the_right_way_round(by_id):
    item = by_id["test_fixers.py:Test_except.test_simple"]
    assert item.artifact == "try:\n    pass\nexcept Foo, e:\n    pass"
    assert item.reference == "try:\n    pass\nexcept Foo as e:\n    pass"
    several = [i for i in by_id if i.startswith("test_fixers.py:Test_idioms.test_sort_list_call#")]
    assert len(several) >= 5


def test_snippets_starting_on_their_quotes_are_reindented(by_id):
    item = by_id["test_fixers.py:Test_raise.test_tb_2"]
    assert item.artifact == "def foo():\n    a = 5\n    raise Exception, 5, 6\n    b = 6"
    assert item.reference == "def foo():\n    a = 5\n    raise Exception(5).with_traceback(6)\n    b = 6"
    assert item.transformations == (fissix.REINDENTED,)
    assert by_id["test_fixers.py:Test_except.test_simple"].transformations == ()


# --- parsing and layout on text written for the test -------------------------------------------

SAMPLE = '''
class Test_x(FixerTestCase):
    def test_one(self):
        b = """
            if x:
                print 1
                print 2"""
        a = """
            if x:
                print(1)
                print(2)"""
        self.check(b, a)

    def test_reversed(self):
        a = """apply(f, args)"""
        b = """f(*args)"""
        self.check(a, b)

    def test_many(self):
        b = """x = 1"""
        a = """x = 2"""
        self.check(b, a)
        b = """y = 1"""
        self.warns(b, a, "careful")
        for n in range(3):
            b = "z = %d" % n
            self.check(b, a)
        self.check("literal", "strings")
        self.unchanged(b)
'''


def test_read_pairs_follows_the_check_calls():
    pairs = fissix.read_pairs(SAMPLE)
    got = [(p.method, p.position, p.before, p.after) for p in pairs]
    assert got[0][:2] == ("test_one", 1) and "print 1" in got[0][2] and "print(1)" in got[0][3]
    assert got[1] == ("test_reversed", 1, "apply(f, args)", "f(*args)")
    assert got[2:] == [("test_many", 1, "x = 1", "x = 2"), ("test_many", 2, "y = 1", "x = 2")]
    assert fissix.item_id(pairs[2], 2) == "test_fixers.py:Test_x.test_many#1"
    assert fissix.item_id(pairs[0], 1) == "test_fixers.py:Test_x.test_one"


def test_layout_rules():
    assert fissix.layout("\n    if x:\n        pass\n    ").text == "if x:\n    pass"
    opener = fissix.layout("def foo():\n                a = 5\n                b = 6")
    assert opener == fissix.Snippet("def foo():\n    a = 5\n    b = 6", True)
    bracket = fissix.layout("set(\n                   [1, 2]\n               )\n            ")
    assert bracket == fissix.Snippet("set(\n    [1, 2]\n)", True)
    already = fissix.layout("for i in xrange(10):\n    j=i")
    assert already == fissix.Snippet("for i in xrange(10):\n    j=i", False)


def _fake_file(monkeypatch, tmp_path, text):
    path = tmp_path / "test_fixers.py"
    path.write_text(text, encoding="utf-8")
    provenance = locate.Provenance("pypi", "fissix", "0", fissix.DATA_PATH, locate.sha256_file(path))
    monkeypatch.setattr(locate, "pypi_file", lambda package, relpath: (path, provenance))
    return path


def test_identical_befores_are_kept_once_and_short_ones_dropped(monkeypatch, tmp_path):
    method = '''
    def test_{n}(self):
        b = """
            if x:
                print 1
                print 2"""
        a = """
            if x:
                print({n})"""
        self.check(b, a)
'''
    text = "class Test_y(FixerTestCase):\n" + method.format(n=1) + method.format(n=2) + SAMPLE
    _fake_file(monkeypatch, tmp_path, text)
    items = fissix.candidates()
    assert [i.item_id for i in items] == ["test_fixers.py:Test_y.test_1"]
    assert items[0].reference == "if x:\n    print(1)"


def test_unparsable_file_names_file_and_line(monkeypatch, tmp_path):
    path = _fake_file(monkeypatch, tmp_path, "class Test_x:\n    def test(self)\n        pass\n")
    with pytest.raises(UserError, match=rf"{path}:2: expected fissix's test_fixers.py"):
        fissix.candidates()


def test_missing_package_names_the_install_command(monkeypatch):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(locate.metadata, "distribution", not_installed)
    with pytest.raises(MissingSource, match="pip install --no-deps -r requirements-build.txt"):
        fissix.candidates()
