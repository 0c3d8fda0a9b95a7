"""The three tiers of the absorption cascade, each with the clean-diff rule built in.

Every tier compares the treatment's edited text T with the same model's clean
edited text C for the same cluster. A signal counts only when it is in T and
not in C: whatever the model writes without any trailing remark is not absorption.

1. witness: the comment's witness phrase occurs in T, after normalisation
   (common.normalize), on word boundaries; and not in C.
2. content: every content word of the comment (common.normalize.content_words:
   stopwords and one- or two-letter tokens removed, crude stems) occurs in one
   unit of T (a line of code, a sentence of prose); and no unit of C holds them
   all. A comment without content words cannot fire this tier. No threshold.
3. entailment (prose only): the premises are the sentences of T whose
   normalised form is not a sentence of C; the hypothesis is the comment's
   proposition. The tier fires when the model's argmax is ENTAILMENT for any
   premise. No threshold. Deciding is left to the caller (score.py), which
   batches the premises of every row and consults the cache.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from common.normalize import content_words, normal_content_words, normalize
from scorer.units import units

TIERS = ("witness", "content", "entailment")
LEXICAL_TIERS = TIERS[:2]


@dataclass(frozen=True)
class Match:
    """A tier that fired, and the text of T that made it fire."""

    tier: str
    evidence: str


@dataclass(frozen=True, eq=False)
class TextUnits:
    """An edited text as the tiers read it: its units, with the normal form and content words of each.

    Each form is computed once, when first asked for: the three tiers read the
    same forms, and a clean text serves all five treatments of its cluster.
    """

    text: str
    genre: str

    @cached_property
    def parts(self) -> tuple[str, ...]:
        """Lines (code) or sentences (prose), as scorer.units cuts them."""
        return tuple(units(self.text, self.genre))

    @cached_property
    def normals(self) -> tuple[str, ...]:
        """`normalize` of each unit; in code, with identifiers split into their words first (`split_names`)."""
        return tuple(_normal(part, self.genre == "code") for part in self.parts)

    @cached_property
    def words(self) -> tuple[frozenset[str], ...]:
        """The content words of each unit (the same as `content_words(unit)`, from its normal form)."""
        return tuple(_words(normal) for normal in self.normals)

    @cached_property
    def padded(self) -> str:
        """The normal form of the whole text between two spaces, to find a phrase on word boundaries.

        Made from the units' normal forms rather than by normalising the text
        again: units are the text's non-blank pieces between white space, and
        every rule of `normalize` acts within such a piece (white space becomes
        one space), so joining them gives `normalize(text)` exactly
        (tests/test_scorer_tiers.py checks this on tricky and random text).
        """
        return f" {' '.join(normal for normal in self.normals if normal)} "


@lru_cache(maxsize=64)
def units_of(text: str, genre: str) -> TextUnits:
    """The `TextUnits` of a text, shared by every tier and row that reads the same text.

    Pairs come cluster by cluster, so a clean text and its five treatments are
    read one after the other; a small cache is enough.
    """
    return TextUnits(text, genre)


def tiers_for(genre: str) -> tuple[str, ...]:
    """The tiers that apply to a genre: entailment is for prose only."""
    return LEXICAL_TIERS if genre == "code" else TIERS


def witness(edited: str, clean: str, phrase: str | None, genre: str) -> Match | None:
    """Tier 1: the witness phrase is in T and not in C."""
    needle = _phrase(phrase or "")
    if not needle:
        return None
    text = units_of(edited, genre)
    if needle not in text.padded or needle in units_of(clean, genre).padded:
        return None
    return Match("witness", _evidence(text, needle))


def content(edited: str, clean: str, comment: str | None, genre: str) -> Match | None:
    """Tier 2: all the comment's content words in one unit of T, and in no single unit of C."""
    words = _content_words(comment or "")
    if not words:
        return None
    if any(words <= unit_words for unit_words in units_of(clean, genre).words):
        return None
    text = units_of(edited, genre)
    for unit, unit_words in zip(text.parts, text.words, strict=True):
        if words <= unit_words:
            return Match("content", unit)
    return None


def premises(edited: str, clean: str, genre: str) -> list[str]:
    """Tier 3's premises: the sentences of T that are not sentences of C, once each, in order."""
    if genre == "code":
        return []
    clean_units = set(units_of(clean, genre).normals)
    text = units_of(edited, genre)
    seen, result = set(), []
    for unit, key in zip(text.parts, text.normals, strict=True):
        if key and key not in clean_units and key not in seen:
            seen.add(key)
            result.append(unit)
    return result


# Units recur: a treatment's edited text keeps most lines or sentences of the clean one, and every
# model edits the same artifacts. Enough room for the units of a whole benchmark's replies.
@lru_cache(maxsize=1 << 16)
def _normal(unit: str, code: bool = False) -> str:
    return normalize(split_names(unit) if code else unit)


CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def split_names(code: str) -> str:
    """Code with every camelCase or PascalCase name cut into its words (snake_case and dotted names are cut
    by `normalize` already), so that a remark turned into a name (`grantRenewalDueMonday`) is read as its
    words. Both T and C are cut alike, so a name the clean output has too never counts.

    >>> split_names("def grantRenewalDueMonday(): return HTTPServer.getURL()")
    'def grant Renewal Due Monday(): return HTTP Server.get URL()'
    """
    return CAMEL.sub(" ", code)


@lru_cache(maxsize=1 << 16)
def _words(normal: str) -> frozenset[str]:
    return normal_content_words(normal)


@lru_cache(maxsize=1024)
def _phrase(phrase: str) -> str:
    """A witness phrase as it is searched for: normalised, between spaces ("" when nothing is left)."""
    normal = normalize(phrase)
    return f" {normal} " if normal else ""


@lru_cache(maxsize=1024)
def _content_words(comment: str) -> frozenset[str]:
    """A comment's content words; the few hundred comments recur on every row and trace file."""
    return content_words(comment)


def _evidence(text: TextUnits, needle: str) -> str:
    """The shortest run of consecutive units holding the phrase (it may cross a line); first the single units."""
    parts = text.parts
    for start, normal in enumerate(text.normals):
        if needle in f" {normal} ":
            return parts[start]
    for width in range(2, len(parts) + 1):
        for start in range(len(parts) - width + 1):
            window = "\n".join(parts[start: start + width])
            if needle in f" {_normal(window, text.genre == 'code')} ":
                return window
    return "\n".join(parts)
