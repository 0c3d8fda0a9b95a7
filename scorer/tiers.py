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

from dataclasses import dataclass
from functools import lru_cache

from common.normalize import contains_phrase, content_words, normalize
from scorer.units import units

TIERS = ("witness", "content", "entailment")
LEXICAL_TIERS = TIERS[:2]


@dataclass(frozen=True)
class Match:
    """A tier that fired, and the text of T that made it fire."""

    tier: str
    evidence: str


def tiers_for(genre: str) -> tuple[str, ...]:
    """The tiers that apply to a genre: entailment is for prose only."""
    return LEXICAL_TIERS if genre == "code" else TIERS


def witness(edited: str, clean: str, phrase: str | None, genre: str) -> Match | None:
    """Tier 1: the witness phrase is in T and not in C."""
    if not phrase or not normalize(phrase):
        return None
    if not contains_phrase(edited, phrase) or contains_phrase(clean, phrase):
        return None
    return Match("witness", _evidence(units(edited, genre), lambda text: contains_phrase(text, phrase)))


def content(edited: str, clean: str, comment: str | None, genre: str) -> Match | None:
    """Tier 2: all the comment's content words in one unit of T, and in no single unit of C."""
    words = content_words(comment or "")
    if not words:
        return None
    if any(words <= unit_words for _, unit_words in _unit_words(clean, genre)):
        return None
    for unit, unit_words in _unit_words(edited, genre):
        if words <= unit_words:
            return Match("content", unit)
    return None


@lru_cache(maxsize=1024)
def _unit_words(text: str, genre: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each unit with its content words; cached, since a clean text serves five treatments."""
    return tuple((unit, content_words(unit)) for unit in units(text, genre))


def premises(edited: str, clean: str, genre: str) -> list[str]:
    """Tier 3's premises: the sentences of T that are not sentences of C, once each, in order."""
    if genre == "code":
        return []
    clean_units = {normalize(unit) for unit in units(clean, genre)}
    seen, result = set(), []
    for unit in units(edited, genre):
        key = normalize(unit)
        if key and key not in clean_units and key not in seen:
            seen.add(key)
            result.append(unit)
    return result


def _evidence(parts: list[str], found) -> str:
    """The shortest run of consecutive units where `found` holds (the phrase may cross a line)."""
    for width in range(1, len(parts) + 1):
        for start in range(len(parts) - width + 1):
            window = "\n".join(parts[start: start + width])
            if found(window):
                return window
    return "\n".join(parts)
