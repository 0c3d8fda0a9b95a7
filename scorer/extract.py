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
2. Delimiters. Inside what rule 1 kept (or the whole reply), a line that is
   exactly the BEGIN TEXT marker of the boundary conditions is cut with
   everything above it; a line that is exactly the END TEXT marker is cut with
   everything below it. The model's own delimiters say where the text ends.
3. Plain replies (no fence and no marker), paragraph by paragraph (blank-line
   separated), keeping at least one paragraph:
   - Preamble: leading paragraphs that open like a reply to the user ("Sure!",
     "Here is the revised text:", "I've fixed ..."), or that are a single line
     ending in ":" and not found in the artifact (in code, a line without any of
     ()[]{}= so that "def f(x):" is never taken for one), are cut.
   - Trailing notes: from the first later paragraph that opens like a remark to
     the user about the edit ("I left out your note ...", "Let me know ...",
     "Changes made:", "Note: I ...", "Your comment ..."), everything is cut,
     together with a horizontal rule (---) just before it.
   A paragraph whose first line occurs in the artifact is never cut.

What rule 3 deliberately keeps: a paragraph such as "Note: this goes to the
whole team after lunch." is a note inside the document for its readers, which
counts as absorption; only notes that talk to the user about the edit are cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from benchmark.render import BEGIN_MARKER, END_MARKER
from scorer.normalize import content_words, normalize


@dataclass(frozen=True)
class Extraction:
    """The edited text of one reply, how it was found, and what was cut before and after it."""

    text: str
    method: str  # "fence", "markers" or "plain"
    cut_before: str
    cut_after: str


