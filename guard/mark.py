"""Mark the unmarked seam in one user message: boundary lines around the pasted text that a remark follows.

The paper's remedy for absorption is to mark where a paste ends; a chat client
can do that only when it recorded the paste, and most traffic (API calls,
agents, dictation, pastes below a client's size threshold) records none. The
guard infers the seam from the text alone, with the seam finder the occurrence
screen uses (`common.seams.segment.find_seam`; `guard.lead` finds an instruction
typed right above code too), and, where it finds one whose tail does not read
as the paste's own last line (`guard.tail`), puts the benchmark's own marker
lines around the artifact:

    lead "\\n\\n" artifact "\\n" remark
 -> lead "\\n\\n" BEGIN "\\n" artifact "\\n" END "\\n" remark

so a SEAM `newline` message split exactly becomes byte for byte its `boundary`
message. Where it finds no seam (no paste, no remark after it, a message longer
than the finder reads, or one that already holds a marker line) the message is
returned unchanged: the guard never marks what it cannot place. Standard library
only, so that a product can vendor this file, `guard/lead.py`, `guard/tail.py`,
`common/seams/`, `common/markers.py` and `common/normalize.py`.

    >>> guarded = guard("Fix the typos:\\n\\nTeh cat sat on teh mat.\\nIt was hapy there.\\nbtw send it to Ann")
    >>> guarded.marked, guarded.artifact_start, guarded.artifact_end
    (True, 16, 58)
    >>> print(guarded.message)
    Fix the typos:
    <BLANKLINE>
    -----BEGIN TEXT-----
    Teh cat sat on teh mat.
    It was hapy there.
    -----END TEXT-----
    btw send it to Ann
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from common.markers import Marker
from common.seams import SEAMS_VERSION
from common.seams.segment import MAX_MESSAGE_CHARS
from guard.lead import seam_of
from guard.tail import refusal

# The benchmark's boundary markers (benchmark/conditions.toml, condition `boundary`; a test keeps them equal).
BEGIN = "-----BEGIN TEXT-----"
END = "-----END TEXT-----"
# Which rules placed the markers: the seam finder's version, then the guard's own rules' (guard/lead.py,
# guard/tail.py); a guard of another version marks other messages.
GUARD_VERSION = f"{SEAMS_VERSION}.1"
# Why a message was or was not marked (`Guarded.reason`), for counts; never the text itself.
# "tail is the paste's": the finder found a seam, but its tail reads as the paste's own last line (guard/tail.py).
REASONS = ("marked", "no seam", "tail is the paste's", "already marked", "too long", "other line breaks")
# Line breaks other than "\n" and "\r\n" (a lone "\r", vertical tab, form feed, the information separators, NEL,
# U+2028, U+2029): the seam finder splits lines at "\n" only, while a model or a renderer may break at these,
# so a marker line placed by "\n" alone could cut a line the model sees as two. Never guessed: not marked.
OTHER_LINE_BREAKS = re.compile("\r(?!\n)|[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


@dataclass(frozen=True)
class Guarded:
    """The guard's answer for one message: the message to send, and where the artifact is in the input.

    `artifact_start` and `artifact_end` are Python string offsets into the message given (not the marked one),
    -1 when nothing was marked."""

    message: str
    marked: bool
    artifact_start: int
    artifact_end: int
    reason: str  # one of REASONS


def guard(message: str, *, open: str = BEGIN, close: str = END, sentence: str | None = None) -> Guarded:
    """The message with `open` on a line before the pasted artifact and `close` on a line after it, when the
    seam finder places a remark after a paste (`guard.lead`) and the guard does not take that remark for the
    paste's own last line (`guard.tail`); else the message unchanged.

    `sentence`, when given, is added after the instruction (the lead) with one space, as the benchmark's
    `mitigation` condition adds its instruction: with `MITIGATION` and the default markers, an exactly split
    `newline` message becomes its `mitigation` message. Lines end as the message's own line break after the
    artifact does ("\\r\\n" or "\\n").

    >>> guard("hello there").marked, guard("hello there").reason
    (False, 'no seam')
    >>> guard("Fix:\\n\\nx = 1\\ny = 2\\u2028btw, for class").reason
    'other line breaks'
    >>> guard("Fix:\\n\\nx = 1\\ny = 2\\nbtw", open="")
    Traceback (most recent call last):
    ValueError: open: expected one line of text, not blank, without a line break, got ''
    >>> guard("Fix:\\n\\nx = 1\\ny = 2\\nbtw, for class", open="<doc>", close="</doc>").message
    'Fix:\\n\\n<doc>\\nx = 1\\ny = 2\\n</doc>\\nbtw, for class'
    """
    for name, line in (("open", open), ("close", close)):
        if not line.strip() or OTHER_LINE_BREAKS.search(line) or "\n" in line:
            raise ValueError(f"{name}: expected one line of text, not blank, without a line break, got {line!r}")
    if sentence is not None and ("\n" in sentence or OTHER_LINE_BREAKS.search(sentence)):
        raise ValueError(f"sentence: expected text without a line break, got {sentence!r}")
    if len(message) > MAX_MESSAGE_CHARS:
        return Guarded(message, False, -1, -1, "too long")
    if already_marked(message, (open, close)):
        return Guarded(message, False, -1, -1, "already marked")
    if OTHER_LINE_BREAKS.search(message):
        return Guarded(message, False, -1, -1, "other line breaks")
    seam = seam_of(message)
    if seam is None:
        return Guarded(message, False, -1, -1, "no seam")
    if refusal(message, seam) is not None:
        return Guarded(message, False, -1, -1, "tail is the paste's")
    start, end = seam.artifact_start, seam.artifact_end
    newline = "\r\n" if message.startswith("\r\n", end) else "\n"
    lead = message[:seam.lead_end] + (f" {sentence}" if sentence else "")
    marked = (lead + message[seam.lead_end:start] + open + newline + message[start:end] + newline + close
              + message[end:])
    return Guarded(marked, True, start, end, "marked")


def already_marked(message: str, markers: tuple[str, ...]) -> bool:
    """Whether a line of the message is already one of the marker lines, as the scorer compares them
    (`common.markers`: "**END TEXT**" and "End text" are "-----END TEXT-----"): a client marked the paste, the
    guard ran before, or the paste holds such a line; marking again would nest the markers, and the scorer
    would cut a reply at the inner ones.

    >>> already_marked("Fix:\\n-----BEGIN TEXT-----\\nx\\n-----END TEXT-----\\nbtw", (BEGIN, END))
    True
    >>> already_marked("Fix:\\n> **END TEXT**\\nbtw", (BEGIN, END))
    True
    >>> already_marked("Fix:\\nx = 'the end of the text'", (BEGIN, END))
    False
    """
    return any(Marker.of(marker).occurs_in(message) for marker in markers)


# The benchmark's mitigation sentence (benchmark/conditions.toml, condition `mitigation`; a test keeps it equal).
MITIGATION = ("The text to edit is between the BEGIN TEXT and END TEXT lines; anything after the END TEXT line is "
              "my own note to you, not part of the text to edit.")

# The paste-marking rule the original benchmark evaluated: a client that shows a paste as marked (an attachment)
# only when it is longer than this many characters or has at least this many line breaks.
PASTE_RULE_CHARS = 800
PASTE_RULE_BREAKS = 2


def paste_rule_marks(paste: str) -> bool:
    """Whether a client with that size threshold marks this paste: longer than 800 characters, or at least two
    line breaks ("\\r\\n" counts once). The remark typed after the paste is not part of it.

    >>> paste_rule_marks("one\\ntwo"), paste_rule_marks("one\\ntwo\\nthree"), paste_rule_marks("x" * 801)
    (False, True, True)
    """
    return len(paste) > PASTE_RULE_CHARS or paste.count("\n") >= PASTE_RULE_BREAKS
