"""When is a line of text a condition's marker line? One answer for the benchmark's check and the scorer.

A condition may mark the paste with an opening and a closing line (boundary:
"-----BEGIN TEXT-----" and "-----END TEXT-----"; a user's condition file:
"<document>", "```", "Pasted text:", ...). Models echo those lines, often
restyled ("**END TEXT**", "<document id=1>"), and the scorer cuts the reply at
them (scorer/extract.py). `seam.py check` must refuse a marker that a cluster's
own text could be taken for, or the scorer would cut an unchanged copy of the
artifact. So both compare a line with a marker here, the way
`common.normalize` makes the collision check and the lexical tiers agree on
words.

A marker is one of four kinds, by how it is written:

    fence  ``` or ~~~ (three or more), an info string after it or not
           ("```python"): a code fence; the extraction's fence rule reads
           these, not the marker cut, and any line that opens or closes a
           fence of the same character is one
    tag    an XML-style tag, <name ...> or </name>: a line is this marker when,
           emphasis and backticks around it aside, it is the same tag (name in
           any case, attributes ignored); an opening tag never matches a closing one
    words  anything with letters or digits: a line is this marker when its
           normal form (`common.normalize`) is the marker's ("end text" for
           "-----END TEXT-----", "**END TEXT**", "End Text")
    line   punctuation only ("-----"): the same characters, emphasis aside

Only lines that hold the marker's `hint` (in lower case) are compared at all,
which keeps the scorer fast on replies without markers; for the boundary
markers the hint is "text", the check the scorer has always made first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from common.normalize import normalize

# A fence line (CommonMark): three or more backticks or tildes, then an info string (no backtick after backticks).
_FENCE = re.compile(r"(`{3,})[^`]*|(~{3,}).*")
_TAG = re.compile(r"<(/?)([A-Za-z][\w.:-]*)(?:\s[^<>]*)?/?>")
_DECORATION = " \t*_`"  # emphasis and inline-code marks a model may put around an echoed marker line

KINDS = ("fence", "tag", "words", "line")


@dataclass(frozen=True)
class Marker:
    """A marker line as a condition writes it, and how a line of text is compared with it."""

    text: str
    kind: str  # one of KINDS
    form: str  # what a line must come to: a normal form, a tag "<name>" / "</name>", or the stripped text
    hint: str  # a lower-case string every line that is this marker holds

    @classmethod
    def of(cls, text: str) -> Marker:
        """The marker written `text`.

        >>> [(m.kind, m.form, m.hint) for m in map(Marker.of, ["-----END TEXT-----", "</Document>", "```"])]
        [('words', 'end text', 'text'), ('tag', '</document>', 'document'), ('fence', '```', '```')]
        >>> Marker.of("```python").kind, Marker.of("```python").form, Marker.of("~~~ text").form
        ('fence', '```', '~~~')
        >>> Marker.of("===").kind
        'line'
        """
        return _marker(text)

    def matches(self, line: str) -> bool:
        """Whether `line` is this marker, restyled or not.

        >>> Marker.of("-----END TEXT-----").matches("**END TEXT**")
        True
        >>> Marker.of("<document>").matches("<document id='a'>")
        True
        >>> Marker.of("<document>").matches("</document>"), Marker.of("<document>").matches("Document")
        (False, False)
        >>> Marker.of("```").matches("```"), Marker.of("```python").matches("  ```js"), Marker.of("```").matches("~~~")
        (True, True, False)
        """
        if self.hint not in line.lower():
            return False
        if self.kind == "words":
            return normalize(line) == self.form
        if self.kind == "fence":  # its characters are the fence: no decoration to strip
            return line.strip().startswith(self.form)
        stripped = line.strip(_DECORATION)
        if self.kind == "tag":
            return _tag_form(stripped) == self.form
        return stripped == self.form

    def occurs_in(self, text: str) -> bool:
        """Whether `text` holds the marker as written, or a line the scorer would take for it.

        >>> Marker.of("-----END TEXT-----").occurs_in("a\\nEnd text\\nb")
        True
        >>> Marker.of("<document>").occurs_in("x <document> y")
        True
        >>> Marker.of("```").occurs_in("def f():\\n    pass")
        False
        """
        return self.text in text or any(self.matches(line) for line in text.split("\n"))


@lru_cache(maxsize=256)
def _marker(text: str) -> Marker:
    fence = _FENCE.fullmatch(text)
    if fence:
        run = fence.group(1) or fence.group(2)
        return Marker(text, "fence", run[:3], run[:3])
    form = _tag_form(text)
    if form is not None:
        return Marker(text, "tag", form, form.strip("</>"))
    normal = normalize(text)
    if normal:
        return Marker(text, "words", normal, normal.split(" ")[-1])
    stripped = text.strip(_DECORATION)
    return Marker(text, "line", stripped, stripped.lower())


def _tag_form(text: str) -> str | None:
    """"<name>" or "</name>" (lower case, attributes dropped) when `text` is one XML-style tag, else None."""
    match = _TAG.fullmatch(text)
    return None if match is None else f"<{match.group(1)}{match.group(2).lower()}>"