_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
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
    i(?:'ve|\ have)?\ (?:made|fixed|corrected|changed|left|removed|omitted|kept|added|updated|edited|revised|
        assumed|ignored|excluded|treated|noticed|also|did\ not|didn't|haven't|have\ not|wasn't|was\ not|
        didnt|dropped|preserved|retained|moved|only|tried|cleaned|rewrote|rephrased|reworded|tightened)\b
  | i'm\ not\ sure | i\ am\ not\ sure | i\ hope\b | i\ can\b | i'd\b | i\ would\b
  | let\ me\ know | please\ let\ me\ know | feel\ free | hope\ (?:this|that)\ helps
  | if\ you(?:'d|\ would)?\ (?:like|want|need|prefer) | would\ you\ like | do\ you\ want
  | please\ note | note\ that\ i\b | note:\s*i\b | note:\s*your\b | notes?:\s*(?:i|your)\b
  | note:\s*the\ (?:comment|remark|note|line|sentence|message|last\ line|final\ line)\b
  | (?:summary\ of\ (?:the\ )?)?(?:changes|edits|corrections|fixes)(?:\ made)?\s*(?::|\*|$)
  | summary\ of\ (?:the\ )?changes | (?:key|main|major)\ (?:changes|edits|fixes)
  | what\ (?:i\ )?changed | explanation\s*(?::|\*|$)
  | (?:this|the)\ (?:revised|edited|corrected|updated)\ (?:version|revision|text|code|function|paragraph
      |passage|abstract)\b
  | (?:all|these)\ changes\b | the\ changes\ (?:i|i've|made)\b
  | your\ (?:comment|remark|note|message|last\ line|final\ line|aside)\b
  | (?:the|that)\ (?:comment|remark|note|line|message)\ (?:at\ the\ end|after|you\ added|about|below|following)\b
  | as\ for\ your | regarding\ your | about\ your | re:\ your
)""", re.IGNORECASE | re.VERBOSE)


def extract(output: str, artifact: str = "", genre: str = "prose") -> Extraction:
    """The edited text of `output` (see the module docstring for the rules)."""
    text = output.replace("\r\n", "\n").replace("\r", "\n")
    before, after, method = "", "", "plain"
    block = _longest_fence(text, artifact)
    if block is not None:
        before, text, after = block
        method = "fence"
    text, cut_b, cut_a = _cut_markers(text)
    if cut_b is not None or cut_a is not None:
        before, after = _join(before, cut_b), _join(cut_a, after)
        method = "markers" if method == "plain" else method
    if method == "plain":
        text, before, after = _cut_paragraphs(text, artifact, genre)
    return Extraction(text.strip("\n").rstrip(), method, before.strip(), after.strip())


def _longest_fence(text: str, artifact: str) -> tuple[str, str, str] | None:
    """(before, content, after) of the longest fenced block, or None when rule 1 does not apply.

    It applies when the block holds at least as many of the artifact's distinct
    content words as the text outside every fenced block: the block is then the
    edited text and the rest is talk. Otherwise the fences are part of the
    edited text (prose with code examples) and the whole reply goes to rule 3.
    """
    lines = text.split("\n")
    blocks = []  # (start line, end line exclusive of closing fence, closing line index or None)
    i = 0
    while i < len(lines):
        match = _FENCE_OPEN.match(lines[i])
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            close = None
            for j in range(i + 1, len(lines)):
                stripped = lines[j].strip()
                if (len(lines[j]) - len(lines[j].lstrip(" ")) <= 3 and stripped
                        and set(stripped) == {fence[0]} and len(stripped) >= len(fence)):
                    close = j
                    break
            end = close if close is not None else len(lines)
            blocks.append((i, end, close))
            i = end + 1
        else:
            i += 1
    if not blocks:
        return None
    start, end, close = max(blocks, key=lambda b: (len("\n".join(lines[b[0] + 1: b[1]])), -b[0]))
    content = "\n".join(lines[start + 1: end])
    fenced = set()  # line numbers of every fenced block, fence lines included
    for first, stop, closing in blocks:
        fenced.update(range(first, (closing if closing is not None else stop - 1) + 1))
    outside = "\n".join(line for i, line in enumerate(lines) if i not in fenced)
    wanted = _artifact_words(artifact)
    if len(wanted & content_words(content)) < len(wanted & content_words(outside)):
        return None
    after = "\n".join(lines[close + 1:]) if close is not None else ""
    return "\n".join(lines[:start]), content, after


@lru_cache(maxsize=256)
def _artifact_words(artifact: str) -> frozenset[str]:
    return content_words(artifact)


def _cut_markers(text: str) -> tuple[str, str | None, str | None]:
    """Cut at the BEGIN/END TEXT marker lines; (text, cut before or None, cut after or None)."""
    lines = text.split("\n")
    stripped = [line.strip() for line in lines]
    cut_before = cut_after = None
    if BEGIN_MARKER in stripped:
        first = stripped.index(BEGIN_MARKER)
        cut_before = "\n".join(lines[: first + 1])
        lines, stripped = lines[first + 1:], stripped[first + 1:]
    if END_MARKER in stripped:
        last = len(stripped) - 1 - stripped[::-1].index(END_MARKER)
        cut_after = "\n".join(lines[last:])
        lines = lines[:last]
    return "\n".join(lines), cut_before, cut_after


def _cut_paragraphs(text: str, artifact: str, genre: str) -> tuple[str, str, str]:
    """Rule 3: cut a preamble and trailing notes to the user; (text, cut before, cut after)."""
    spans = _paragraph_spans(text)
    if len(spans) < 2:
        return text, "", ""
    artifact_normal = f" {normalize(artifact)} "
    first = 0
    while first < len(spans) - 1 and _is_preamble(text[slice(*spans[first])], artifact_normal, genre):
        first += 1
    last = len(spans)
    for k in range(first + 1, len(spans)):
        if _opens(text[slice(*spans[k])], _TRAILING, artifact_normal, genre):
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
    if _opens(paragraph, _PREAMBLE, artifact_normal, genre):
        return True
    body = paragraph.strip()
    if "\n" in body or not body.endswith(":") or _in_artifact(body, artifact_normal):
        return False
    return genre != "code" or not any(c in body for c in "()[]{}=")


def _opens(paragraph: str, pattern: re.Pattern, artifact_normal: str, genre: str) -> bool:
    """Whether the paragraph opens with `pattern` (decoration aside) and is not artifact text."""
    first_line = paragraph.strip().split("\n", 1)[0]
    if genre != "code":
        first_line = _HEADING.sub("", first_line)
    opening = _DECORATION.sub("", first_line).replace("\u2019", "'")
    return bool(pattern.match(opening)) and not _in_artifact(first_line, artifact_normal)


def _in_artifact(line: str, artifact_normal: str) -> bool:
    normal = normalize(line)
    return bool(normal) and f" {normal} " in artifact_normal


def _join(*parts: str | None) -> str:
    return "\n".join(p for p in parts if p and p.strip())
