"""Wiki markup to plain paragraphs, and paragraphs to sentences, for the Wikipedia source.

Why a hand-written stripper: naive regexes leak markup into the benchmark
(image captions such as `thumb|upright|alt=...`, half-removed nested templates,
table cells). This module removes markup in an order that respects nesting:

1. HTML comments; `<ref>` footnotes (silently: they render as superscript
   numbers); elements whose content is not prose (`<math>`, `<gallery>`,
   `<timeline>`, `<sup>`, source code, ...), which become a HOLE.
2. Image, category and interlanguage links (nested, with their captions,
   which may span lines and hold templates and links). Then templates
   `{{...}}`, nested to any depth. A template on a line of its own or
   at the start of a line is layout (infobox, hatnote) and vanishes; a few
   inline ones have a known rendering (dashes, spaces) or render nothing
   (citation-needed tags, footnotes); any other inline template (conversions,
   pronunciations, dates) becomes a HOLE, because its rendered text is unknown.
3. Tables `{| ... |}`, nested, line by line; a table ends a paragraph.
4. Lines: headings, list items, indented and preformatted lines and table
   remnants end a paragraph and are dropped; blank lines end a paragraph; the
   other lines of a paragraph are joined with spaces. Magic words go.
5. Then, inside each paragraph: internal links `[[...]]`, nested:
   `[[target|label]]` -> label, `[[target]]` -> target; a namespaced link
   without a label (e.g. `[[wikt:word]]`) becomes a HOLE. External
   links `[url label]` -> label; `[url]` (rendered as "[1]") -> HOLE. Remaining
   tags keep their content; bold/italic quotes go; HTML entities are decoded.

A HOLE is the character U+0000 (which XML cannot contain, so it never occurs in
the dump): a sentence that contains one lost some of its text and is rejected
by `sentence_problem`, rather than shipped with a gap in it.
"""

from __future__ import annotations

import html
import re

HOLE = "\x00"
# Marks where block-level markup was removed, so that text following a removed
# image or template at the start of a line is not mistaken for indented text.
REMOVED = "\x01"
_LEADING_REMOVED = re.compile(r"^\x01[\x01 \t]*", re.M)

# Elements whose content is not running prose; removed with their content.
_DROPPED_ELEMENTS = ("math", "gallery", "timeline", "imagemap", "source", "syntaxhighlight", "pre",
                     "score", "chem", "ce", "hiero", "graph", "mapframe", "sup", "code", "poem")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_REF_SELF_CLOSING = re.compile(r"<ref\b[^>]*/>", re.I)
_REF_ELEMENT = re.compile(r"<ref\b[^>]*>.*?</ref\s*>", re.I | re.S)
_REFERENCES = re.compile(r"<references\b[^>]*/>|<references\b[^>]*>.*?</references\s*>", re.I | re.S)
_DROPPED = re.compile(r"<(" + "|".join(_DROPPED_ELEMENTS) + r")\b[^>]*?(?:/>|>.*?</\1\s*>)", re.I | re.S)
_BR = re.compile(r"<br\s*/?>", re.I)
_ANY_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*\b[^<>]*>")
_QUOTES = re.compile(r"'{2,}")
_MAGIC_WORD = re.compile(r"__[A-Z]+__")
_EXTERNAL_LABELLED = re.compile(r"\[(?:https?:|ftp:)?//[^\s\]]+\s+([^\]]*)\]")
_EXTERNAL_BARE = re.compile(r"\[(?:https?:|ftp:)?//[^\s\]]*\]")
_SPACES = re.compile(r"\s+")
# Lines that are headings, list items, indented or preformatted text, or table leftovers.
_NOT_PROSE_LINE = (" ", "\t", "*", "#", ":", ";", "|", "!", "=", "{", "}")

# Inline templates whose rendering is known. Keys are normalised template names.
_TEMPLATE_TEXT = {"nbsp": " ", "ndash": "\u2013", "mdash": "\u2014", "snd": " \u2013 ",
                  "spaced ndash": " \u2013 ", "'": "'", "!": "|", "-": ""}
