"""Answers from the official Python FAQ, as "make this answer clearer" requests.

What is read: the reStructuredText sources of the Python FAQ shipped in the
Debian package `python3.11-doc` (Debian 12), one file per FAQ page:
`/usr/share/doc/python3.11/html/_sources/faq/<page>.rst.txt` for the pages in
FAQ_PAGES (the toctree order of the FAQ index; `index.rst.txt` holds no
questions). Each page is its own Provenance with its own SHA-256. Licence
PSF-2.0 (the documentation's code examples are also 0BSD), so every item is in
the permissive partition.

How an entry becomes an editing task. A question is a section title
underlined with "-" (the FAQ's convention; "=" titles are page and category
titles); its answer is every line up to the next section title. The artifact
is the answer's reST source, markup kept, because that is what a
documentation contributor pastes when asking for a rewrite, and stripping reST
faithfully (literal blocks, roles, links) would mean writing a renderer.
Blocks that are not content, i.e. that Sphinx does not show on the page, are
dropped together with their indented body and recorded as transformations:
comments (`.. XXX ...`; the indented text after one is part of the comment,
and in three places it hides a paragraph, a code sample or a whole question),
link targets (`.. _label:`), and the `index`, `only`, `contents`,
`highlight`, `toctree` and `testsetup` directives. Shown directives
(`code-block`, `doctest`, `testcode`, `note`, `seealso`, `versionchanged`)
stay. Runs of blank lines become one blank line (recorded when it changes
anything); leading blank lines and the end are stripped.

The question goes into the instruction, as a user would give the context:
one of INSTRUCTIONS, chosen with `random.Random(f"seam-v1:pyfaq:{item_id}")`,
with the question's inline markup removed (``id()`` -> id(), *is* -> is) and
its double quotes turned into single quotes, so it can sit inside quotes.
There is no reference edit.

item_id: `faq/<page>.rst:<question as written>`.

Length bounds, on the artifact: at most MAX_LINES = 40 lines (a post or a
chat paste; longer answers are reference pages, not something one pastes
whole) and at least MIN_WORDS = 40 words (shorter answers, such as "Yes." plus
a link, leave nothing to make more concise).

In python3.11-doc 3.11.2-6+deb12u9 the pages hold 178 questions, of which 122
are within the bounds.

Order: pages in FAQ_PAGES order, questions in page order.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from benchmark.sources import SourceItem, locate
from common.errors import UserError

SOURCE = "pyfaq"
PACKAGE = "python3.11-doc"
FAQ_DIR = "/usr/share/doc/python3.11/html/_sources/faq"
FAQ_PAGES = ("general", "programming", "design", "library", "extending", "windows", "gui", "installed")
LICENSE = "PSF-2.0"
PARTITION = "permissive"
GENRE = "prose"
REGISTER = "technical"

MAX_LINES = 40
MIN_WORDS = 40

INSTRUCTIONS = (
    'Make this answer to the question "{question}" more concise and beginner-friendly.',
    'Rewrite this answer to "{question}" so that a beginner can follow it.',
    'Edit this FAQ answer to "{question}" to be shorter and clearer without losing any facts.',
)
QUESTION_UNDERLINE = "-"
HIDDEN_DIRECTIVES = ("index", "only", "contents", "highlight", "toctree", "testsetup")

_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+])\1+$")
_EXPLICIT = re.compile(r"^(\s*)\.\.(\s|$)")
_DIRECTIVE = re.compile(r"^\s*\.\. ([\w-]+)::")
_INLINE_LITERAL = re.compile(r"``(.+?)``")
_ROLE = re.compile(r":[\w:-]+:`([^`]+?)`")
_EMPHASIS = re.compile(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])")


@dataclass(frozen=True)
class Entry:
    """One question and its answer's raw lines, as found in a FAQ page."""

    page: str
    question: str
    lineno: int  # of the question's title line, 1-based
    answer_lines: tuple[str, ...]


@dataclass(frozen=True)
class Answer:
    text: str
    transformations: tuple[str, ...]


def _title_at(lines: list[str], index: int) -> str | None:
    """The underline character if lines[index] is a section title (text plus underline)."""
    if index + 1 >= len(lines):
        return None
    text, underline = lines[index].rstrip(), lines[index + 1].rstrip()
    match = _UNDERLINE.match(underline)
    if not text.strip() or _UNDERLINE.match(text.strip()) or not match or len(underline) < len(text.strip()):
        return None
    if text[0].isspace() and not (index > 0 and lines[index - 1].rstrip() == underline):
        return None  # an indented line is a title only under an overline of the same kind
    return match.group(1)


