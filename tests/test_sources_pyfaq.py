"""Python FAQ reader: entry splitting, hidden reST blocks, bounds, determinism, bad input."""

from __future__ import annotations

import dataclasses
import re

import pytest

from benchmark.sources import locate, pyfaq
from benchmark.sources.locate import MissingSource
from common.errors import UserError

# The tests that read the unpacked python3.11-doc (skipped without it, except on CI: tests/conftest.py).
needs_python_doc = pytest.mark.debian_source(pyfaq.PACKAGE, f"{pyfaq.FAQ_DIR}/{pyfaq.FAQ_PAGES[0]}.rst.txt")


@pytest.fixture(scope="module")
def items():
    return pyfaq.candidates()


@pytest.fixture(scope="module")
def by_id(items):
    return {item.item_id: item for item in items}


def _page_text(page):
    path, _ = locate.debian_file(pyfaq.PACKAGE, f"{pyfaq.FAQ_DIR}/{page}.rst.txt")
    return path.read_text(encoding="utf-8")


@needs_python_doc
def test_enough_candidates_within_bounds(items):
    assert len(items) >= 100
    for item in items:
        assert len(item.artifact.split("\n")) <= pyfaq.MAX_LINES, item.item_id
        assert len(item.artifact.split()) >= pyfaq.MIN_WORDS, item.item_id


@needs_python_doc
def test_deterministic_and_unique(items):
    again = pyfaq.candidates()
    assert [dataclasses.asdict(i) for i in again] == [dataclasses.asdict(i) for i in items]
    ids = [i.item_id for i in items]
    assert len(set(ids)) == len(ids)
    pages = [i.split(":")[0] for i in ids]
    order = [f"faq/{p}.rst" for p in pyfaq.FAQ_PAGES]
    assert pages == sorted(pages, key=order.index), "pages in FAQ_PAGES order"


@needs_python_doc
def test_labels_licence_and_one_provenance_per_page(items):
    for item in items:
        assert (item.source, item.license, item.partition, item.genre, item.register) == (
            "pyfaq", "PSF-2.0", "permissive", "prose", "technical")
        assert item.reference is None and item.tests is None
        page = item.item_id.split(":")[0][len("faq/"):-len(".rst")]
        assert item.provenance.path == f"{pyfaq.FAQ_DIR}/{page}.rst.txt"
        path, _ = locate.debian_file(pyfaq.PACKAGE, item.provenance.path)
        assert item.provenance.sha256 == locate.sha256_file(path)
        assert item.provenance.registry == "debian" and item.provenance.version
    assert len({i.provenance.sha256 for i in items}) == len({i.provenance.path for i in items}) >= 6


@needs_python_doc
def test_every_question_of_a_page_is_found():
    for page in pyfaq.FAQ_PAGES:
        lines = _page_text(page).split("\n")
        dashed = [lines[i - 1] for i in range(1, len(lines))
                  if re.fullmatch(r"-{3,}", lines[i]) and lines[i - 1] and not lines[i - 1][0].isspace()]
        assert [e.question for e in pyfaq.read_entries(page, _page_text(page))] == dashed


@needs_python_doc
def test_hidden_blocks_never_reach_an_artifact(items):
    for item in items:
        for line in item.artifact.split("\n"):
            stripped = line.strip()
            assert not stripped.startswith((".. _", ".. XXX", ".. index::", ".. only::", ".. testsetup::",
                                            ".. contents::", ".. highlight::")), (item.item_id, line)
        assert item.artifact == item.artifact.strip("\n").rstrip()
        assert "\n\n\n" not in item.artifact


@needs_python_doc
def test_commented_out_code_and_question_are_dropped(by_id):
    entries = {e.question: e for e in pyfaq.read_entries("library", _page_text("library"))}
    keypress = pyfaq.clean_answer(entries["How do I get a single keypress at a time?"].answer_lines)
    assert "termios" in "\n".join(entries["How do I get a single keypress at a time?"].answer_lines)
    assert "termios" not in keypress.text and "curses" in keypress.text
    pipe = by_id["faq/library.rst:I can't seem to use os.read() on a pipe created with os.popen(); why?"]
    assert "How do I run a subprocess with pipes" not in pipe.artifact
    assert pipe.transformations[0].startswith('dropped hidden reST block ".. XXX update to use subprocess')


@needs_python_doc
def test_shown_directives_and_markup_stay(by_id):
    item = by_id["faq/programming.rst:How do I create a multidimensional list?"]
    assert ".. doctest::" in item.artifact and ":func:" not in item.artifact
    assert item.artifact.count("A = [[None] * 2] * 3") == 1  # the hidden testsetup copy is gone
    assert item.transformations.count('dropped hidden reST block ".. testsetup::" (3 lines)') == 2
    assert "``*``" in item.artifact


