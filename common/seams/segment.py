"""Find the seam in one user message: an instruction, a pasted artifact, and a short remark after it.

The message is cut at line breaks into a lead (the instruction), an artifact
(the pasted block) and a tail (what the user typed after it). Where the cuts go:

* A message with Markdown code fences is read by its fences only: the artifact
  runs from the first fence line to the last (so several blocks and the words
  between them are one artifact), the lead is what comes before, the tail what
  comes after. An unclosed fence leaves no tail: not a candidate.
* Otherwise the tail is tried as the last paragraph (after the last blank line,
  at most three lines; not when its lines above the last end the paste,
  `layout.sets_off_last_line`), then as the last line alone; the lead is the first
  lines up to one ending in a colon, else the first paragraph when the rest has
  another, else the first line. What lies between is the artifact.

Each part is then checked by the rules in `common.seams.rules`: the lead must be
an instruction, the artifact a pasted block (code, or at least 10 words of
prose), the tail a remark that is not part of the artifact. Offsets are
character offsets into the message as given (Python string indices), so that
the seam can be found again in the corpus without storing any of its text.
"""

from __future__ import annotations

from dataclasses import dataclass

from common.seams import layout, remarks, rules, tone

# Every feature the screen records, in the order it records them (docs/OCCURRENCE.md explains each).
FEATURES = ("code_fence", "code_block", "prose_block", "indented_block", "multi_line_artifact", "lead_colon",
            "remark_after_blank", "remark_after_newline", "remark_own_line", *tone.STRONG_MARKERS,
            *tone.WEAK_MARKERS)
ARTIFACT_KINDS = ("fenced", "code", "prose")
# A message longer than this is not screened (never a candidate): the rules would build an object per line,
# many times the message's size (a 200 MB message peaked at 3.7 GB), and a remark after a paste this long
# is not the shape the audit looks for (docs/OCCURRENCE.md).
MAX_MESSAGE_CHARS = 1_000_000
SEPARATORS = ("blank", "newline")


@dataclass(frozen=True)
class Line:
    start: int  # offset of the line's first character in the message
    end: int  # offset just past its last character (a "\r" before the "\n" is not part of it)
    text: str

    @property
    def blank(self) -> bool:
        return rules.is_blank(self.text)


@dataclass(frozen=True)
class Seam:
    """Where a candidate message's parts are: lead = message[:lead_end], artifact =
    message[artifact_start:artifact_end], remark = message[remark_start:remark_end]."""

    artifact_kind: str  # fenced, code or prose
    separator: str  # blank (a blank line between artifact and remark) or newline (a single line break)
    lead_end: int
    artifact_start: int
    artifact_end: int
    remark_start: int
    remark_end: int
    lead_words: int
    artifact_lines: int  # non-blank lines
    artifact_words: int
    remark_lines: int
    remark_words: int
    features: tuple[str, ...]


def split_lines(message: str) -> list[Line]:
    r"""The message's lines with their offsets; "\r\n" and "\n" both end a line.

    >>> [(line.start, line.end, line.text) for line in split_lines("ab\r\ncd\n")]
    [(0, 2, 'ab'), (4, 6, 'cd'), (7, 7, '')]
    """
    lines, start = [], 0
    for piece in message.split("\n"):
        text = piece[:-1] if piece.endswith("\r") else piece
        lines.append(Line(start, start + len(text), text))
        start += len(piece) + 1
    return lines


def paragraphs(lines: list[Line]) -> list[list[Line]]:
    """Runs of non-blank lines, in order."""
    found: list[list[Line]] = []
    current: list[Line] = []
    for line in lines:
        if line.blank:
            if current:
                found.append(current)
            current = []
        else:
            current.append(line)
    if current:
        found.append(current)
    return found


def find_seam(message: str) -> Seam | None:
    """The seam of a message that has the shape, or None.

    >>> seam = find_seam("Fix this:\\n\\ndef area(r):\\n    return 3.14 * r ** 2\\n\\nbtw, for class")
    >>> seam.artifact_kind, seam.separator, seam.remark_words
    ('code', 'blank', 3)
    >>> find_seam("just a question, no paste") is None
    True
    """
    if message.count("\n") < 2 or len(message) > MAX_MESSAGE_CHARS:  # three lines at least; no book-length paste
        return None
    lines = split_lines(message)
    if any(rules.is_fence(line.text) for line in lines):
        return _fenced(message, lines)
    return _plain(message, lines)


