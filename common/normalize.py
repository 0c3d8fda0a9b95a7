"""Text normalisation shared by the scorer's lexical tiers and the benchmark's collision check.

Both must agree on what "the same words" means: if the collision check says a
comment's words are absent from an artifact, the lexical tiers must be unable
to find them in an unchanged copy of that artifact. So both import from here.

Rules, in order:
1. Unicode NFKC, then curly quotes and dashes to their ASCII forms.
2. Lower case.
3. Apostrophes inside words are dropped ("friday's" -> "fridays", "don't" -> "dont").
4. Every other character that is not a letter or digit becomes a space; this
   also removes code comment markers (#, //, /* */, --) and Markdown emphasis.
5. Runs of white space become one space; the ends are trimmed.
6. British spellings are folded to American ones, token by token (common.spelling: "behaviour" and
   "behavior" are one word), so that a remark the model respelt is still found.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from common.spelling import fold_normal

_TRANSLATE = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
    "\u2015": "-", "\u2212": "-",
})
_INNER_APOSTROPHE = re.compile(r"(?<=[^\W_])'(?=[^\W_])")
_NOT_WORD = re.compile(r"[\W_]+")
_ASCII_NOT_WORD = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum()})  # rule 4 on ASCII

# Function words and the filler of casual chat. A content word is any other token.
# The list is fixed: changing it changes labels, so it is part of the scorer's version.
STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing done down during each either
else ever every few for from further get gets getting got had has have having he her here
hers herself him himself his how i if in into is it its itself just let lets like me might
more most much must my myself no nor not now of off on once one only or other our ours
ourselves out over own please pls really same she should so some such than that thats the
their theirs them themselves then there these they this those through to too under until
up upon us very was we were what when where which while who whom why will with would yet
you your yours yourself yourselves
btw fyi ok okay oh hey hi im ive id ill youre dont doesnt didnt cant wont isnt arent wasnt
gonna wanna gotta thanks thx lol haha anyway anyways actually probably maybe still though
go goes going went make makes made making take takes took need needs want wants know
think thing things way well yeah yes sure bit lot may shall cannot
""".split())


def normalize(text: str) -> str:
    """The comparable form of `text` (see the module docstring for the rules)."""
    if text.isascii():  # most text, and twice as fast: rule 1 changes nothing, rule 4 is a table lookup
        text = text.lower()
        if "'" in text:
            text = _INNER_APOSTROPHE.sub("", text)
        return fold_normal(" ".join(text.translate(_ASCII_NOT_WORD).split()))
    text = unicodedata.normalize("NFKC", text).translate(_TRANSLATE).lower()
    text = _INNER_APOSTROPHE.sub("", text)
    return fold_normal(_NOT_WORD.sub(" ", text).strip())


def tokens(text: str) -> list[str]:
    """Normalised word tokens of `text`, in order."""
    normal = normalize(text)
    return normal.split(" ") if normal else []


@lru_cache(maxsize=1 << 16)
def stem(token: str) -> str:
    """A deliberately crude suffix stripper, so "ships", "shipped" and "shipping" meet.

    One suffix at most, and only from tokens long enough that what remains is
    still a word stem (at least four letters). A doubled final consonant left by
    "-ing" or "-ed" is undoubled ("shipp" -> "ship"), except for l, s, z and f,
    which English doubles in base words ("fall", "pass").

    Known misses, kept because the benchmark's collision check uses this same
    function and changing it changes the benchmark: a silent final "e"
    ("grades" -> "grad" but "grade" -> "grade") and short plurals ("kids").
    """
    for suffix in ("ing", "ed", "es", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 4:
            root = token[: -len(suffix)]
            if suffix in ("ing", "ed") and root[-1] == root[-2] and root[-1] not in "lszf":
                root = root[:-1]
            return root
    return token


def content_words(text: str) -> frozenset[str]:
    """Stems of the tokens of `text` that are not stopwords and not one- or two-letter."""
    return normal_content_words(normalize(text))


def normal_content_words(normal: str) -> frozenset[str]:
    """`content_words` of a text already normalised, for a caller that keeps the normal form anyway."""
    return frozenset(stem(t) for t in normal.split(" ") if t not in STOPWORDS and len(t) > 2)


def contains_phrase(haystack: str, phrase: str) -> bool:
    """Whether the normalised `phrase` occurs in the normalised `haystack` on word boundaries."""
    needle = _phrase(phrase)
    return bool(needle) and f" {needle} " in f" {normalize(haystack)} "


@lru_cache(maxsize=1 << 12)
def _phrase(phrase: str) -> str:
    """`normalize` of a phrase looked for: a few hundred witness phrases, asked for case after case (the report's
    gallery reads every case's talk for its remark's phrase)."""
    return normalize(phrase)
