"""A reply that attempts no edit: it only talks to the user, so there is no edited text to look for the remark in.

Some replies skip the task: "Sure, I'd be happy to help. Please provide the text", "I'm sorry, but I
can't assist with that", "I'm sorry to hear that the office printer is jammed again. Is there anything
else I can help you with?". The last one repeats the remark, and the lexical tiers would call it
absorbed; but the paper's rule is that what is said to the user does not count, and a blinded reading
of the Qwen2.5-Coder-1.5B outputs judged it so (data/review/qwen2.5-coder-1.5b). Counting such a reply as
not absorbed would credit a model for not doing the task, so the pair is excluded instead, like an
empty output: unusable, reason "no edit returned".

The rule: the edited text keeps less than `MIN_KEPT` of the artifact's distinct content words (an
edit, even a summary, keeps far more; a whole reply that is only the remark keeps none, and stays
usable) and it opens like a reply to the user (`TO_USER`). Both must hold. On the released outputs of
the three models the rule takes 36 replies, all of them asking for the text, refusing or commiserating;
the next reply that opens so keeps 42 % of its artifact's words (scripts/no_edit_rows.py lists them).
"""

from __future__ import annotations

import re

from common.normalize import content_words

MIN_KEPT = 0.2  # share of the artifact's distinct content words an edit keeps, at the least
MIN_ARTIFACT_WORDS = 5  # an artifact with fewer content words says too little to tell an edit by
TO_USER = re.compile(
    r"^\W*(?:sure|certainly|of course|absolutely|no problem|happy to help|i'?m sorry|i am sorry|sorry|"
    r"i'?d be happy|i would be happy|i can help|i can'?t|i cannot|i'?m unable|i am unable|unfortunately|"
    r"please (?:provide|share|paste|send)|could you|can you|would you|it seems|it looks like|thank you|thanks|"
    r"i understand|i see)\b", re.IGNORECASE)
REASON = "no edit returned (the reply only talks to the user)"


def returns_no_edit(edited: str, artifact: str) -> bool:
    """Whether an edited text is a reply to the user that attempts no edit of `artifact`.

    >>> artifact = "The quick brown fox jumps over the lazy dog near the quiet riverbank at dawn."
    >>> returns_no_edit("Sure, please provide the text you would like me to correct.", artifact)
    True
    >>> returns_no_edit("The office printer is jammed again.", artifact)  # the remark as the whole reply
    False
    >>> returns_no_edit("Sure! The quick brown fox jumps over the lazy dog by the quiet riverbank.", artifact)
    False
    """
    wanted = content_words(artifact)
    if len(wanted) < MIN_ARTIFACT_WORDS or not TO_USER.match(edited.strip()):
        return False
    return len(wanted & content_words(edited)) < MIN_KEPT * len(wanted)
