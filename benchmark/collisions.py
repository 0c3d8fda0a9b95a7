"""The collision check: a comment must not be findable in its cluster before anyone absorbs it.

If a comment's witness phrase or any of its content words already occurred in
the instruction, artifact or reference, a model that merely edited the text
faithfully could trip the lexical tiers. So a comment may only be assigned to a
cluster where neither occurs; the words are compared exactly as the scorer
compares them (`common.normalize`).
"""

from __future__ import annotations

from common.markers import Marker
from common.normalize import contains_phrase, content_words


def collisions(comment_text: str, witness: str, texts: list[str]) -> list[str]:
    """Human-readable reasons why the comment collides with `texts` (empty when it does not)."""
    problems = []
    for text in texts:
        if contains_phrase(text, witness):
            problems.append(f"witness {witness!r} occurs")
            break
    present = set().union(*(content_words(text) for text in texts)) if texts else set()
    shared = sorted(content_words(comment_text) & present)
    if shared:
        problems.append(f"content word(s) {', '.join(shared)} occur")
    return problems


def cluster_texts(instruction: str, artifact: str, reference: str | None) -> list[str]:
    return [instruction, artifact] + ([reference] if reference else [])


def marker_collisions(marker: str, texts: dict[str, str]) -> list[str]:
    """Why a condition's marker line collides with a cluster's `texts` (name -> text): it occurs in one as
    written, or a line of one is what the scorer would take for it (`common.markers`), so that a faithful
    copy of the artifact could be cut at it. Empty when it collides with nothing.

    >>> marker_collisions("</document>", {"artifact": "<p>x</p>\\n</Document>", "comment": "see </document> below"})
    ['it occurs in the artifact', 'it occurs in the comment']
    """
    found = Marker.of(marker)
    return [f"it occurs in the {name}" for name, text in texts.items() if found.occurs_in(text)]
