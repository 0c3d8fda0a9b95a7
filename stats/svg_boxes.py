"""Where things land in an SVG figure: estimated text widths, and the box of every text and shape.

An SVG file has no layout engine: a `<text>` is as wide as the font the viewer picks makes it,
so a canvas sized by guesswork clips its legend. The figures of `stats.rates_figure` and
`stats.contrasts_figure` therefore size their canvas from `text_width`, an estimate on the wide
side (per character, at least as wide as Liberation Sans/Arial and DejaVu Sans, the fonts
"Helvetica, Arial, sans-serif" usually resolves to), and `outside_canvas` reads a written SVG
back and names every text or shape whose estimated box leaves the viewBox, which the tests
check for 1 to 20 models. It is an estimate, not a renderer: a browser's own boxes are the
final word.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

FONT_SIZE = 11.0
ASCENT, DESCENT = 0.95, 0.25  # of a line of text, in em, above and below its baseline (generous)
BOLD = 1.1  # bold text is up to this much wider

_NARROW = frozenset(" fijlrtI.,:;'|!()[]/-")  # at most 0.42 em in either font
_WIDE = frozenset("mwMW%@")  # at most 1 em
_BROAD = frozenset("<=>+~#&^")  # at most 0.85 em
_NS = "{http://www.w3.org/2000/svg}"
_ROTATE = re.compile(r"rotate\((-?[0-9.]+) (-?[0-9.]+) (-?[0-9.]+)\)")


def char_em(char: str) -> float:
    """A character's width in em, rounded up over Liberation Sans and DejaVu Sans; 1 em if unknown.

    >>> char_em("i"), char_em("a"), char_em("A"), char_em("m"), char_em("\u2212")
    (0.42, 0.65, 0.8, 1.0, 1.0)
    """
    if char in _NARROW:
        return 0.42
    if char in _WIDE or not char.isascii():
        return 1.0
    if char in _BROAD:
        return 0.85
    return 0.8 if char.isupper() else 0.65


def text_width(text: str, size: float = FONT_SIZE, *, bold: bool = False) -> float:
    """The estimated width of `text` in px at font size `size`: never narrower than the real one.

    >>> round(text_width("newline"), 1), round(text_width("newline", bold=True), 1)
    (48.8, 53.7)
    """
    return sum(char_em(c) for c in text) * size * (BOLD if bold else 1.0)


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle in SVG coordinates (y grows downwards)."""

    left: float
    top: float
    right: float
    bottom: float

    def inside(self, outer: Box, slack: float = 0.05) -> bool:
        """Whether this box lies within `outer` (give or take `slack` px, the rounding of coordinates)."""
        return (self.left >= outer.left - slack and self.top >= outer.top - slack
                and self.right <= outer.right + slack and self.bottom <= outer.bottom + slack)

    def overlaps(self, other: Box) -> bool:
        """Whether the two boxes share more than an edge."""
        return (self.left < other.right and other.left < self.right
                and self.top < other.bottom and other.top < self.bottom)


def text_box(text: str, x: float, y: float, *, anchor: str = "start", size: float = FONT_SIZE,
             bold: bool = False, angle: float = 0.0) -> Box:
    """The box a line of text covers: anchored at (x, y) on its baseline, rotated by `angle`
    degrees about that point (as `transform="rotate(angle x y)"` does), then boxed again.

    >>> text_box("ab", 10, 20)
    Box(left=10.0, top=9.55, right=24.3, bottom=22.75)
    >>> box = text_box("ab", 10, 20, anchor="end", angle=-90)  # reads upwards: starts below (10, 20), ends there
    >>> [round(v, 2) for v in (box.left, box.top, box.right, box.bottom)]
    [-0.45, 20.0, 12.75, 34.3]
    """
    if anchor not in ("start", "middle", "end"):
        raise ValueError(f"anchor: expected 'start', 'middle' or 'end', got {anchor!r}")
    width = text_width(text, size, bold=bold)
    left = x - {"start": 0.0, "middle": width / 2, "end": width}[anchor]
    corners = [(left, y - ASCENT * size), (left + width, y - ASCENT * size),
               (left, y + DESCENT * size), (left + width, y + DESCENT * size)]
    if angle:
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        corners = [(x + (cx - x) * cos - (cy - y) * sin, y + (cx - x) * sin + (cy - y) * cos)
                   for cx, cy in corners]
    xs, ys = [cx for cx, _ in corners], [cy for _, cy in corners]
    return Box(min(xs), min(ys), max(xs), max(ys))


@dataclass(frozen=True)
class Placed:
    """One element of a written SVG and its estimated box: `kind` is its tag, `label` its text
    (or its attributes, for a shape), to name it in a message."""

    kind: str
    label: str
    box: Box