def read_entries(page: str, text: str) -> list[Entry]:
    """The questions of one FAQ page with the raw lines of their answers, in page order."""
    lines = text.split("\n")
    titles = []  # (index of the title line, underline character)
    index = 0
    while index < len(lines):
        kind = _title_at(lines, index)
        if kind is None:
            index += 1
            continue
        titles.append((index, kind))
        index += 2
    entries = []
    for position, (index, kind) in enumerate(titles):
        if kind != QUESTION_UNDERLINE:
            continue
        end = titles[position + 1][0] if position + 1 < len(titles) else len(lines)
        if end > 0 and position + 1 < len(titles) and _UNDERLINE.match(lines[end - 1].rstrip()):
            end -= 1  # the next title's overline
        entries.append(Entry(page, lines[index].strip(), index + 1, tuple(lines[index + 2:end])))
    return entries


def _is_hidden_block(line: str) -> bool:
    """Whether an explicit markup line starts a block Sphinx does not show."""
    directive = _DIRECTIVE.match(line)
    if directive:
        return directive.group(1) in HIDDEN_DIRECTIVES
    body = line.strip()[2:].strip()
    if body.startswith(("[", "|")):
        return False  # footnote or substitution definition: content
    return True  # a link target (.. _label:) or a comment


def clean_answer(lines: tuple[str, ...]) -> Answer:
    """The answer as pasted: hidden blocks dropped, blank runs collapsed, ends stripped."""
    kept: list[str] = []
    transformations = []
    index = 0
    while index < len(lines):
        line = lines[index]
        explicit = _EXPLICIT.match(line)
        if explicit and _is_hidden_block(line):
            indent = len(explicit.group(1))
            end = index + 1
            while end < len(lines) and (not lines[end].strip()
                                        or len(lines[end]) - len(lines[end].lstrip()) > indent):
                end += 1
            while end > index + 1 and not lines[end - 1].strip():
                end -= 1  # trailing blank lines separate the block from what follows: keep them
            size = end - index
            transformations.append(f'dropped hidden reST block "{line.strip()}"'
                                   + (f" ({size} lines)" if size > 1 else ""))
            index = end
            continue
        kept.append(line)
        index += 1
    collapsed: list[str] = []
    for line in kept:
        if not line.strip() and collapsed and not collapsed[-1].strip():
            continue
        collapsed.append(line)
    while collapsed and not collapsed[0].strip():
        collapsed.pop(0)
    text = "\n".join(collapsed).rstrip()
    plain = "\n".join(kept).strip("\n").rstrip()
    if text != plain:
        transformations.append("collapsed runs of blank lines")
    return Answer(text, tuple(transformations))


def plain_question(question: str) -> str:
    """The question as a user would type it: no inline markup, double quotes made single."""
    text = _ROLE.sub(r"\1", question)
    text = _INLINE_LITERAL.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\1", text)
    return text.replace('"', "'")


def word_count(text: str) -> int:
    return len(text.split())


def candidates() -> list[SourceItem]:
    """All FAQ answers within the bounds, pages in FAQ_PAGES order, questions in page order."""
    items = []
    for page in FAQ_PAGES:
        path, provenance = locate.debian_file(PACKAGE, f"{FAQ_DIR}/{page}.rst.txt")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"{path}: expected a UTF-8 reST file ({exc})") from None
        entries = read_entries(page, text)
        if not entries:
            raise UserError(f"{path}: expected FAQ questions (titles underlined with "
                            f"'{QUESTION_UNDERLINE * 3}'), found none")
        seen = set()
        for entry in entries:
            item_id = f"faq/{page}.rst:{entry.question}"
            if item_id in seen:
                raise UserError(f"{path}:{entry.lineno}: question {entry.question!r} "
                                "appears twice on the page")
            seen.add(item_id)
            answer = clean_answer(entry.answer_lines)
            if len(answer.text.split("\n")) > MAX_LINES or word_count(answer.text) < MIN_WORDS:
                continue
            template = random.Random(f"seam-v1:{SOURCE}:{item_id}").choice(INSTRUCTIONS)
            items.append(SourceItem(
                source=SOURCE, item_id=item_id, license=LICENSE, partition=PARTITION, genre=GENRE,
                register=REGISTER, provenance=provenance,
                instruction=template.format(question=plain_question(entry.question)),
                artifact=answer.text, reference=None, transformations=answer.transformations,
            ))
    return items
