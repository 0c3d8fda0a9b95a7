"""The guard's refusals: a tail the seam finder takes for the user's remark that reads as the paste's own last line.

The seam finder (`common/seams/`) was tuned to find candidates in chat logs,
where a false seam costs a judge's look; in front of a model a false seam puts
part of the paste outside the markers, where the model may take it for the
user's words, while a message left unmarked is only left as it came. So the guard
asks four more questions of a tail the finder accepts, and marks nothing when one
says yes (`refusal`). Each is about the shape of the text:

* `signs_letter`: the tail, with no sign of a remark, reads as a signature: a
  name under a sign-off line that ends the paste ("Cheers!" then "Jo"), or a short
  capitalised line ending in a comma over short lines ("With many thanks," then
  "Priya Shah (Year 11)"); no letter is needed for the second.
* `indented_under_code`: the tail's line is indented under unfenced code: a last
  statement the finder does not read as code; nobody indents a remark.
* `one_more_line`: the paste's last paragraph is set in lines, each a unit of its
  own (minutes, a flyer, an invitation, a log), and the tail on the next line is
  set apart only as those lines are, with no sign of a remark (`tone.STRONG_MARKERS`).
* `written_question`: the tail's only sign of a remark is a question, written as
  the paste is (a capital first), with none of the words that point at the text or
  the reader (`POINTING`: this, it, you, and nouns such as essay, ending, title,
  tone: "What am I missing?"), after a paste that ends in prose.

Pure functions of text, standard library only (with `common/seams/`), as guard/mark.py.
"""

from __future__ import annotations

import re

from common.seams import layout, letters, remarks, rules, tone
from common.seams.segment import Seam

CLOSING_WORDS = 6  # a letter's closing line ("Thank you for your time,") is this short at most
# A bare sign-off line ("Kind regards,") is a few words: a longer last line is not matched against one at all
# (the sign-off pattern backtracks on a sign-off word followed by a long run of spaces).
MAX_SIGN_OFF_CHARS = 60
# A line the rules classify (code or not) is at most this long: the seam finder's code patterns are slow on
# some long lines, and a line of code or of prose is far shorter.
MAX_CLASSIFIED_CHARS = 500
PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")  # a line holding only white space between two others (rules.is_blank)


def refusal(message: str, seam: Seam) -> str | None:
    """Why the seam's tail is the paste's own last line rather than a remark after it, or None.

    >>> from common.seams.segment import find_seam
    >>> message = "Fix the typos:\\n\\nHi Al,\\nThe keys are under the mat, water the plants on Friday.\\nCheers!\\nMo"
    >>> refusal(message, find_seam(message))
    "letter's close"
    """
    tail = message[seam.remark_start:seam.remark_end]
    artifact = message[seam.artifact_start:seam.artifact_end]
    indent = message[message.rfind("\n", 0, seam.remark_start) + 1:seam.remark_start]
    checks = (("letter's close", lambda: signs_letter(tail, artifact)),
              ("indented under code", lambda: seam.artifact_kind == "code" and is_indent(indent)),
              ("one more line", lambda: seam.artifact_kind == "prose" and seam.separator == "newline"
               and one_more_line(tail, artifact)),
              ("written question", lambda: written_question(tail) and ends_in_prose(artifact, seam.artifact_kind)))
    return next((reason for reason, holds in checks if holds()), None)


def _lines(text: str) -> list[str]:
    """The non-blank lines, stripped (a "\\r" before "\\n" with them)."""
    return [line.strip() for line in text.split("\n") if not rules.is_blank(line)]


def signs_letter(tail: str, artifact: str) -> bool:
    """The tail is the signature of a letter the paste ends with: a name (and short lines) under a paste whose
    last line is a bare sign-off, or a short capitalised line ending in a comma (any closing, not only the
    sign-offs `letters` knows) over short lines the first of which starts with a capital.

    >>> signs_letter("Mo", "See you Friday.\\n\\nThanks!"), signs_letter("Kevin Osei (ID 2023)", "Bye.\\nThank you,")
    (True, False)
    >>> signs_letter("Thank you for your time,\\nKevin Osei (ID 2023)", "Bye."), signs_letter("thanks,\\nbtw", "Bye.")
    (True, False)
    >>> signs_letter("Thanks,\\nCan you make it shorter?", "Bye."), signs_letter("Also,\\nPlease be formal.", "Bye.")
    (False, False)
    """
    lines = _lines(tail)
    short = all(rules.word_count(line) <= letters.SIGNATURE_LINE_WORDS for line in lines)
    if not short or has_remark_sign("\n".join(lines[1:] if lines[0].endswith(",") else lines)):
        return False  # the closing line itself may thank ("With many thanks,"); what is under it may not ask
    last = _lines(artifact)[-1]
    if len(last) <= MAX_SIGN_OFF_CHARS and letters.SIGN_OFF.fullmatch(last) and letters.NAME.fullmatch(lines[0]):
        return True
    return (len(lines) >= 2 and lines[0].endswith(",") and lines[0][:1].isupper()
            and rules.word_count(lines[0]) <= CLOSING_WORDS and lines[1][:1].isupper())


