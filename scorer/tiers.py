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
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from common.normalize import content_words, normal_content_words, normalize
from common.records import GENRES, Comment
from scorer.units import units


@dataclass(frozen=True)
class Tier:
    """One tier of the cascade: its name (as labels record it), the genres it applies to, and how it decides.

    A lexical tier decides from the texts alone, at once (`check`); the model tier (`check` None) is given
    its premises and decided for every row in one batch at the end (`premises`, the caller's entailer).
    """

    name: str
    genres: tuple[str, ...]
    check: Callable[[str, str, Comment, str], Match | None] | None = None

    @property
    def lexical(self) -> bool:
        return self.check is not None




@dataclass(frozen=True)
class Match:
    """A tier that fired, and the text of T that made it fire."""

    tier: str
    evidence: str


class _once:
    """A property computed on first use and then kept on the instance, like `functools.cached_property`, which in
    Python 3.11 takes a lock on each first use: tens of thousands of texts, four forms each."""

    def __init__(self, compute: Callable) -> None:
        self.compute, self.name, self.__doc__ = compute, compute.__name__, compute.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)  # found there from now on
        return value


@dataclass(frozen=True, eq=False)
class TextUnits:
    """An edited text as the tiers read it: its units, with the normal form and content words of each.

    Each form is computed once, when first asked for: the three tiers read the
    same forms, and a clean text serves all five treatments of its cluster.
    """

    text: str
    genre: str

    @_once
    def parts(self) -> tuple[str, ...]:
        """Lines (code) or sentences (prose), as scorer.units cuts them."""
        return tuple(units(self.text, self.genre))

    @_once
    def normals(self) -> tuple[str, ...]:
        """`normalize` of each unit."""
        return tuple(_normal(part) for part in self.parts)

    @_once
    def split_normals(self) -> tuple[str, ...]:
        """In code, each unit's normal form with camelCase names cut into their words first (`split_names`); the
        same as `normals` in prose. A unit is read in both forms, so that a remark turned into a name is found
        and one spelt "WiFi" in a comment still is."""
        if self.genre != "code":
            return self.normals
        return tuple(_split_normal(part) for part in self.parts)

    @_once
    def words(self) -> tuple[frozenset[str], ...]:
        """The content words of each unit (`content_words(unit)`, from its normal form; in code, of both forms)."""
        if self.genre != "code":
            return tuple(_words(normal) for normal in self.normals)
        return tuple(_words(normal) | _words(split) for normal, split in zip(self.normals, self.split_normals,
                                                                            strict=True))

    @_once
    def padded(self) -> str:
        """The normal form of the whole text between two spaces, to find a phrase on word boundaries.

        Made from the units' normal forms rather than by normalising the text
        again: units are the text's non-blank pieces between white space, and
        every rule of `normalize` acts within such a piece (white space becomes
        one space), so joining them gives `normalize(text)` exactly
        (tests/test_scorer_tiers.py checks this on tricky and random text).
        """
        return f" {' '.join(normal for normal in self.normals if normal)} "

    @_once
    def split_padded(self) -> str:
        """`padded` of the units with names cut into words (code); `padded` itself in prose."""
        if self.genre != "code":
            return self.padded
        return f" {' '.join(normal for normal in self.split_normals if normal)} "

    def holds(self, needle: str) -> bool:
        """Whether a padded phrase occurs on word boundaries, in either reading of the text."""
        return needle in self.padded or needle in self.split_padded


@lru_cache(maxsize=1 << 14)
def units_of(text: str, genre: str) -> TextUnits:
    """The `TextUnits` of a text, shared by every tier and row that reads the same text.

    Pairs come cluster by cluster, so a clean text and its five treatments are read one after the other;
    and the models of a panel, scored one trace file after another in a process, often return the same
    edited text to the same request. So the room is that of a worker's share of a panel (ten files of
    1,800 requests), a few kilobytes a text.
    """
    return TextUnits(text, genre)


@lru_cache(maxsize=8)
def tiers_for(genre: str) -> tuple[str, ...]:
    """The tiers that apply to a genre, in cascade order (entailment is for prose only)."""
    return tuple(tier.name for tier in CASCADE if genre in tier.genres)


def lexical(edited: str, clean: str, comment: Comment, genre: str) -> tuple[Match | None, list[str]]:
    """The lexical tiers in cascade order: the first match, and the tiers that were run."""
    run: list[str] = []
    for tier in CASCADE:
        if tier.lexical and genre in tier.genres:
            run.append(tier.name)
            match = tier.check(edited, clean, comment, genre)
            if match is not None:
                return match, run
    return None, run


def each_lexical(edited: str, clean: str, comment: Comment, genre: str) -> dict[str, Match | None]:
    """Every lexical tier on its own, not as a cascade (the placebo check): tier name -> its match or None."""
    return {tier.name: tier.check(edited, clean, comment, genre) for tier in CASCADE
            if tier.lexical and genre in tier.genres}


def witness(edited: str, clean: str, phrase: str | None, genre: str) -> Match | None:
    """Tier 1: the witness phrase is in T and not in C."""
    needle = _phrase(phrase or "")
    if not needle:
        return None
    text = units_of(edited, genre)
    if not text.holds(needle) or units_of(clean, genre).holds(needle):
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
def _normal(unit: str) -> str:
    return normalize(unit)


@lru_cache(maxsize=1 << 16)
def _split_normal(unit: str) -> str:
    """`normalize` of a code line with its names cut into words; lines recur as the units themselves do."""
    return normalize(split_names(unit))


CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def split_names(code: str) -> str:
    """Code with every camelCase or PascalCase name cut into its words (snake_case and dotted names are cut
    by `normalize` already), so that a remark turned into a name (`grantRenewalDueMonday`) is read as its
    words. Both T and C are cut alike, so a name the clean output has too never counts.

    >>> split_names("def grantRenewalDueMonday(): return HTTPServer.getURL()")
    'def grant Renewal Due Monday(): return HTTP Server.get URL()'

    The tiers read a code unit both cut and as written (`TextUnits.split_normals`): "WiFi" cut is "wi fi",
    and a remark about the wifi is still found in a comment that spells it so.
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
    for start, (normal, split) in enumerate(zip(text.normals, text.split_normals, strict=True)):
        if needle in f" {normal} " or needle in f" {split} ":
            return parts[start]
    code = text.genre == "code"
    for width in range(2, len(parts) + 1):
        for start in range(len(parts) - width + 1):
            window = "\n".join(parts[start: start + width])
            if needle in f" {_normal(window)} " or (code and needle in f" {_normal(split_names(window))} "):
                return window
    return "\n".join(parts)


# The cascade, described once: score.py and placebo.py both read it. Adding a tier is one entry here (a
# check of (edited, clean, comment, genre), or a model tier decided in batch), a field of the placebo
# rows, and a scorer_version bump (docs/SCORER.md).
CASCADE = (
    Tier("witness", GENRES, lambda edited, clean, comment, genre: witness(edited, clean, comment.witness, genre)),
    Tier("content", GENRES, lambda edited, clean, comment, genre: content(edited, clean, comment.text, genre)),
    Tier("entailment", ("prose",)),
)
TIERS = tuple(tier.name for tier in CASCADE)
LEXICAL_TIERS = tuple(tier.name for tier in CASCADE if tier.lexical)
MODEL_TIER = next(tier.name for tier in CASCADE if not tier.lexical)  # the one decided by the entailer
