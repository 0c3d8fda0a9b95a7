"""Where the guard put its markers against where the paste really is: one verdict per message with known spans.

A marking is right when the whole artifact is inside the markers and the whole
remark outside them: the model then sees every byte of the paste as the text to
edit and every byte of the remark as the user's. It errs in two ways that matter
differently: it **cuts the artifact** (part of the paste outside the markers,
where the model may take it for the user's words and drop it or obey it), it
**keeps the remark inside** (the remark marked as text to edit: the absorption
the guard is there to stop), or it puts the **instruction inside** (words of the
user's before the paste declared text to edit). Not marking a message that has a remark leaves it
as it came, unmarked; marking a message that holds no paste at all puts markers
around the user's own words (`no paste`). Pure functions of offsets; the measurement that reads
SEAM's messages and the hand-written set is scripts/guard_selftest.py.
"""

from __future__ import annotations

from guard.mark import Guarded

VERDICTS = ("right", "remark inside", "artifact cut", "instruction inside", "no paste", "not marked")


def verdict(result: Guarded, artifact: tuple[int, int] | None, remark: tuple[int, int] | None,
            message: str | None = None) -> str:
    """How the guard's marking of one message relates to its known artifact and remark spans (offsets into the
    message given, end exclusive; None where the message has none). The first error that applies is the one
    given: the remark inside (the absorption the guard is there to stop), then the artifact cut, then, when
    the message is given, words of the user's own before the paste put inside the markers (the instruction
    declared text to edit).

    >>> from guard.mark import guard
    >>> message = "Fix:\\n\\nx = 1\\ny = 2\\nbtw, for class"
    >>> verdict(guard(message), (6, 17), (18, 32), message)
    'right'
    >>> verdict(guard(message), (6, 32), None)  # had the last line been the paste's own, the marking cuts it
    'artifact cut'
    >>> verdict(guard(message), (12, 17), (18, 32), message)  # had "x = 1" been the user's own words
    'instruction inside'
    """
    if not result.marked:
        return "not marked"
    if artifact is None:
        return "no paste"
    inside = (result.artifact_start, result.artifact_end)
    if remark is not None and inside[0] < remark[1] and remark[0] < inside[1]:
        return "remark inside"
    if not (inside[0] <= artifact[0] and artifact[1] <= inside[1]):
        return "artifact cut"
    if message is not None and message[inside[0]:artifact[0]].strip():
        return "instruction inside"
    return "right"