def is_indent(indent: str) -> bool:
    """White space that indents a line as code does (a tab, or two spaces or more).

    >>> is_indent("    "), is_indent("\\t"), is_indent(" "), is_indent("")
    (True, True, False, False)
    """
    return not indent.strip() and ("\t" in indent or len(indent) >= 2)


def set_in_lines(artifact: str) -> bool:
    """The artifact's last paragraph has two lines or more and each begins a unit of its own: it starts with a
    capital, a digit or a list marker, after a line that ends a sentence (or a clause, with a colon or a
    semicolon), or is a list item, or would not have fitted on the line above (`layout.breaks_deliberately`).
    A paragraph hard-wrapped at some width breaks mid-sentence, most often before a lower-case word.

    >>> set_in_lines("Minutes, 9 April\\n1. Apologies: none.\\n2. Budget approved.\\nMeeting closed at 5pm.")
    True
    >>> set_in_lines("More about the mailing lists\\ncan be found on the web site."), set_in_lines("One line.")
    (False, False)
    """
    paragraph = _lines(PARAGRAPH_BREAK.split(artifact.rstrip())[-1])
    width = layout.wrap_width([line.rstrip() for line in artifact.split("\n")])

    def begins_unit(above: str, line: str) -> bool:
        if not (line[:1].isupper() or line[:1].isdigit() or remarks.is_list_item(line)):
            return False
        return (layout.ends_sentence(above) or above.endswith((":", ";")) or remarks.is_list_item(line)
                or layout.breaks_deliberately(above, line, width))

    return len(paragraph) >= 2 and all(begins_unit(a, b) for a, b in zip(paragraph, paragraph[1:], strict=False))


def one_more_line(tail: str, artifact: str) -> bool:
    """After a paste set in lines (`set_in_lines`), a tail on the next line without any sign of a remark (no
    strong marker: casual, a request, a question, about the paste, typed in lower case): the finder accepts it
    for standing on a line of its own, which every line of such a paste does.

    >>> lines = "Parish Council, 9 April\\n1. Apologies: none.\\n2. Budget approved."
    >>> one_more_line("Meeting closed at 5pm.", lines), one_more_line("its for the newsletter", lines)
    (True, False)
    """
    return set_in_lines(artifact) and not has_remark_sign(tail)


def has_remark_sign(tail: str) -> bool:
    """Any of the finder's strong signs of a remark: casual, a request, a question, about the paste, typed in
    lower case (`tone.STRONG_MARKERS`)."""
    return any(rule(tail) for rule in tone.STRONG_MARKERS.values())


def ends_in_prose(artifact: str, kind: str) -> bool:
    """The paste ends in prose: it is prose, or code (unfenced) whose last paragraph has no line of code or
    output (a forum question with a snippet in the middle).

    >>> ends_in_prose("x = 1\\ny = 2\\n\\nIt fails at y.", "code"), ends_in_prose("Hi.\\n\\nx = 1\\ny = 2", "code")
    (True, False)
    """
    if kind != "code":
        return kind == "prose"
    last = PARAGRAPH_BREAK.split(artifact.rstrip())[-1]
    return not any(len(line) > MAX_CLASSIFIED_CHARS or rules.is_block_line(line) for line in _lines(last))


# Words that point at the text or speak to the reader (English), and nouns that name the text or a part or
# quality of it ("Is the ending too abrupt?", "Is my essay too long?"): a question with one is about the paste.
POINTING = re.compile(
    r"\b(?:this|that|these|those|it|you|your|yours|u|ur|"
    r"(?:text|email|letter|post|paragraph|poem|code|script|abstract|essay|piece|draft|message|page|bio|speech|"
    r"story|article|report|summary|sentence|sentences|intro|introduction|conclusion|ending|opening|title|"
    r"headline|tone|wording|length|style|structure|flow|grammar|spelling|formatting|version|edit|rewrite)s?)\b",
    re.IGNORECASE)


def written_question(tail: str) -> bool:
    """The tail's only sign of a remark is a question (no other strong marker), it starts with a capital as
    written text does, and it points neither at the text nor at the reader: the closing question of a post, a
    phrase list's last phrase. Typed ("is the tone ok?") or pointing ("Is this too formal?"), it is a remark.

    >>> written_question("What am I missing?"), written_question("Is this too formal?")
    (True, False)
    >>> written_question("what am i missing?"), written_question("Any ideas? thx")
    (False, False)
    >>> written_question("Is the ending too abrupt?"), written_question("Would a shorter title work better?")
    (False, False)
    """
    fired = {name for name, rule in tone.STRONG_MARKERS.items() if rule(tail)}
    return fired == {"remark_question"} and tail.strip()[:1].isupper() and POINTING.search(tail) is None