def _fenced(message: str, lines: list[Line]) -> Seam | None:
    fences = [i for i, line in enumerate(lines) if rules.is_fence(line.text)]
    if len(fences) % 2:  # an unclosed block runs to the end: nothing follows it
        return None
    lead = [line for line in lines[:fences[0]] if not line.blank]
    artifact = lines[fences[0]:fences[-1] + 1]
    tail = [line for line in lines[fences[-1] + 1:] if not line.blank]
    if not lead or not tail:
        return None
    return _checked(message, lead, artifact, tail, "fenced")


def _plain(message: str, lines: list[Line]) -> Seam | None:
    groups = paragraphs(lines)
    if not groups:  # white space only ("\n\n"): no paragraph, so no seam
        return None
    tails = []
    if len(groups) >= 2 and len(groups[-1]) <= remarks.MAX_REMARK_LINES and not (
            layout.sets_off_last_line("\n".join(line.text for line in groups[-1]))):
        tails.append(groups[-1])
    if len(groups[-1]) >= 2:
        tails.append(groups[-1][-1:])
    position = {id(line): number for number, line in enumerate(lines)}
    for tail in tails:
        before = lines[:position[id(tail[0])]]
        body = [line for line in before if not line.blank]
        lead = _lead(body, paragraphs(before))
        if lead is None:
            continue
        artifact = body[len(lead):]
        kind = rules.artifact_kind([line.text for line in artifact])
        if kind is None:
            continue
        seam = _checked(message, lead, artifact, tail, kind)
        if seam is not None:
            return seam
    return None


LEAD_COLON_LINES = 5  # a colon ends the lead only within the message's first lines


def _lead(body: list[Line], groups: list[list[Line]]) -> list[Line] | None:
    """The lines of the lead: up to a line ending in a colon (among the first five, not the last line of
    the body), else the first paragraph when another follows, else the first line of a longer paragraph."""
    if len(body) < 2:
        return None
    for index, line in enumerate(groups[0][:LEAD_COLON_LINES]):
        if line is body[-1]:
            break
        if rules.ends_with_colon(line.text):
            return body[:index + 1]
    if len(groups) >= 2:
        return groups[0]
    return body[:1]


def _checked(message: str, lead: list[Line], artifact: list[Line], tail: list[Line], kind: str) -> Seam | None:
    """The seam, if the lead is an instruction and the tail a remark after this artifact; else None."""
    visible = [line for line in artifact if not line.blank]
    if not visible:
        return None
    lead_text = message[lead[0].start:lead[-1].end]
    artifact_text = message[visible[0].start:visible[-1].end]
    tail_text = message[tail[0].start:tail[-1].end]
    separator = "newline" if tail[0].start == visible[-1].end + 1 or _crlf_next(message, visible[-1], tail[0]) \
        else "blank"
    if not rules.is_instruction(lead_text) or remarks.rejects(tail_text, artifact_text, kind, separator) is not None:
        return None
    remark_start = tail[0].start + len(tail[0].text) - len(tail[0].text.lstrip())
    remark_end = tail[-1].start + len(tail[-1].text.rstrip())
    lead_end = lead[-1].start + len(lead[-1].text.rstrip())
    fired = {
        "code_fence": kind == "fenced",
        "code_block": kind == "code",
        "prose_block": kind == "prose",
        "indented_block": sum(rules.is_indented(line.text) for line in visible) * 2 >= len(visible),
        "multi_line_artifact": len(visible) >= 2,
        "lead_colon": rules.ends_with_colon(lead_text),
        "remark_after_blank": separator == "blank",
        "remark_after_newline": separator == "newline",
        "remark_own_line": separator == "newline" and layout.on_own_line(tail_text, artifact_text),
    }
    marked = set(tone.markers(tail_text))
    features = tuple(name for name in FEATURES if fired.get(name) or name in marked)
    return Seam(artifact_kind=kind, separator=separator, lead_end=lead_end,
                artifact_start=visible[0].start, artifact_end=visible[-1].end, remark_start=remark_start,
                remark_end=remark_end, lead_words=rules.word_count(lead_text), artifact_lines=len(visible),
                artifact_words=rules.word_count(artifact_text), remark_lines=len(tail),
                remark_words=rules.word_count(tail_text), features=features)


def _crlf_next(message: str, last: Line, first: Line) -> bool:
    """Whether `first` is the line right after `last`, across a "\\r\\n"."""
    return message[last.end:first.start] == "\r\n"
