"""The figure: per-model absorption rates under newline, blank and boundary, with intervals.

Written as SVG text by hand, so that it needs no plotting library and comes out
byte-identical every time (fixed coordinates rounded to 0.1 px, fixed colours).
Each series has its own marker shape as well as colour (Okabe-Ito palette), so
it reads in grey print and for colour-blind readers.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

# Okabe & Ito (2008) colour-blind-safe colours, one marker shape per series.
STYLES = (("#0072B2", "circle"), ("#D55E00", "square"), ("#009E73", "triangle"))

PLOT_HEIGHT = 260.0
TOP = 56.0
LEFT = 64.0
RIGHT = 24.0
SLOT = 54.0  # horizontal room per model
CHAR = 6.2  # approximate width of a label character at font-size 11


@dataclass(frozen=True)
class Point:
    """A rate and the ends of its interval, as proportions."""

    rate: float
    low: float
    high: float


@dataclass(frozen=True)
class Series:
    """One condition's points, one per model."""

    name: str
    points: tuple[Point | None, ...]  # one per model; None when that model has no usable rows


def _f(x: float) -> str:
    return f"{x:.1f}"


def _marker(shape: str, x: float, y: float, colour: str) -> str:
    if shape == "circle":
        return f'<circle cx="{_f(x)}" cy="{_f(y)}" r="4.0" fill="{colour}"/>'
    if shape == "square":
        return f'<rect x="{_f(x - 3.6)}" y="{_f(y - 3.6)}" width="7.2" height="7.2" fill="{colour}"/>'
    points = f"{_f(x)},{_f(y - 4.6)} {_f(x - 4.4)},{_f(y + 3.2)} {_f(x + 4.4)},{_f(y + 3.2)}"
    return f'<polygon points="{points}" fill="{colour}"/>'


def rates_figure(models: tuple[str, ...], series: tuple[Series, ...], title: str) -> str:
    """SVG text: one group of markers with interval whiskers per model (None: no marker for that model).

    >>> svg = rates_figure(("a", "b"), (Series("newline", (Point(0.5, 0.3, 0.7), None)),), "Rates")
    >>> svg.splitlines()[1], svg.count("<circle")  # the legend's marker and a's
    ('<title>Rates</title>', 2)
    """
    if len(series) > len(STYLES):
        raise ValueError(f"series: expected at most {len(STYLES)} (one per marker style), got {len(series)}")
    label_room = max([len(m) for m in models] + [4]) * CHAR * 0.72 + 16
    width = LEFT + RIGHT + SLOT * max(1, len(models))
    height = TOP + PLOT_HEIGHT + label_room + 8

    def y_of(p: float) -> float:
        return TOP + PLOT_HEIGHT * (1 - p)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" font-family="Helvetica, Arial, sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{_f(width)}" height="{_f(height)}" fill="#ffffff"/>',
    ]
    for tick in range(0, 101, 20):
        y = y_of(tick / 100)
        out.append(f'<line x1="{_f(LEFT)}" y1="{_f(y)}" x2="{_f(width - RIGHT)}" y2="{_f(y)}" '
                   f'stroke="#dddddd" stroke-width="1"/>')
        out.append(f'<text x="{_f(LEFT - 6)}" y="{_f(y + 4)}" text-anchor="end">{tick}</text>')
    middle = TOP + PLOT_HEIGHT / 2
    out.append(f'<text x="16.0" y="{_f(middle)}" text-anchor="middle" '
               f'transform="rotate(-90 16.0 {_f(middle)})">absorption rate (%)</text>')
    out.append(f'<line x1="{_f(LEFT)}" y1="{_f(TOP)}" x2="{_f(LEFT)}" y2="{_f(TOP + PLOT_HEIGHT)}" '
               f'stroke="#333333" stroke-width="1"/>')
    # legend
    x = LEFT
    for (colour, shape), s in zip(STYLES, series, strict=False):
        out.append(_marker(shape, x + 4, 20.0, colour))
        out.append(f'<text x="{_f(x + 14)}" y="{_f(24.0)}">{escape(s.name)}</text>')
        x += 28 + len(s.name) * CHAR
    out.append(f'<text x="{_f(LEFT)}" y="{_f(44.0)}" fill="#555555">markers: rate; whiskers: 95% Wilson '
               f'interval</text>')
    offsets = [(i - (len(series) - 1) / 2) * 13.0 for i in range(len(series))]
    for j, model in enumerate(models):
        centre = LEFT + SLOT * (j + 0.5)
        for (colour, shape), s, dx in zip(STYLES, series, offsets, strict=False):
            point = s.points[j]
            if point is None:
                continue
            x = centre + dx
            top, bottom = y_of(point.high), y_of(point.low)
            out.append(f'<line x1="{_f(x)}" y1="{_f(top)}" x2="{_f(x)}" y2="{_f(bottom)}" '
                       f'stroke="{colour}" stroke-width="1.2"/>')
            for y in (top, bottom):
                out.append(f'<line x1="{_f(x - 3)}" y1="{_f(y)}" x2="{_f(x + 3)}" y2="{_f(y)}" '
                           f'stroke="{colour}" stroke-width="1.2"/>')
            out.append(_marker(shape, x, y_of(point.rate), colour))
        label_y = TOP + PLOT_HEIGHT + 14
        out.append(f'<text x="{_f(centre)}" y="{_f(label_y)}" text-anchor="end" '
                   f'transform="rotate(-45 {_f(centre)} {_f(label_y)})">{escape(model)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