# Inline templates that render nothing a reader would copy (footnotes, maintenance tags).
_SILENT_TEMPLATES = frozenset("""
citation needed|cn|fact|sfn|sfnp|sfnm|harvnb|efn|efn-ua|efn-lr|refn|rp|r|clarify|clarification needed
dead link|when|who|which|by whom|according to whom|dubious|vague|page needed|pn|better source
verify source|failed verification|update inline|original research inline|or|citation needed lead
attribution needed|definition needed|specify|weasel inline|year needed|date missing|full citation needed
cbignore|webarchive|toc right|toc limit|clear|-|anchor|main|see also|further|details|reflist
""".strip().replace("\n", "|").split("|"))
_NON_ARTICLE_LINKS = ("file:", "image:", "media:", "category:")
_INTERLANGUAGE = re.compile(r"[a-z]{2,3}(?:-[a-z]{2,8})*:")
_NAMESPACED = re.compile(r"[A-Za-z][\w ]*:")

# Abbreviations after which a full stop does not end a sentence.
_ABBREVIATIONS = frozenset("""
mr mrs ms dr st jr sr no nos vol vols vs etc e.g i.e c ca approx gen col lt sgt capt gov rev prof inc
ltd co corp mt ft jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k fig figs pp p cf al fl b d
op ed eds est dept univ assn bros sen rep pres hon
""".split())
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s+[\"'(]?[A-Z0-9])")
_WORD = re.compile(r"\S+")
_MARKUP_LEFTOVERS = frozenset("|{}[]=<>")


def _normalised_name(template_body: str) -> str:
    name = template_body.split("|", 1)[0]
    return _SPACES.sub(" ", name.replace("_", " ")).strip().lower()


def _matching_spans(text: str, opener: str, closer: str) -> list[tuple[int, int]]:
    """Outermost (start, end) spans of balanced opener...closer pairs; unmatched ones are left alone."""
    token = re.compile(re.escape(opener) + "|" + re.escape(closer))
    spans, stack = [], []
    for match in token.finditer(text):
        if match.group() == opener:
            stack.append(match.start())
        elif stack:
            start = stack.pop()
            if not stack:
                spans.append((start, match.end()))
    return spans


def _replace_spans(text: str, spans: list[tuple[int, int]], render) -> str:
    out, last = [], 0
    for start, end in spans:
        out.append(text[last:start])
        out.append(render(start, end))
        last = end
    out.append(text[last:])
    return "".join(out)


def strip_templates(text: str) -> str:
    """Remove `{{...}}` (nested), rendering the few inline ones whose text is known (see module doc)."""

    def render(start: int, end: int) -> str:
        name = _normalised_name(text[start + 2:end - 2])
        if name in _TEMPLATE_TEXT:
            return _TEMPLATE_TEXT[name]
        line_start = text.rfind("\n", 0, start) + 1
        if not text[line_start:start].replace(REMOVED, "").strip():
            return REMOVED
        if name in _SILENT_TEMPLATES:
            return ""
        return HOLE

    return _replace_spans(text, _matching_spans(text, "{{", "}}"), render)


def strip_tables(text: str) -> str:
    """Replace every table, from a `{|` line to its matching `|}` line (tables nest), by a blank line.

    The blank line ends the paragraph, as the table does on the rendered page.
    """
    kept, depth = [], 0
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("{|"):
            if not depth:
                kept.append("")
            depth += 1
        elif depth and stripped.startswith("|}"):
            depth -= 1
        elif not depth:
            kept.append(line)
    return "\n".join(kept)


def _is_non_article_link(inner: str) -> bool:
    target, bar, _ = inner.partition("|")
    lowered = target.strip().lower()
    return lowered.startswith(_NON_ARTICLE_LINKS) or bool(_INTERLANGUAGE.match(lowered) and not bar)


def strip_non_article_links(text: str) -> str:
    """Remove image, category and interlanguage links, whose captions may span lines and hold templates."""
    spans = [(start, end) for start, end in _matching_spans(text, "[[", "]]")
             if _is_non_article_link(text[start + 2:end - 2])]
    return _replace_spans(text, spans, lambda start, end: REMOVED)


def strip_links(text: str) -> str:
    """Replace `[[...]]` links (nested) by the text a reader sees (see module doc)."""

    def render(start: int, end: int) -> str:
        inner = text[start + 2:end - 2]
        if _is_non_article_link(inner):
            return ""
        target, bar, label = inner.partition("|")
        target = target.strip()
        if bar and label.strip():
            return strip_links(label)
        if _NAMESPACED.match(target.lstrip(":")):
            return HOLE  # e.g. [[wikt:word]]: its display text is not plain
        return strip_links(target)

    return _replace_spans(text, _matching_spans(text, "[[", "]]"), render)


