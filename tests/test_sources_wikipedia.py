"""Wikipedia reader: markup stripping, sentence rules, typo injection, the real candidates, bad input."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from benchmark.sources import locate, wikipedia, wikitext
from benchmark.sources.locate import MissingSource
from benchmark.sources.wikitext import HOLE
from common.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def items():
    return wikipedia.candidates()


@pytest.fixture(scope="module")
def articles():
    path, _ = locate.pypi_file(wikipedia.DUMP_PACKAGE, wikipedia.DUMP_PATH)
    return wikipedia.read_articles(path)


# --- markup stripping ------------------------------------------------------------------------

def test_file_links_with_nested_links_and_captions_vanish():
    text = ("[[File:Dog.jpg|thumb|upright|alt=A [[dog]] sitting|The [[dog|hound]] in [[1900]]]]\n"
            "The '''dog''' is a [[Canis|canine]] animal.<ref name=a>{{cite web|url=http://x.org}}</ref>"
            "<ref name=b/> It barks.<!-- hidden [[note]] -->\n"
            "[[Image:Cat.png|left|200px|A [[cat]]]] It purrs.")
    # An image line inside a paragraph does not break it (it floats beside the text when rendered).
    assert wikitext.wikitext_paragraphs(text) == ["The dog is a canine animal. It barks. It purrs."]
    spanning = ("First paragraph.\n\n[[File:Map.svg|thumb|Situation in 2016.\n"
                "{{legend|#eee|Held by [[A|B]]}}\n{{legend|#bbb|Held by [[C]]}}]]\n"
                "Second paragraph.\n{{Main|X}} Third line.")
    assert wikitext.wikitext_paragraphs(spanning) == ["First paragraph.", "Second paragraph. Third line."]


def test_templates_nest_and_inline_ones_leave_a_hole():
    text = ("{{Infobox animal|name={{lang|la|Canis}}|image=[[File:X.jpg|thumb]]}}\n"
            "It is {{convert|5|km|mi}} long{{citation needed|date=May 2015}} and "
            "{{nowrap|very {{!}} wide}}.\n"
            "\n"
            "A&nbsp;B{{snd}}C{{sfn|Smith|2001|p=3}}.")
    assert wikitext.wikitext_paragraphs(text) == [f"It is {HOLE} long and {HOLE}.", "A B \u2013 C."]


def test_tables_nest_and_end_paragraphs():
    text = "Before the table.\n{| class=\"wikitable\"\n| a || b\n|-\n|\n{|\n| inner\n|}\n|}\nAfter the table."
    assert wikitext.wikitext_paragraphs(text) == ["Before the table.", "After the table."]


def test_headings_lists_and_indented_lines_are_not_prose():
    text = ("==History==\nFirst line\nof a paragraph.\n* a list item\n# numbered\n: indented\n; term\n"
            " preformatted\nSecond paragraph.\n__NOTOC__\n=== Sub ===\nThird.")
    assert wikitext.wikitext_paragraphs(text) == ["First line of a paragraph.", "Second paragraph.", "Third."]


def test_link_kinds():
    text = ("[[Dog]]s and [[Canis lupus|wolves]] and [[:Category:Dogs|dog lists]] and [[wikt:hound]] "
            "[[Category:Mammals]][[de:Hund]] and [http://example.org the site] and [http://example.org].")
    expected = f"Dogs and wolves and dog lists and {HOLE} and the site and {HOLE}."
    assert wikitext.wikitext_paragraphs(text) == [expected]


def test_bold_italic_tags_and_dropped_elements():
    text = ("'''''Both''''' ''italic'' '''bold''' l''''oeuvre H<sub>2</sub>O x<sup>2</sup> "
            "<math>\\frac{a}{b}</math> <span style=\"x\">kept</span><br/>end")
    assert wikitext.wikitext_paragraphs(text) == [f"Both italic bold l'oeuvre H2O x{HOLE} {HOLE} kept end"]


def test_sentence_split_respects_abbreviations_and_initials():
    paragraph = ('Dr. Smith met J. R. R. Tolkien in the U.S. in 1950, e.g. at home. He said "go." '
                 "Then (in 1951) he left! Why? 1960 came.")
    assert wikitext.split_sentences(paragraph) == [
        "Dr. Smith met J. R. R. Tolkien in the U.S. in 1950, e.g. at home.", 'He said "go."',
        "Then (in 1951) he left!", "Why?", "1960 came."]


LONG_ENOUGH = "This sentence is long enough to pass the word count"


@pytest.mark.parametrize("sentence, reason", [
    ("Too short to use.", "words"),
    (LONG_ENOUGH + " but it ends " + HOLE + " here at last.", "lost text"),
    (LONG_ENOUGH + " but it has | a pipe in it.", "leftover markup"),
    (LONG_ENOUGH + " and has a URL http://x.org in it.", "URL"),
    ("this sentence is long enough to pass the word count but starts with a small letter.", "start"),
    (LONG_ENOUGH + " but it never ends with a stop", "end like"),
    (LONG_ENOUGH + " (but its parenthesis never closes.", "unbalanced"),
    (LONG_ENOUGH + ' but "its quote never closes.', "unbalanced"),
    (LONG_ENOUGH + " but has ( ) empty parentheses.", "empty parentheses"),
    (LONG_ENOUGH + " but has a stray , comma.", "stray punctuation"),
])
def test_sentence_problems(sentence, reason):
    assert reason in wikitext.sentence_problem(sentence, 12, 35)


def test_a_clean_sentence_has_no_problem():
    sentence = 'The "albedo" (whiteness) of fresh snow is about 0.8, higher than that of most forests.'
    assert wikitext.sentence_problem(sentence, 12, 35) is None


# --- misspellings ----------------------------------------------------------------------------

def _dictionary(tmp_path, text):
    path = tmp_path / "dictionary.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_misspellings_keep_single_fix_long_words_whose_typo_is_not_a_real_word(tmp_path):
    path = _dictionary(tmp_path, "teh->the\nabotu->about, abbot,\nrecieve->receive\nrecive->receive\n"
                                 "colour->color\nseperate->separate\nAmercia->America\n\n")
    found = wikipedia.read_misspellings(path, frozenset({"colour"}))
    assert found.by_word == {"receive": ("recieve", "recive"), "separate": ("seperate",)}
    assert {"teh", "abotu", "colour", "amercia"} <= found.all_typos


def test_malformed_dictionary_line_names_file_and_line(tmp_path):
    path = _dictionary(tmp_path, "recieve->receive\nno arrow here\n")
    with pytest.raises(UserError, match=r"dictionary\.txt:2: expected 'typo->fix'"):
        wikipedia.read_misspellings(path, frozenset())


def test_inject_typos_preserves_case_and_skips_hyphenated_words():
    misspellings = wikipedia.Misspellings(
        {"receive": ("recieve",), "separate": ("seperate",), "government": ("goverment",)}, frozenset())
    text = "Receive the separate government papers, self-separate ones and receive-only ones."
    seen_counts = set()
    for seed in range(20):
        artifact, injected = wikipedia.inject_typos(text, misspellings, random.Random(seed))
        seen_counts.add(len(injected))
        assert 2 <= len(injected) <= 3
        undone = artifact
        for typo, word in injected:
            assert typo[0].isupper() == word[0].isupper()
            assert typo.lower() in misspellings.by_word[word.lower()]
            undone = undone.replace(typo, word, 1)
        assert undone == text
        assert "self-separate ones and receive-only" in artifact
    assert seen_counts == {2, 3}
    assert wikipedia.inject_typos("Only one separate word.", misspellings, random.Random(0)) == (
        "Only one separate word.", [])


# --- the real candidates ---------------------------------------------------------------------

def test_enough_candidates_within_bounds(items):
    assert len(items) >= 1000
    for item in items:
        sentences = wikitext.split_sentences(item.reference)
        assert 1 <= len(sentences) <= wikipedia.MAX_PASSAGE_SENTENCES, item.item_id
        assert wikitext.word_count(item.reference) <= wikipedia.MAX_PASSAGE_WORDS, item.item_id
        for sentence in sentences:
            words = wikitext.word_count(sentence)
            assert wikipedia.MIN_SENTENCE_WORDS <= words <= wikipedia.MAX_SENTENCE_WORDS, item.item_id
        assert "\n" not in item.artifact and item.artifact == item.artifact.strip()
        assert not set("|{}[]=<>" + HOLE) & set(item.artifact), item.item_id


def test_unique_ids_point_at_the_passage(items, articles):
    ids = [item.item_id for item in items]
    assert len(set(ids)) == len(ids)
    by_title = {article.title: article for article in articles}
    for item in items[::150]:
        title, paragraph, sentence = re.fullmatch(r"(.+)#(\d+)\.(\d+)", item.item_id).groups()
        text = wikitext.wikitext_paragraphs(by_title[title].wikitext)[int(paragraph)]
        assert item.reference.startswith(wikitext.split_sentences(text)[int(sentence)])
        assert item.reference in text


def test_deterministic_in_a_fresh_process_with_another_hash_seed(items):
    """A second call, in another process with another string-hash seed, gives the same bytes."""
    digest = hashlib.sha256(json.dumps([dataclasses.asdict(i) for i in items]).encode()).hexdigest()
    script = ("import dataclasses, hashlib, json; from benchmark.sources import wikipedia; "
              "print(hashlib.sha256(json.dumps([dataclasses.asdict(i) for i in wikipedia.candidates()])"
              ".encode()).hexdigest())")
    env = {**os.environ, "PYTHONHASHSEED": "4242", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                         check=True)
    assert out.stdout.strip() == digest


def test_artifact_differs_from_reference_exactly_by_the_recorded_typos(items):
    dictionary_path, _ = locate.pypi_file(wikipedia.DICTIONARY_PACKAGE, wikipedia.DICTIONARY_PATH)
    codespell_lines = set(dictionary_path.read_text(encoding="utf-8").splitlines())
    for item in items:
        recorded = [re.fullmatch(r'injected typo "([A-Za-z]+)" for "([A-Za-z]+)"', t).groups()
                    for t in item.transformations]
        assert 2 <= len(recorded) <= 3, item.item_id
        # Split into alternating runs of non-letters and letters: only letter runs may differ.
        artifact_runs = re.split(r"([A-Za-z]+)", item.artifact)
        reference_runs = re.split(r"([A-Za-z]+)", item.reference)
        assert len(artifact_runs) == len(reference_runs), item.item_id
        changed = [(a, r) for a, r in zip(artifact_runs, reference_runs, strict=True) if a != r]
        assert changed == recorded, item.item_id
        for typo, word in recorded:
            assert f"{typo.lower()}->{word.lower()}" in codespell_lines
            assert typo[0].isupper() == word[0].isupper() and len(word) >= wikipedia.MIN_TYPO_WORD_LETTERS


def test_typos_are_not_words_of_the_corpus(items, articles):
    real_words = wikipedia.corpus_words(articles)
    typos = {re.search(r'"([A-Za-z]+)"', t).group(1).lower() for item in items for t in item.transformations}
    assert typos and not typos & real_words


def test_labels_licence_provenance_and_instructions(items):
    _, dump = locate.pypi_file("gensim", wikipedia.DUMP_PATH)
    dictionary = wikipedia.dictionary_provenance()
    assert dictionary.package == "codespell" and dictionary.version == metadata.version("codespell")
    for item in items:
        assert (item.source, item.license, item.partition, item.genre, item.register) == (
            "wikipedia", "CC-BY-SA-3.0", "sharealike", "prose", "encyclopedic")
        assert item.provenance == dump and item.extra_provenance == (dictionary,)
        assert item.instruction in wikipedia.INSTRUCTIONS
    assert {item.instruction for item in items} == set(wikipedia.INSTRUCTIONS)
    assert all(i.endswith((".", ":")) and "comment" not in i.lower() for i in wikipedia.INSTRUCTIONS)


def test_real_dump_pitfalls(articles, items):
    """The Albedo image caption and the infobox/hatnote clutter must not leak into any paragraph."""
    assert len(articles) == 106 and articles[0].title == "Anarchism"
    paragraphs = [p for article in articles for p in wikitext.wikitext_paragraphs(article.wikitext)]
    assert not any("thumb|" in p or "upright" in p.split("|")[0] and "|" in p for p in paragraphs)
    assert not any("Percentage of diffusely reflected sunlight" in p for p in paragraphs)
    assert not any(p.startswith(("{{", "Use dmy dates", "Other uses")) for p in paragraphs)
    paris = next(item for item in items if item.item_id == "An American in Paris#0.0")
    assert paris.reference.startswith("An American in Paris is a jazz-influenced symphonic poem by the "
                                      "American composer George Gershwin, written in 1928.")


def test_unreadable_dump_names_the_file(tmp_path):
    bad = tmp_path / "dump.xml.bz2"
    bad.write_bytes(b"not bz2 at all")
    with pytest.raises(UserError, match=r"dump\.xml\.bz2: cannot read the Wikipedia dump"):
        wikipedia.read_articles(bad)


def test_missing_package_names_the_install_command(monkeypatch):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(locate.metadata, "distribution", not_installed)
    with pytest.raises(MissingSource, match=r"'gensim'.*pip install --no-deps -r requirements-build.txt"):
        wikipedia.candidates()
