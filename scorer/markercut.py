"""Rule 2 of the extraction (scorer/extract.py): a reply cut at the marker lines of the condition it answers.

Inside what the fence rule kept (or the whole reply), the first line that is an
opening marker (the BEGIN TEXT marker of the boundary conditions, restyled or
not, or the opening line of the condition being scored) is cut with everything
above it, and the last closing marker line after it with everything below it:
the model's own delimiters say where its text ends. What a marker line is, is
`common.markers`' answer, which the benchmark's check shares.

Most replies hold no marker at all, and in those that do only the lines holding
a marker's hint can be one: only those are compared, and a line's verdict is
memoised, since the same few lines ("Here is the revised text:", an echoed END
TEXT) come back in reply after reply.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from benchmark.render import BEGIN_MARKER, END_MARKER
from common.markers import Marker


@dataclass(frozen=True)
class Markers:
    """The marker lines the extraction cuts at for one condition: opening ones and closing ones."""

    opening: tuple[Marker, ...]
    closing: tuple[Marker, ...]

    @classmethod
    def of(cls, open_: str | None = None, close: str | None = None) -> Markers:
        """The boundary markers, which every reply is cut at, plus a condition's own opening and closing lines
        (code fences aside: rule 1 reads those).

        >>> [m.text for m in Markers.of("<document>", "</document>").closing]
        ['-----END TEXT-----', '</document>']
        """
        return _markers(open_, close)

    @cached_property
    def texts(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The opening and the closing markers as written: what they are made from, cheap to compare and hash."""
        return tuple(marker.text for marker in self.opening), tuple(marker.text for marker in self.closing)

    @cached_property
    def hints(self) -> tuple[str, ...]:
        """The markers' hints, each once: a line that is a marker holds its marker's hint (in lower case)."""
        return tuple(dict.fromkeys(marker.hint for marker in (*self.opening, *self.closing)))

    def may_occur(self, lowered: str) -> bool:
        """Whether a text (in lower case) could hold a marker line at all: most replies cannot."""
        return any(hint in lowered for hint in self.hints)


@lru_cache(maxsize=64)
def _markers(open_: str | None, close: str | None) -> Markers:
    def side(default: str, own: str | None) -> tuple[Marker, ...]:
        markers = [Marker.of(default)]
        if own is not None and Marker.of(own).kind != "fence" and Marker.of(own).form != markers[0].form:
            markers.append(Marker.of(own))
        return tuple(markers)

    return Markers(side(BEGIN_MARKER, open_), side(END_MARKER, close))


BOUNDARY = Markers.of()  # the markers of the built-in conditions, the only ones a reply to them is cut at


def is_marker_line(line: str, markers: Markers = BOUNDARY) -> bool:
    """Whether `line` is a marker line of `markers` (default: BEGIN TEXT or END TEXT), restyled or not
    ("**END TEXT**").

    The same comparison the extraction cuts at, exposed so that other stages (the
    validity check's marker echoes) agree with the scorer on what a marker line is.
    """
    return any(marker.matches(line) for marker in (*markers.opening, *markers.closing))


def cut_markers(text: str, markers: Markers) -> tuple[str, str | None, str | None]:
    """Cut at the first opening and the last closing marker line after it; (text, cut before or None, cut
    after or None).

    A marker line is compared as `common.markers` says (words after normalisation,
    tags by name), so an echo the model restyled ("**END TEXT**", "----- END TEXT -----",
    "<document id=1>") still marks where its text ends.
    """
    lowered = text.lower()
    if not markers.may_occur(lowered):  # no line can be a marker line
        return text, None, None
    lines = text.split("\n")
    candidates = _hint_lines(lowered, lines, markers.hints)
    opening, closing = markers.texts
    first = next((i for i in candidates if _is_marker(opening, lines[i])), None)
    start = 0 if first is None else first + 1  # the closing line is the last one after the opening line
    last = next((i for i in reversed(candidates) if i >= start and _is_marker(closing, lines[i])), None)
    cut_before = None if first is None else "\n".join(lines[:start])
    cut_after = None if last is None else "\n".join(lines[last:])
    return "\n".join(lines[start:last]), cut_before, cut_after


def _hint_lines(lowered: str, lines: list[str], hints: tuple[str, ...]) -> list[int]:
    """The numbers of the lines that hold a hint (in lower case), in order: only those can be marker lines.

    In ASCII, lower case is taken character by character, so the lowered text's lines are the lines lowered,
    and the hints are found in it at once; otherwise each line is lowered on its own, as `Marker.matches` does.
    """
    if not lowered.isascii() or any("\n" in hint for hint in hints):
        return [i for i, line in enumerate(lines) if any(hint in line.lower() for hint in hints)]
    found = set()
    for hint in hints:
        line, counted, at = 0, 0, lowered.find(hint)
        while at != -1:
            line += lowered.count("\n", counted, at)
            counted = at
            found.add(line)
            at = lowered.find(hint, at + 1)
    return sorted(found)


@lru_cache(maxsize=1 << 14)
def _is_marker(markers: tuple[str, ...], line: str) -> bool:
    """Whether `line` is one of the markers written `markers`. Memoised: the lines that hold a hint are mostly the
    same few lines ("Here is the revised text:", an echoed END TEXT) in reply after reply. (Keyed by the
    markers' texts: a `Marker` hashes in Python, a string once.)"""
    return any(Marker.of(text).matches(line) for text in markers)