def canvas_box(svg: str) -> Box:
    """The viewBox of an SVG: what a viewer shows.

    >>> canvas_box('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120.0 80.5"/>')
    Box(left=0.0, top=0.0, right=120.0, bottom=80.5)
    """
    x, y, width, height = map(float, ET.fromstring(svg).get("viewBox", "").split())
    return Box(x, y, x + width, y + height)


def text_boxes(svg: str) -> tuple[Placed, ...]:
    """The estimated box of every `<text>` of an SVG written by `stats.svg`, in document order:
    its font size (its own or the root's), anchor, weight and rotation about its anchor.

    >>> svg = ('<svg xmlns="http://www.w3.org/2000/svg" font-size="10">'
    ...        '<text x="5" y="20" text-anchor="middle">ab</text></svg>')
    >>> text_boxes(svg)
    (Placed(kind='text', label='ab', box=Box(left=-1.5, top=10.5, right=11.5, bottom=22.5)),)
    """
    root = ET.fromstring(svg)
    size = float(root.get("font-size", FONT_SIZE))
    placed = []
    for element in root.iter(f"{_NS}text"):
        x, y = float(element.get("x", "0")), float(element.get("y", "0"))
        text = "".join(element.itertext())
        angle = 0.0
        transform = element.get("transform")
        if transform is not None:
            match = _ROTATE.fullmatch(transform)
            if not match or (float(match[2]), float(match[3])) != (x, y):
                raise ValueError(f"transform: expected rotate(angle x y) about the text's own x, y, "
                                 f"got {transform!r} on {text!r}")
            angle = float(match[1])
        placed.append(Placed("text", text, text_box(text, x, y, anchor=element.get("text-anchor", "start"),
                                                     size=float(element.get("font-size", size)),
                                                     bold=element.get("font-weight") == "bold", angle=angle)))
    return tuple(placed)


def _shape_box(element: ET.Element) -> Box:
    number = lambda name: float(element.get(name, "0"))  # noqa: E731
    half = number("stroke-width") / 2 if element.get("stroke") else 0.0
    tag = element.tag.removeprefix(_NS)
    if tag == "circle":
        r = number("r") + half
        return Box(number("cx") - r, number("cy") - r, number("cx") + r, number("cy") + r)
    if tag == "rect":
        return Box(number("x") - half, number("y") - half, number("x") + number("width") + half,
                   number("y") + number("height") + half)
    if tag == "line":
        xs, ys = (number("x1"), number("x2")), (number("y1"), number("y2"))
    else:  # polygon
        pairs = [tuple(map(float, point.split(","))) for point in element.get("points", "").split()]
        xs, ys = tuple(x for x, _ in pairs), tuple(y for _, y in pairs)
    return Box(min(xs) - half, min(ys) - half, max(xs) + half, max(ys) + half)


def shape_boxes(svg: str) -> tuple[Placed, ...]:
    """The box of every shape (circle, rect, line, polygon; strokes included) of an SVG, in
    document order. Other drawing elements and transformed shapes are refused: the estimate
    could not place them.

    >>> svg = ('<svg xmlns="http://www.w3.org/2000/svg"><circle cx="5" cy="5" r="4"/>'
    ...        '<line x1="0" y1="2" x2="9" y2="2" stroke="#000" stroke-width="2"/></svg>')
    >>> [placed.box for placed in shape_boxes(svg)]
    [Box(left=1.0, top=1.0, right=9.0, bottom=9.0), Box(left=-1.0, top=1.0, right=10.0, bottom=3.0)]
    """
    placed = []
    for element in ET.fromstring(svg).iter():
        tag = element.tag.removeprefix(_NS)
        if tag in ("svg", "title", "text"):
            continue
        if tag not in ("circle", "rect", "line", "polygon") or element.get("transform") is not None:
            raise ValueError(f"svg: cannot place <{tag}> {element.attrib} (only untransformed circle, rect, "
                             "line and polygon)")
        placed.append(Placed(tag, " ".join(f"{k}={v}" for k, v in element.attrib.items()), _shape_box(element)))
    return tuple(placed)


def outside_canvas(svg: str) -> tuple[Placed, ...]:
    """Every text and shape of an SVG whose estimated box leaves its viewBox (a viewer would clip it).

    >>> svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 20" font-size="11">'
    ...        '<text x="2" y="14">fits</text><text x="2" y="14">does not fit</text></svg>')
    >>> [placed.label for placed in outside_canvas(svg)]
    ['does not fit']
    """
    canvas = canvas_box(svg)
    return tuple(p for p in text_boxes(svg) + shape_boxes(svg) if not p.box.inside(canvas))
