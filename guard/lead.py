"""The guard's lead rule: an instruction typed on the line right above pasted code, with no blank line between.

The seam finder (`common.seams.segment.find_seam`) takes the lead up to the first
line ending in a colon, else the first paragraph: with the code pasted right
under a one-line instruction, that is a `def …:` or an `if …:` line, or the whole
first code block, and the lead, now mostly code, is no instruction, so the
message has no seam. Where the finder finds none and the second line is code,
the guard asks it again of the message with a blank line after the first line
(the shape it reads), keeps the answer only when the lead is that first line
alone, and gives the offsets back in the message as it came.
"""

from __future__ import annotations

from dataclasses import replace

from common.seams import rules
from common.seams.segment import Seam, find_seam

# An instruction is words, not a file name ("helpers.py") nor a line of code; and a line the finder's code
# patterns classify is short (some of them are slow on long lines).
MIN_INSTRUCTION_WORDS = 2
MAX_LINE_CHARS = 500


def seam_of(message: str) -> Seam | None:
    """The finder's seam; else, when the second line is code, the seam with the first line as the lead.

    >>> message = "why None?\\ndef f(x):\\n    if x:\\n        return 1\\n\\nbtw python 3.12"
    >>> find_seam(message) is None, message[seam_of(message).artifact_start:seam_of(message).artifact_end]
    (True, 'def f(x):\\n    if x:\\n        return 1')
    """
    seam = find_seam(message)
    if seam is not None:
        return seam
    first = message.find("\n")
    if first < 0:
        return None
    second_end = message.find("\n", first + 1)
    second = message[first + 1:second_end if second_end >= 0 else len(message)].rstrip("\r")
    instruction = message[:first]
    if (rules.word_count(instruction) < MIN_INSTRUCTION_WORDS or len(instruction) > MAX_LINE_CHARS
            or len(second) > MAX_LINE_CHARS or rules.is_code_line(instruction) or not rules.is_code_line(second)):
        return None
    newline = "\r\n" if message[first - 1:first] == "\r" else "\n"
    probed = find_seam(message[:first + 1] + newline + message[first + 1:])
    if probed is None:
        return None
    shift = len(newline)
    return replace(probed, artifact_start=probed.artifact_start - shift, artifact_end=probed.artifact_end - shift,
                   remark_start=probed.remark_start - shift, remark_end=probed.remark_end - shift)