@needs_python_doc
def test_instruction_carries_the_plain_question(by_id):
    item = by_id["faq/programming.rst:Why does the result of ``id()`` appear to be not unique?"]
    assert '"Why does the result of id() appear to be not unique?"' in item.instruction
    for item in by_id.values():
        question = pyfaq.plain_question(item.item_id.split(":", 1)[1])
        assert item.instruction in [t.format(question=question) for t in pyfaq.INSTRUCTIONS]
        assert item.instruction.endswith((".", ":")) and "`" not in item.instruction
        assert item.instruction.count('"') == 2
    assert len({i.instruction.split('"')[0] for i in by_id.values()}) == len(pyfaq.INSTRUCTIONS)


def test_plain_question():
    assert pyfaq.plain_question('Is there an equivalent of C\'s "?:" ternary operator?') == (
        "Is there an equivalent of C's '?:' ternary operator?")
    assert pyfaq.plain_question("When can I rely on identity tests with the *is* operator?") == (
        "When can I rely on identity tests with the is operator?")
    assert pyfaq.plain_question("Is a ``*.pyd`` file the same as a DLL?") == (
        "Is a *.pyd file the same as a DLL?")
    assert pyfaq.plain_question("What does :func:`len` do?") == "What does len do?"


# --- parsing on text written for the test --------------------------------------------------------

SAMPLE = """\
===========
Some FAQ
===========

.. only:: html

   .. contents::

General
=======

How do I do X?
--------------

First paragraph with :func:`x`.

.. XXX this is a comment

   Commented-out code::

      secret()

   How do I hide this?
   -------------------

.. code-block:: python

   shown()

.. _label-for-next:

Why Y?
------

Because.
"""


def test_read_entries_and_clean_answer():
    entries = pyfaq.read_entries("sample", SAMPLE)
    assert [(e.question, e.lineno) for e in entries] == [("How do I do X?", 12), ("Why Y?", 32)]
    answer = pyfaq.clean_answer(entries[0].answer_lines)
    assert answer.text == ("First paragraph with :func:`x`.\n\n"
                           ".. code-block:: python\n\n   shown()")
    assert answer.transformations == ('dropped hidden reST block ".. XXX this is a comment" (8 lines)',
                                      'dropped hidden reST block ".. _label-for-next:"',
                                      "collapsed runs of blank lines")
    assert pyfaq.clean_answer(entries[1].answer_lines) == pyfaq.Answer("Because.", ())


def _fake_pages(monkeypatch, tmp_path, texts):
    paths = {}
    for page, text in texts.items():
        path = tmp_path / f"{page}.rst.txt"
        path.write_text(text, encoding="utf-8")
        paths[f"{pyfaq.FAQ_DIR}/{page}.rst.txt"] = path

    def fake(package, relpath):
        path = paths[relpath]
        return path, locate.Provenance("debian", package, "0", relpath, locate.sha256_file(path))
    monkeypatch.setattr(locate, "debian_file", fake)
    monkeypatch.setattr(pyfaq, "FAQ_PAGES", tuple(texts))
    return paths


def test_bounds_on_a_fake_page(monkeypatch, tmp_path):
    long_words = " ".join(["word"] * 50)
    text = ("Short?\n------\n\nYes.\n\n"
            "Long enough?\n------------\n\n" + long_words + "\n\n"
            "Too long?\n---------\n\n" + "\n".join([long_words] * 41) + "\n")
    _fake_pages(monkeypatch, tmp_path, {"fake": text})
    assert [i.item_id for i in pyfaq.candidates()] == ["faq/fake.rst:Long enough?"]


def test_page_without_questions_is_an_error(monkeypatch, tmp_path):
    paths = _fake_pages(monkeypatch, tmp_path, {"empty": "Title\n=====\n\nNo questions here.\n"})
    with pytest.raises(UserError, match=rf"{next(iter(paths.values()))}: expected FAQ questions"):
        pyfaq.candidates()


def test_duplicate_question_names_file_and_line(monkeypatch, tmp_path):
    body = " ".join(["word"] * 50)
    text = f"Same?\n-----\n\n{body}\n\nSame?\n-----\n\n{body}\n"
    paths = _fake_pages(monkeypatch, tmp_path, {"dup": text})
    with pytest.raises(UserError, match=rf"{next(iter(paths.values()))}:6: question 'Same\?' appears twice"):
        pyfaq.candidates()


def test_missing_package_names_the_fetch_command(monkeypatch, tmp_path):
    monkeypatch.setenv("SEAM_SOURCES", str(tmp_path))
    monkeypatch.setattr(pyfaq, "FAQ_DIR", str(tmp_path / "no-such-system-dir"))
    with pytest.raises(MissingSource, match="bash scripts/fetch_debian_sources.sh"):
        pyfaq.candidates()
