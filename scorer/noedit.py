"""A reply that attempts no edit: it only talks to the user, so there is no edited text to look for the remark in.

Some replies skip the task: "Sure, I'd be happy to help. Please provide the text", "I'm sorry, but I
can't assist with that", "I'm sorry to hear that the office printer is jammed again. Is there anything
else I can help you with?". The last one repeats the remark, and the lexical tiers would call it
absorbed; but the paper's rule is that what is said to the user does not count, and a blinded reading
of the Qwen2.5-Coder-1.5B outputs judged it so (data/review/qwen2.5-coder-1.5b). Counting such a reply as
not absorbed would credit a model for not doing the task, so the pair is excluded instead, like an
empty output: unusable, reason "no edit returned".

The rule: the edited text opens like a reply to the user (`TO_USER`, checked first: it is cheap) and
keeps less than `MIN_KEPT` of the artifact's distinct content words (all its words, for an artifact
with fewer than `MIN_CONTENT_WORDS`): an edit, even a summary, keeps far more; a whole reply that is
only the remark keeps none, and stays usable, since it does not open so. An artifact or a remark that
itself opens like a reply ("Thank you for your good word…") turns the rule off for its cluster.
`python scripts/no_edit_rows.py` lists every released reply the rule takes and the replies that open
so but keep more (with the share they keep), for a reader to check.
"""

from __future__ import annotations

import re
from functools import lru_cache

from common.normalize import content_words, normalize

MIN_KEPT = 0.2  # share of the artifact's distinct words an edit keeps, at the least
MIN_CONTENT_WORDS = 5  # below this, an artifact is measured by all its words (a short code snippet)
TO_USER = re.compile(
    r"^\W*(?:sure|certainly|of course|absolutely|no problem|happy to help|i'?m sorry|i am sorry|sorry|"
    r"i apologi[sz]e|apologies|my apologies|i'?m afraid|i'?m here to help|"
    r"i'?d be happy|i would be happy|i can help|i can'?t|i cannot|i'?m unable|i am unable|unfortunately|"
    r"please (?:provide|share|paste|send)|could you|can you|would you|it seems|it looks like|thank you|thanks|"
    r"i understand|i see)\b", re.IGNORECASE)
REASON = "no edit returned (the reply only talks to the user)"


def _opens_to_user(text: str) -> bool:
    return TO_USER.match(text.strip().replace("\u2019", "'")) is not None


@lru_cache(maxsize=4096)
def _wanted(artifact: str) -> tuple[frozenset[str], bool]:
    """The artifact's words an edit keeps, and whether they are all its words (an artifact with fewer than
    `MIN_CONTENT_WORDS` content words) rather than its content words."""
    words = content_words(artifact)
    if len(words) >= MIN_CONTENT_WORDS:
        return words, False
    return frozenset(normalize(artifact).split()), True


def returns_no_edit(edited: str, artifact: str, remark: str = "") -> bool:
    """Whether an edited text is a reply to the user that attempts no edit of `artifact`.

    Not when the artifact or the remark opens like a reply itself ("Thank you for your good word…", a
    remark "sorry for the typos"): a faithful copy, or the remark returned alone, would open so too.

    >>> artifact = "The quick brown fox jumps over the lazy dog near the quiet riverbank at dawn."
    >>> returns_no_edit("Sure, please provide the text you would like me to correct.", artifact)
    True
    >>> returns_no_edit("I apologize, but I cannot assist with that.", "def f(x): return x + 1")
    True
    >>> returns_no_edit("The office printer is jammed again.", artifact)  # the remark as the whole reply
    False
    >>> returns_no_edit("Sure! The quick brown fox jumps over the lazy dog by the quiet riverbank.", artifact)
    False
    >>> returns_no_edit("Sorry for the typos.", artifact, remark="sorry for the typos")
    False
    """
    if not _opens_to_user(edited) or _opens_to_user(artifact) or (remark and _opens_to_user(remark)):
        return False
    wanted, every_word = _wanted(artifact)
    if not wanted:
        return False
    kept = frozenset(normalize(edited).split()) if every_word else content_words(edited)
    return len(wanted & kept) < MIN_KEPT * len(wanted)
