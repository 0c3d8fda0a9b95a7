"""Split an edited text into the units the content and entailment tiers look at.

Code: each non-blank line is a unit, since a remark absorbed into code is
almost always one comment line or one string.
Prose: sentences. Paragraphs are separated by blank lines; inside a paragraph
the lines are joined with a space first, because literary and encyclopedic
sources are often hard-wrapped and a sentence then runs over several lines.
A sentence ends at `.`, `!` or `?` (with any closing quotes or brackets) followed by
white space, except after a short list of abbreviations and single initials
("Mr. Darcy", "e.g. this", "J. Austen"), which would otherwise cut a sentence in two.
"""

from __future__ import annotations

import re

# Lower-case abbreviations whose final period does not end a sentence.
ABBREVIATIONS = frozenset("""
mr mrs ms dr st jr sr prof rev gen col capt lt sgt hon
e.g i.e etc vs cf al fig figs eq eqs no nos vol pp ed eds approx ca
""".split())
_SENTENCE_END = re.compile(r"""[.!?]+["'\u201d\u2019)\]]*\s+""")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def lines(text: str) -> list[str]:
    """Non-blank lines, stripped."""
    return [stripped for line in text.splitlines() if (stripped := line.strip())]


def paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks, each with its lines joined by single spaces."""
    blocks = _BLANK_LINE.split(text.replace("\r\n", "\n").replace("\r", "\n"))
    return [" ".join(lines(block)) for block in blocks if block.strip()]


def sentences(text: str) -> list[str]:
    """The sentences of `text`, paragraph by paragraph, in order."""
    result = []
    for paragraph in paragraphs(text):
        start = 0
        for match in _SENTENCE_END.finditer(paragraph):
            if _is_abbreviation(paragraph[start: match.start() + 1]):
                continue
            result.append(paragraph[start: match.end()].strip())
            start = match.end()
        if paragraph[start:].strip():
            result.append(paragraph[start:].strip())
    return result


def units(text: str, genre: str) -> list[str]:
    """Lines for code, sentences for prose."""
    return lines(text) if genre == "code" else sentences(text)


def _is_abbreviation(chunk: str) -> bool:
    """Whether the period ending `chunk` belongs to an abbreviation or an initial."""
    if not chunk.endswith("."):
        return False
    words = chunk[:-1].rsplit(None, 1)  # the last word is all that is read
    if not words:
        return False
    last = words[-1].lstrip("(\"'\u201c\u2018").lower()
    return last in ABBREVIATIONS or (len(last) == 1 and last.isalpha())
