"""Find the edited text inside a model's reply, and record what was cut around it.

Absorption is about the text the model hands back, not about what it says to
the user around it. The rules, applied in this order (docs/SCORER.md has
examples):

1. Code fence. If the reply has a fenced block (``` or ~~~, CommonMark rules:
   the closing fence uses the same character, at least as many, and an
   unclosed fence runs to the end), the edited text is the content of the
   longest block (the first, on a tie), and everything outside it is cut,
   provided that block holds at least as many of the artifact's distinct
   content words as the text outside all fenced blocks. When it does not (a
   rewritten FAQ answer whose prose surrounds fenced code examples), the
   fences belong to the edited text and rule 3 applies to the whole reply.
   A bare first fence line that nothing closes and that follows more than a
   preamble is the closing fence of a block whose opening the model left out
   (see _left_out_opening).
2. Delimiters. Inside what rule 1 kept (or the whole reply), the first line
   that is an opening marker, the BEGIN TEXT marker of the boundary conditions
   ("-----BEGIN TEXT-----", or restyled as "**BEGIN TEXT**") or the opening
   line of the condition being scored ("<document>", "<document id=1>" for a
   condition file's xml-tags), is cut with everything above it; the last one
   after it that is a closing marker (END TEXT, "</document>") is cut with
   everything below it. The model's own delimiters say where the text ends.
   What a marker line is: `common.markers` (the benchmark's check uses the
   same comparison, so no cluster's text can be taken for one); the cut itself:
   scorer/markercut.py. A condition
   whose markers are code fences ("```") needs nothing here: rule 1 reads them.
3. Replies without a fence and without both markers, paragraph by paragraph
   (blank-line separated), keeping at least one paragraph:
   - Preamble: leading paragraphs that open like a reply to the user ("Sure!",
     "Here is the revised text:", "I've fixed ..."), or that are a single line
     ending in ":" and not found in the artifact (in code, a line without any of
     ()[]{}= so that "def f(x):" is never taken for one), are cut.
   - Trailing notes: from the first later paragraph that opens like a remark to
     the user about the edit ("I left out your note ...", "Let me know ...",
     "Changes made:", "Note: I ...", "Your comment ..."), everything is cut,
     together with a horizontal rule (---) just before it.
   Emphasis marks anywhere in the opening line are ignored ("**Note:** I ...").
   A paragraph whose first line occurs in the artifact is never cut.

What rule 3 deliberately keeps: a paragraph such as "Note: this goes to the
whole team after lunch." is a note inside the document for its readers, which
counts as absorption; only notes that talk to the user about the edit are cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from common.normalize import content_words, normalize
from scorer.markercut import BOUNDARY, Markers, cut_markers
from scorer.markercut import is_marker_line as is_marker_line  # where the validity check has always found it


@dataclass(frozen=True)
class Extraction:
    """The edited text of one reply, how it was found, and what was cut before and after it."""

    text: str
    method: str  # "fence", "markers" or "plain"
    cut_before: str
    cut_after: str


_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_FENCE_STARTS = (" ", "`", "~")  # what a line `_FENCE_OPEN` matches starts with
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_RULE_LINE = re.compile(r"^ {0,3}([-*_])( *\1){2,} *$")
# Leading decoration that does not change what a paragraph opens with: emphasis, block quotes,
# list bullets, brackets; and, outside code, Markdown heading marks. Quotation marks are kept:
# a paragraph opening with a quotation is dialogue, not a remark to the user.
_DECORATION = re.compile(r"^[\s*_>(\[-]+")
_HEADING = re.compile(r"^#{1,6}\s+")

_PREAMBLE = re.compile(r"""^(?:
    (?:sure|certainly|of\ course|absolutely|okay|ok|alright|all\ right|got\ it|happy\ to\ help)\s*[!.,:]
  | (?:here\ is|here's|here\ are|here\ you\ go|below\ is|below\ are|please\ find)\b
  | (?:i've|i\ have|i\ made|i\ fixed|i\ corrected|i\ edited|i\ revised|i\ updated|i\ cleaned|i\ rewrote)\b
  | the\ (?:revised|edited|corrected|updated|fixed|improved|polished|cleaned[- ]up)\
      (?:text|version|code|paragraph|passage|function|abstract|answer)\b
)""", re.IGNORECASE | re.VERBOSE)

_TRAILING = re.compile(r"""^(?:
    (?:(?:also|additionally|finally|p\.?s\.?)[,:.]?\ )?
    i(?:'ve|\ have)?\ (?:made|fixed|corrected|changed|left|removed|omitted|kept|added|updated|edited|revised|
        assumed|ignored|excluded|treated|noticed|also|did\ not|didn't|haven't|have\ not|wasn't|was\ not|
        didnt|dropped|preserved|retained|moved|only|tried|cleaned|rewrote|rephrased|reworded|tightened)\b
  | i'm\ not\ sure | i\ am\ not\ sure | i\ hope\b | i\ can\b | i'd\b | i\ would\b
  | let\ me\ know | please\ let\ me\ know | feel\ free
  | hope\ (?:this|that|the|your|it|they|everyone)\b | good\ luck\b | enjoy\ (?:the|your)\b
  | have\ a\ (?:great|good|nice|lovely|productive)\b
  | if\ you(?:'d|\ would)?\ (?:like|want|need|prefer) | would\ you\ like | do\ you\ want
  | please\ note | note\ that\ i\b
  | (?:notes?|nb|n\.b\.)\s*[:\u2013\u2014-]\s*(?:i|your)\b
  | (?:notes?|nb|n\.b\.)\s*[:\u2013\u2014-]\s*the\ (?:last\ |final\ )?
      (?:comment|remark|note|line|sentence|message)\b
  | (?:summary\ of\ (?:the\ )?)?(?:changes|edits|corrections|fixes)(?:\ made)?\s*(?::|\*|$)
  | summary\ of\ (?:the\ )?changes | (?:key|main|major)\ (?:changes|edits|fixes)
  | what\ (?:i\ )?changed | explanation\s*(?::|\*|$)
  | (?:this|the)\ (?:revised|edited|corrected|updated)\ (?:version|revision|text|code|function|paragraph
      |passage|abstract)\b
  | (?:all|these)\ changes\b | the\ changes\ (?:i|i've|made)\b
  | your\ (?:comment|remark|note|message|last\ line|final\ line|aside)\b
  | (?:the|that)\ (?:comment|remark|note|line|message)\ (?:at\ the\ end|after|you\ added|about|below|following)\b
  | (?:the|that|your)\ (?:last|final)\ (?:line|sentence|comment|remark|note|message)\b
  | it\ (?:looks|seems|appears)\ (?:like\ |that\ |as\ if\ )?(?:the|your)\ (?:last\ |final\ )?
      (?:line|comment|remark|note|message|sentence)\b
  | (?:as\ for|regarding|about|re:)\ your
  | (?:as\ for|regarding)\ (?:the|that)\ (?:last\ |final\ )?(?:comment|remark|note|line|message|sentence|aside)\b
)""", re.IGNORECASE | re.VERBOSE)
# Emphasis marks anywhere in the opening ("**Note:** I left out ..."), removed before matching.
_EMPHASIS = re.compile(r"[*_]+")


@lru_cache(maxsize=1 << 14)
def extract(output: str, artifact: str = "", genre: str = "prose", markers: Markers = BOUNDARY) -> Extraction:
    """The edited text of `output` (see the module docstring for the rules); `markers` are those of the
    condition the reply answers (`Markers.of(condition.open, condition.close)`).

    Memoised for the whole process: a model often returns the same reply to a cluster under several
    conditions, and the models of a panel, scored one file after another, often return the same reply to
    the same request. (Room for the replies of ten trace files of 1,800 requests, a worker's share of a
    panel of twenty: at most a few tens of MB.)"""
    text = output.replace("\r\n", "\n").replace("\r", "\n") if "\r" in output else output
    before, after, method = "", "", "plain"
    block = _longest_fence(text, artifact, genre)
    if block is not None:
        before, text, after = block
        method = "fence"
    text, cut_b, cut_a = cut_markers(text, markers)
    if cut_b is not None or cut_a is not None:
        before, after = _join(before, cut_b), _join(cut_a, after)
        method = "markers" if method == "plain" else method
    if method != "fence" and (cut_b is None or cut_a is None):  # a side no marker delimits: rule 3
        text, talk_before, talk_after = _cut_paragraphs(text, artifact, genre)
        before, after = _join(before, talk_before), _join(talk_after, after)
    return Extraction(text.strip("\n").rstrip(), method, before.strip(), after.strip())


def _longest_fence(text: str, artifact: str, genre: str) -> tuple[str, str, str] | None:
    """(before, content, after) of the longest fenced block, or None when rule 1 does not apply.

    It applies when the block holds at least as many of the artifact's distinct
    content words as the text outside every fenced block: the block is then the
    edited text and the rest is talk. Otherwise the fences are part of the
    edited text (prose with code examples) and the whole reply goes to rule 3.
    """
    if "```" not in text and "~~~" not in text:  # no line can open or close a fence
        return None
    lines = text.split("\n")
    fences = _fence_lines(lines)
    # Each block: (first content line, end of content (exclusive), first and last line it spans).
    blocks = []
    i = 0
    left_out = _left_out_opening(lines, fences, artifact, genre)
    if left_out is not None:
        start, fence_line = left_out
        blocks.append((start, fence_line, start, fence_line))
        i = fence_line + 1
    for at, match in fences.items():  # the lines that may open a block, in order
        if at < i:
            continue
        if not (match.group(1)[0] == "`" and "`" in match.group(2)):
            close = _closing_line(lines, at, match.group(1))
            end = close if close is not None else len(lines)
            blocks.append((at + 1, end, at, end if close is not None else end - 1))
            i = end + 1
    if not blocks:
        return None
    first, end, span_first, span_last = max(blocks, key=lambda b: (len("\n".join(lines[b[0]: b[1]])), -b[0]))
    content = "\n".join(lines[first: end])
    fenced = set()  # line numbers of every fenced block, fence lines included
    for block in blocks:
        fenced.update(range(block[2], block[3] + 1))
    outside = "\n".join(line for i, line in enumerate(lines) if i not in fenced)
    # In a code reply, a block the model closed without opening is the code itself: the explanation
    # after it often repeats more of the code's words, so the comparison would wrongly reject it.
    trusted = genre == "code" and left_out is not None and first == left_out[0]
    if not trusted:
        wanted = _artifact_words(artifact)
        talk = len(wanted & _talk_words(outside))  # usually a preamble and a note: often none of them
        if talk and len(wanted & content_words(content)) < talk:
            return None
    return "\n".join(lines[:span_first]), content, "\n".join(lines[span_last + 1:])


def _fence_lines(lines: list[str]) -> dict[int, re.Match]:
    """The lines that are fence lines (`_FENCE_OPEN`), by number, in order; a fence line starts with a space, a
    backtick or a tilde, so the other lines are not matched at all."""
    return {i: match for i, line in enumerate(lines)
            if line.startswith(_FENCE_STARTS) and (match := _FENCE_OPEN.match(line))}


@lru_cache(maxsize=1 << 12)
def _talk_words(outside: str) -> frozenset[str]:
    """The content words of the text around the fenced blocks: mostly the same preambles and notes, reply after
    reply."""
    return content_words(outside)


def _closing_line(lines: list[str], opening: int, fence: str) -> int | None:
    """The line that closes the fence opened at `opening` (CommonMark), or None."""
    for j in range(opening + 1, len(lines)):
        if fence[0] not in lines[j]:  # most lines, skipped cheaply
            continue
        stripped = lines[j].strip()
        if (len(lines[j]) - len(lines[j].lstrip(" ")) <= 3 and stripped
                and set(stripped) == {fence[0]} and len(stripped) >= len(fence)):
            return j
    return None


def _left_out_opening(lines: list[str], fences: dict[int, re.Match], artifact: str,
                      genre: str) -> tuple[int, int] | None:
    """(first line, closing fence line) of a block whose opening fence the model left out, or None.

    Models often start the edited code without a fence and then close it with a
    bare fence line before talking to the user. Read as CommonMark, that line
    would open a block running to the end, and the talk would be taken for the
    edited text. So the reply's first fence line is read as a closing fence when
    it is bare (no info string), nothing closes it before the end of the reply or
    the next fence line that has an info string, and text other than a preamble
    (rule 3) stands before it; the block then runs from the end of that preamble.
    """
    if not fences:
        return None
    first, match = next(iter(fences.items()))
    if match.group(2).strip():
        return None
    close = _closing_line(lines, first, match.group(1))
    next_opening = next((j for j, later in fences.items() if j > first and later.group(2).strip()), None)
    if close is not None and (next_opening is None or close < next_opening):
        return None
    before = "\n".join(lines[:first])
    spans = _paragraph_spans(before)
    artifact_normal = _artifact_normal(artifact)
    skip = 0  # leading preamble paragraphs
    while skip < len(spans) and _is_preamble(before[slice(*spans[skip])], artifact_normal, genre):
        skip += 1
    if skip == len(spans):
        return None
    return before[: spans[skip][0]].count("\n"), first


@lru_cache(maxsize=1024)  # more than the benchmark's clusters, so a second trace file finds them all
def _artifact_words(artifact: str) -> frozenset[str]:
    return content_words(artifact)


@lru_cache(maxsize=1024)
def _artifact_normal(artifact: str) -> str:
    """The artifact's normal form between spaces; every reply to its cluster (six per model) asks for it."""
    return f" {normalize(artifact)} "


def _cut_paragraphs(text: str, artifact: str, genre: str) -> tuple[str, str, str]:
    """Rule 3: cut a preamble and trailing notes to the user; (text, cut before, cut after)."""
    spans = _paragraph_spans(text)
    if len(spans) < 2:
        return text, "", ""
    artifact_normal = _artifact_normal(artifact)
    first = 0
    while first < len(spans) - 1 and _is_preamble(text[slice(*spans[first])], artifact_normal, genre):
        first += 1
    last = len(spans)
    for k in range(first + 1, len(spans)):
        if _opens(text[slice(*spans[k])], "trailing", artifact_normal, genre):
            last = k
            if last - 1 > first and _RULE_LINE.match(text[slice(*spans[last - 1])].strip()):
                last -= 1
            break
    start = spans[first][0]
    end = spans[last - 1][1]
    return text[start:end], text[:start], text[end:]


def _paragraph_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _BLANK_LINE.finditer(text):
        if text[start: match.start()].strip():
            spans.append((start, match.start()))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def _is_preamble(paragraph: str, artifact_normal: str, genre: str) -> bool:
    if _opens(paragraph, "preamble", artifact_normal, genre):
        return True
    body = paragraph.strip()
    if "\n" in body or not body.endswith(":") or _in_artifact(body, artifact_normal):
        return False
    return genre != "code" or not any(c in body for c in "()[]{}=")


def _opens(paragraph: str, like: str, artifact_normal: str, genre: str) -> bool:
    """Whether the paragraph opens like a preamble or a trailing note (`like`, decoration aside) and is not
    artifact text."""
    first_line = paragraph.strip().split("\n", 1)[0]
    if genre != "code" and first_line.startswith("#"):
        first_line = _HEADING.sub("", first_line)
    return _opens_with(first_line, like) and not _in_artifact(first_line, artifact_normal)


_OPENINGS = {"preamble": _PREAMBLE, "trailing": _TRAILING}  # named: a compiled pattern hashes its whole program


@lru_cache(maxsize=1 << 14)
def _opens_with(first_line: str, like: str) -> bool:
    """Whether a paragraph's first line opens with the pattern `like` names, decoration aside. Memoised: the
    paragraphs of the artifact come back in reply after reply, and so do the replies' openings."""
    opening = _DECORATION.sub("", first_line)
    if "*" in opening or "_" in opening:
        opening = _EMPHASIS.sub("", opening)
    return bool(_OPENINGS[like].match(opening.replace("\u2019", "'")))


def _in_artifact(line: str, artifact_normal: str) -> bool:
    normal = _line_normal(line)
    return bool(normal) and f" {normal} " in artifact_normal


@lru_cache(maxsize=1 << 14)
def _line_normal(line: str) -> str:
    """`normalize` of a paragraph's opening line; the openings that look like a reply recur in many replies."""
    return normalize(line)


def _join(*parts: str | None) -> str:
    return "\n".join(p for p in parts if p and p.strip())