def _bold_italic(match: re.Match) -> str:
    """Two, three or five quotes toggle emphasis; four are an apostrophe then bold (MediaWiki's rule)."""
    count = len(match.group())
    if count == 4:
        return "'"
    return "'" * (count - 5) if count > 5 else ""


def wikitext_paragraphs(wikitext: str) -> list[str]:
    """The prose paragraphs of an article, each as one line with single spaces.

    Block structure (templates, tables, then lines) is resolved before inline
    markup, so that a line is judged by how it starts in the source: an image
    link at the start of a line does not turn the text after it into an
    "indented" line once the link is gone.
    """
    text = _COMMENT.sub("", wikitext)
    text = _REF_SELF_CLOSING.sub("", text)
    text = _REF_ELEMENT.sub("", text)
    text = _REFERENCES.sub("", text)
    text = _DROPPED.sub(HOLE, text)
    text = strip_non_article_links(text)
    text = strip_templates(text)
    text = strip_tables(text)
    text = _MAGIC_WORD.sub("", text)
    text = _LEADING_REMOVED.sub("", text).replace(REMOVED, "")

    blocks, current = [], []
    for line in text.split("\n"):
        if line.replace(HOLE, "").strip() and not line.startswith(_NOT_PROSE_LINE):
            current.append(line.strip())
        elif current:
            blocks.append(" ".join(current))
            current = []
    if current:
        blocks.append(" ".join(current))

    paragraphs = []
    for block in blocks:
        paragraph = _SPACES.sub(" ", inline_text(block)).strip()
        if paragraph.replace(HOLE, "").strip():
            paragraphs.append(paragraph)
    return paragraphs


def inline_text(text: str) -> str:
    """Links, external links, remaining tags, emphasis quotes and entities to plain text."""
    text = strip_links(text)
    text = _EXTERNAL_LABELLED.sub(r"\1", text)
    text = _EXTERNAL_BARE.sub(HOLE, text)
    text = _BR.sub(" ", text)
    text = _ANY_TAG.sub("", text)
    text = _QUOTES.sub(_bold_italic, text)
    return html.unescape(text)


def split_sentences(paragraph: str) -> list[str]:
    """Split at . ! ? followed by a space and a capital or digit, except after an abbreviation or initial."""
    sentences, start = [], 0
    for match in _SENTENCE_END.finditer(paragraph):
        sentence = paragraph[start:match.end()].strip()
        core = sentence.rstrip("\"')]")
        last_word = core.rsplit(" ", 1)[-1].rstrip(".!?").lstrip("(\"'").lower()
        if core.endswith(".") and (len(last_word) == 1 or last_word in _ABBREVIATIONS):
            continue
        sentences.append(sentence)
        start = match.end()
    tail = paragraph[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0 and text.count('"') % 2 == 0 and text.count("\u201c") == text.count("\u201d")


def sentence_problem(sentence: str, min_words: int, max_words: int) -> str | None:
    """Why a sentence is unfit to paste (None if fit): length, leftover markup, holes, unbalanced pairs."""
    words = word_count(sentence)
    if not min_words <= words <= max_words:
        return f"{words} words, outside {min_words}-{max_words}"
    if HOLE in sentence:
        return "lost text where markup was removed"
    leftovers = sorted(_MARKUP_LEFTOVERS.intersection(sentence))
    if leftovers:
        return f"leftover markup characters {''.join(leftovers)}"
    if "://" in sentence or "www." in sentence:
        return "contains a URL"
    if not sentence[0].isupper() and not sentence[0].isdigit() and sentence[0] not in "\"(":
        return "does not start like a sentence"
    if not sentence.rstrip("\"')").endswith((".", "!", "?")):
        return "does not end like a sentence"
    if not _balanced(sentence):
        return "unbalanced parentheses or quotes"
    if re.search(r"\(\s*[,;]?\s*\)|\s[,.;:]|,,|\.\.(?!\.)|\(\s|\s\)", sentence):
        return "empty parentheses or stray punctuation where markup was removed"
    return None
