"""How the lines of a paste break: the rules that tell a remark on a line of its own from the next line of a
wrapped paragraph, a poem or a questionnaire.

A user who types a remark after a paste starts a new line by choice; a paste
hard-wrapped at some width breaks where the next word would not fit. These
rules estimate that width, tell a deliberate break from a wrap, and say when a
tail continues the artifact's sentence, stanza or list of questions. Pure
functions of text (docs/OCCURRENCE.md, "The screen's rules").
"""

from __future__ import annotations

from common.seams.letters import ends_with_sign_off
from common.seams.rules import is_blank, starts_lowercase


def continues_questions(tail: str, artifact: str) -> bool:
    """The artifact's last line is a question and so is the tail: the next question of a pasted list of
    questions (a questionnaire, an exam) more often than the user's own.

    >>> continues_questions("And why?", "Q1: What is it?\\nQ2: Who made it?"), continues_questions("Why?", "It is.")
    (True, False)
    """
    last = artifact.rstrip().rsplit("\n", 1)[-1].rstrip()
    return last.endswith(("?", "？")) and tail.rstrip().endswith(("?", "？"))


MAX_WRAP_WIDTH = 100  # hard-wrapped text breaks its lines at most this wide; a longer line is a whole paragraph


def wrap_width(lines: list[str]) -> int | None:
    """The width a hard-wrapped text breaks its lines at (its longest line), or None when it is not hard-wrapped
    (no line, or a line longer than 100 characters: such a text puts each paragraph on one line).

    >>> wrap_width(["The quick brown fox jumps", "over the lazy dog."]), wrap_width(["x" * 300]), wrap_width([])
    (25, None, None)
    """
    width = max((len(line.rstrip()) for line in lines if not is_blank(line)), default=0)
    return width if 0 < width <= MAX_WRAP_WIDTH else None


def breaks_deliberately(previous: str, following: str, width: int | None) -> bool:
    """Whether the line break between two lines is the writer's own rather than a wrap: the text is not
    hard-wrapped (`width` None), or the following line's first word would have fitted on the previous line.
    A remark typed on its own line after a paragraph breaks deliberately; the next line of a wrapped
    paragraph does not.

    >>> breaks_deliberately("for ever.", "The parcel was unopened.", 72), breaks_deliberately("x" * 70, "and", 72)
    (True, False)
    >>> breaks_deliberately("x" * 70, "and", None)
    True
    """
    if width is None:
        return True
    first_word = following.split(maxsplit=1)[0] if following.strip() else ""
    return len(previous.rstrip()) + 1 + len(first_word) <= width


def wraps_like_artifact(tail: str, artifact: str) -> bool:
    """A tail of two or more lines whose first line is wrapped at the artifact's width: a last paragraph of
    the paste, hard-wrapped like the rest of it, not words typed after it.

    >>> text = "\\n".join(["A line of the pasted text, wrapped at a width of sixty."] * 3)
    >>> wraps_like_artifact("For more, see the chapter on all the lines that are wrapped\\nin the manual.", text)
    True
    >>> wraps_like_artifact("thanks\\nbtw it is for class", text)
    False
    """
    lines = [line for line in tail.split("\n") if not is_blank(line)]
    if len(lines) < 2:
        return False
    return not breaks_deliberately(lines[0], lines[1], wrap_width(artifact.split("\n")))


def on_own_line(tail: str, artifact: str) -> bool:
    """The tail starts on a line of its own right after the artifact: the artifact's last line ends a
    sentence and the artifact is not verse. (The line break's width is not asked: a remark after a
    hard-wrapped paragraph whose last line happens to be full is as much a line of its own, and SEAM's
    `native` messages are of that kind; the last line of a pasted paragraph that starts a sentence is a
    false candidate this rule accepts.) This is how a remark that reads like the paste itself (a sentence in
    its register) still stands apart from it; only meaningful when the tail follows on the next line.

    >>> on_own_line("A bronze statue was unveiled.", "One long paragraph on a line of its own, ending here.")
    True
    >>> on_own_line("And the next", "A paragraph hard-wrapped at a width of thirty\\nor so, whose line goes on")
    False
    """
    lines = [line for line in artifact.split("\n") if not is_blank(line)]
    first = tail.strip().split("\n", 1)[0]
    if not lines or not first or is_verse(artifact):
        return False
    return ends_sentence(lines[-1])


MAX_VERSE_WIDTH = 50  # the lines of a poem or a list are this short at most; wrapped prose's are longer


def is_verse(artifact: str) -> bool:
    """The artifact is set in short lines (a poem, lyrics, a list): each of its two or more lines is at most
    50 characters wide, so every line break is the writer's, and one more short line after it says nothing
    about who wrote it.

    >>> is_verse("I left the gate unlatched at dusk\\nand let the garden in,"), is_verse("x" * 60 + "\\n" + "y" * 60)
    (True, False)
    """
    lines = [line for line in artifact.split("\n") if not is_blank(line)]
    return len(lines) >= 2 and max(len(line.rstrip()) for line in lines) <= MAX_VERSE_WIDTH


def ends_sentence(line: str) -> bool:
    """The line ends a sentence (a full stop, ! or ?, perhaps before a closing quote or bracket).

    >>> ends_sentence("It ended."), ends_sentence('He said "no!"'), ends_sentence("and then")
    (True, True, False)
    """
    return line.rstrip().rstrip("\"')]»”’").endswith((".", "!", "?", "。", "！", "？", "…"))


def sets_off_last_line(tail: str) -> bool:
    """In a tail of two lines or more, the lines above the last end the paste and the remark is the last line
    alone: they close a letter (a sign-off and a name), or the last line is typed chat (it starts in lower
    case) and the lines above it read as written text (each starts with a capital and ends a sentence).

    >>> sets_off_last_line("Also see the reference manual.\\nthis goes on the intranet")
    True
    >>> sets_off_last_line("thanks!\\nbtw it is for class"), sets_off_last_line("one line only")
    (False, False)
    """
    lines = [line.strip() for line in tail.split("\n") if not is_blank(line)]
    if len(lines) < 2:
        return False
    if ends_with_sign_off("\n".join(lines[:-1])):
        return True
    return starts_lowercase(lines[-1]) and all(line[:1].isupper() and ends_sentence(line) for line in lines[:-1])


def continues_sentence(tail: str, artifact: str) -> bool:
    """The artifact's last line stops mid-sentence (a letter, a digit or a comma) and the tail starts in
    lower case: the rest of a sentence wrapped onto the next line, not a remark. Only meaningful when the
    tail follows on the next line.

    >>> continues_sentence("do not exist yet.", "projects that"), continues_sentence("make it short", "The end.")
    (True, False)
    """
    last = artifact.rstrip()[-1:]
    return (last.isalnum() or last == ",") and starts_lowercase(tail)
