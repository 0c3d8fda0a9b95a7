"""SVG primitives of the report's figures: elements, markers, and the legend and caption blocks.

The figures (`stats.rates_figure`, `stats.contrasts_figure`) are written as SVG text by hand:
no plotting library to install or pin, and the same bytes on every machine (coordinates
rounded to 0.1 px, fixed colours, no randomness), so `./reproduce.sh` compares them like the
tables. Legend and caption wrap to a width the figure chooses and report the room they take
(`Block`), measured with `stats.svg_boxes.text_width`, so the canvas can be made wide and tall
enough to hold them whatever the number of models.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

from stats.svg_boxes import FONT_SIZE, text_width

FONT_FAMILY = "Helvetica, Arial, sans-serif"
LINE_HEIGHT = 14.0  # between caption lines
LEGEND_ROW = 16.0
LEGEND_GAP = 16.0  # between two legend items of a row
CAPTION_GREY = "#555555"


def fmt(x: float) -> str:
    """A coordinate as written into the SVG: 0.1 px, so that the same figure gives the same bytes.

    >>> fmt(3.14159), fmt(-0.04)
    ('3.1', '0.0')
    """
    return f"{round(x, 1) + 0.0:.1f}"  # + 0.0: no "-0.0"


def text_svg(text: str, x: float, y: float, *, anchor: str = "start", angle: float = 0.0,
             fill: str | None = None, bold: bool = False) -> str:
    """A `<text>` element, escaped; rotated about its anchor when `angle` is not 0.

    >>> text_svg("a<b", 1, 2, anchor="end", angle=-45)
    '<text x="1.0" y="2.0" text-anchor="end" transform="rotate(-45 1.0 2.0)">a&lt;b</text>'
    """
    attributes = f'x="{fmt(x)}" y="{fmt(y)}"'
    if anchor != "start":
        attributes += f' text-anchor="{anchor}"'
    if bold:
        attributes += ' font-weight="bold"'
    if fill:
        attributes += f' fill="{fill}"'
    if angle:
        attributes += f' transform="rotate({angle:g} {fmt(x)} {fmt(y)})"'
    return f"<text {attributes}>{escape(text)}</text>"


def line_svg(x1: float, y1: float, x2: float, y2: float, colour: str, width: float = 1.0) -> str:
    """A `<line>` element.

    >>> line_svg(0, 1, 2, 3, "#333333")
    '<line x1="0.0" y1="1.0" x2="2.0" y2="3.0" stroke="#333333" stroke-width="1"/>'
    """
    return (f'<line x1="{fmt(x1)}" y1="{fmt(y1)}" x2="{fmt(x2)}" y2="{fmt(y2)}" stroke="{colour}" '
            f'stroke-width="{width:g}"/>')


# Marker outlines around (0, 0), each about as large as a circle of radius 4 (and within 5 px of the centre).
_OUTLINES = {
    "square": ((-3.6, -3.6), (3.6, -3.6), (3.6, 3.6), (-3.6, 3.6)),
    "triangle": ((0.0, -4.6), (-4.4, 3.2), (4.4, 3.2)),
    "diamond": ((0.0, -4.8), (4.8, 0.0), (0.0, 4.8), (-4.8, 0.0)),
    "inverted triangle": ((0.0, 4.6), (-4.4, -3.2), (4.4, -3.2)),
}
SHAPES = ("circle", *_OUTLINES)
MARKER_RADIUS = 5.6  # no marker (stroke included) reaches further from its centre


@dataclass(frozen=True)
class Marker:
    """How a series is drawn: a shape and a colour, filled or hollow (white inside, coloured outline).

    Shape as well as colour, so that the series can be told apart in grey print and by readers
    who do not see the colours."""

    shape: str
    colour: str
    filled: bool = True

    def __post_init__(self):
        if self.shape not in SHAPES:
            raise ValueError(f"shape: expected one of {', '.join(SHAPES)}, got {self.shape!r}")


def marker_svg(marker: Marker, x: float, y: float) -> str:
    """The marker centred on (x, y).

    >>> marker_svg(Marker("circle", "#0072B2"), 10, 20)
    '<circle cx="10.0" cy="20.0" r="4.0" fill="#0072B2"/>'
    >>> marker_svg(Marker("triangle", "#009E73", filled=False), 10, 20)
    '<polygon points="10.0,15.4 5.6,23.2 14.4,23.2" fill="#ffffff" stroke="#009E73" stroke-width="1.5"/>'
    """
    paint = (f'fill="{marker.colour}"' if marker.filled
             else f'fill="#ffffff" stroke="{marker.colour}" stroke-width="1.5"')
    if marker.shape == "circle":
        return f'<circle cx="{fmt(x)}" cy="{fmt(y)}" r="4.0" {paint}/>'
    points = " ".join(f"{fmt(x + dx)},{fmt(y + dy)}" for dx, dy in _OUTLINES[marker.shape])
    return f'<polygon points="{points}" {paint}/>'


def wrap_words(text: str, max_width: float, size: float = FONT_SIZE) -> tuple[str, ...]:
    """`text` broken at spaces into lines no wider than `max_width` px (a longer word keeps a line of its own).

    >>> wrap_words("one two three four", 60)
    ('one two', 'three four')
    """
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", size) <= max_width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return tuple(lines)


@dataclass(frozen=True)
class Block:
    """SVG elements laid out from a top-left corner, and the room they take."""

    elements: tuple[str, ...]
    width: float
    height: float


def legend_block(items: tuple[tuple[Marker, str], ...], left: float, top: float, max_width: float) -> Block:
    """The legend: marker and label side by side, wrapped into rows no wider than `max_width`
    (an item wider than that gets a row of its own).

    >>> items = ((Marker("circle", "#0072B2"), "newline"), (Marker("square", "#D55E00"), "blank"))
    >>> one_row, two_rows = legend_block(items, 0, 0, 400), legend_block(items, 0, 0, 80)
    >>> one_row.height, two_rows.height, round(two_rows.width, 1)
    (16.0, 32.0, 64.0)
    """
    rows: list[list[tuple[Marker, str, float]]] = [[]]
    row_width = 0.0
    for marker, label in items:
        width = 2 * MARKER_RADIUS + 4 + text_width(label)
        if rows[-1] and row_width + LEGEND_GAP + width > max_width:
            rows.append([])
            row_width = 0.0
        row_width += (LEGEND_GAP if rows[-1] else 0.0) + width
        rows[-1].append((marker, label, width))
    elements, widest = [], 0.0
    for number, row in enumerate(rows):
        x, middle = left, top + number * LEGEND_ROW + LEGEND_ROW / 2
        for marker, label, width in row:
            elements.append(marker_svg(marker, x + MARKER_RADIUS, middle))
            elements.append(text_svg(label, x + 2 * MARKER_RADIUS + 4, middle + 4))
            x += width + LEGEND_GAP
        widest = max(widest, x - LEGEND_GAP - left)
    return Block(tuple(elements), widest, LEGEND_ROW * len(rows) if items else 0.0)


def caption_block(text: str, left: float, top: float, max_width: float) -> Block:
    """A caption in grey, wrapped into lines no wider than `max_width` where the words allow.

    >>> block = caption_block("whiskers: 95% Wilson interval", 12, 40, 120)
    >>> print("\\n".join(block.elements), block.height)
    <text x="12.0" y="51.0" fill="#555555">whiskers: 95%</text>
    <text x="12.0" y="65.0" fill="#555555">Wilson interval</text> 28.0
    """
    lines = wrap_words(text, max_width)
    elements = tuple(text_svg(line, left, top + FONT_SIZE + i * LINE_HEIGHT, fill=CAPTION_GREY)
                     for i, line in enumerate(lines))
    return Block(elements, max((text_width(line) for line in lines), default=0.0), LINE_HEIGHT * len(lines))


def svg_document(width: float, height: float, title: str, body: list[str]) -> str:
    """The whole SVG file: white canvas of `width` x `height` px, its title, then `body`.

    >>> print(svg_document(20, 10, "T", ["<g/>"]), end="")  # doctest: +NORMALIZE_WHITESPACE
    <svg xmlns="http://www.w3.org/2000/svg" width="20.0" height="10.0" viewBox="0 0 20.0 10.0"
     font-family="Helvetica, Arial, sans-serif" font-size="11">
    <title>T</title>
    <rect x="0" y="0" width="20.0" height="10.0" fill="#ffffff"/>
    <g/>
    </svg>
    """
    size = f'width="{fmt(width)}" height="{fmt(height)}"'
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" {size} viewBox="0 0 {fmt(width)} {fmt(height)}" '
            f'font-family="{FONT_FAMILY}" font-size="{FONT_SIZE:g}">',
            f"<title>{escape(title)}</title>",
            f'<rect x="0" y="0" {size} fill="#ffffff"/>']
    return "\n".join(head + body + ["</svg>"]) + "\n"
