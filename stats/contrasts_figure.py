"""contrasts.svg: per contrast and model, the paired difference in absorption rate with its interval.

The figure of contrasts.csv, drawn as a forest plot: one band per contrast ("first vs second",
in the order of the table), one row per model within it, the difference first minus second in
percentage points as a marker on a horizontal axis centred on zero, its Newcombe interval as a
whisker, and the numbers on the right. Right of zero (positive) the second condition absorbs
less, as the table's `direction` "reduces" says; left of it, more. Holm-significant rows have
a filled marker and an asterisk, the others a hollow one, so significance reads in grey print
too. Rows stack downwards, so the figure stays legible from 1 model to 20 and more; the canvas
is as wide as the widest of plot, legend and caption.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from stats.render import interval_text
from stats.svg import (
    CAPTION_GREY,
    Marker,
    caption_block,
    fmt,
    legend_block,
    line_svg,
    marker_svg,
    svg_document,
    text_svg,
)
from stats.svg_boxes import DESCENT, FONT_SIZE, text_width

COLOUR = "#0072B2"  # Okabe-Ito blue
SIGNIFICANT, NOT_SIGNIFICANT = Marker("circle", COLOUR), Marker("circle", COLOUR, filled=False)
MARGIN = 12.0
AXIS_WIDTH = 360.0
ROW = 16.0  # per model
BAND_TITLE = 20.0  # the contrast's name above its rows
BAND_GAP = 8.0
INDENT = 10.0  # model names sit under their band's name
MIN_TEXT_WIDTH = 380.0  # legend and caption wrap at this width or the plot's, whichever is wider
SHADE = "#f3f3f3"  # every other row of a band
AXIS_TITLE = "first minus second (percentage points)"
STEPS = (1, 2, 5, 10, 20, 25, 50)  # tick steps, in percentage points


@dataclass(frozen=True)
class Difference:
    """One model's paired difference, first condition minus second, and its interval, as proportions
    (NaN without pairs); `significant` is the Holm-adjusted verdict (None without pairs)."""

    model: str
    difference: float
    low: float
    high: float
    significant: bool | None


@dataclass(frozen=True)
class Band:
    """One contrast ("newline vs boundary") and its models' differences, in the order to draw them."""

    name: str
    differences: tuple[Difference, ...]


def axis_extent(largest: float) -> tuple[int, int]:
    """The axis half-width and tick step (percentage points) for differences up to `largest` points
    either side of zero: at most 4 ticks a side, round numbers, at least 1 point.

    >>> axis_extent(18.2), axis_extent(3.0), axis_extent(0.0), axis_extent(100.0)
    ((20, 5), (3, 1), (1, 1), (100, 25))
    """
    if not largest >= 0:
        raise ValueError(f"largest: expected a number of at least 0, got {largest!r}")
    step = next((s for s in STEPS if math.ceil(largest / s) <= 4), STEPS[-1])
    return max(1, math.ceil(largest / step)) * step, step


def tick_label(points: int) -> str:
    """A tick of the difference axis, signed, with a true minus sign.

    >>> tick_label(-10), tick_label(0), tick_label(5)
    ('\u221210', '0', '+5')
    """
    return f"\u2212{-points}" if points < 0 else f"+{points}" if points > 0 else "0"


def value_text(difference: Difference) -> str:
    """The numbers of a row, as contrasts.md shows them, with an asterisk when significant.

    >>> value_text(Difference("m", 0.0939, 0.0194, 0.1688, True)), value_text(Difference("m", *[math.nan] * 3, None))
    ('9.4 [1.9, 16.9] *', 'no pairs')
    """
    if math.isnan(difference.difference):
        return "no pairs"
    return interval_text(difference.difference, difference.low, difference.high) + (
        " *" if difference.significant else "")


def _row_svg(row: Difference, centre: float, x_of) -> list[str]:
    out = []
    if not (math.isnan(row.low) or math.isnan(row.high)):
        low, high = x_of(row.low), x_of(row.high)
        out += [line_svg(low, centre, high, centre, COLOUR, 1.2),
                line_svg(low, centre - 3, low, centre + 3, COLOUR, 1.2),
                line_svg(high, centre - 3, high, centre + 3, COLOUR, 1.2)]
    return out + [marker_svg(SIGNIFICANT if row.significant else NOT_SIGNIFICANT, x_of(row.difference), centre)]


def contrasts_figure(bands: tuple[Band, ...], title: str, *, confidence_level: float = 0.95,
                     alpha: float = 0.05) -> str:
    """SVG text: one band per contrast, one row per model, the difference first minus second.

    >>> band = Band("newline vs boundary", (Difference("a", 0.094, 0.019, 0.169, True),
    ...                                     Difference("b", 0.050, -0.002, 0.099, False)))
    >>> svg = contrasts_figure((band,), "Contrasts")
    >>> svg.count("<circle"), svg.count("] *</text>")  # legend 2 + rows 2; a is significant
    (4, 1)
    """
    rows = [row for band in bands for row in band.differences]
    values = [abs(v) * 100 for row in rows for v in (row.difference, row.low, row.high) if not math.isnan(v)]
    extent, step = axis_extent(max(values, default=0.0))
    label_width = max((text_width(row.model) for row in rows), default=0.0)
    axis_left = MARGIN + INDENT + label_width + 10
    axis_right = axis_left + AXIS_WIDTH
    zero = (axis_left + axis_right) / 2
    value_left = axis_right + 12
    natural = value_left + max((text_width(value_text(row)) for row in rows), default=0.0) + MARGIN
    natural = max([natural] + [2 * MARGIN + text_width(band.name, bold=True) for band in bands])
    text_room = max(natural, MIN_TEXT_WIDTH) - 2 * MARGIN
    legend = legend_block(((SIGNIFICANT, f"significant: Holm-adjusted p < {alpha:g}, also marked *"),
                           (NOT_SIGNIFICANT, "not significant")), MARGIN, MARGIN, text_room)
    caption = caption_block(
        f"Each row: one model's difference in absorption rate, first condition minus second, in percentage "
        f"points, with its {confidence_level:.0%} Newcombe interval (numbers on the right, as in contrasts.csv). "
        "Positive, right of zero: the second condition absorbs less (it reduces absorption); negative: it "
        "absorbs more. Test: exact McNemar, Holm-adjusted across the models of each contrast.",
        MARGIN, MARGIN + legend.height + 4, text_room)
    width = max(natural, legend.width + 2 * MARGIN, caption.width + 2 * MARGIN)

    def x_of(p: float) -> float:
        return zero + p * 100 / extent * AXIS_WIDTH / 2

    hints_y = MARGIN + legend.height + 4 + caption.height + 16
    ticks_y = hints_y + 16
    top = ticks_y + 6
    bottom = top + 8 + sum(BAND_TITLE + ROW * len(band.differences) + BAND_GAP for band in bands) - BAND_GAP
    shades, grid, drawn = [], [], []
    for points in range(-extent, extent + 1, step):
        x = x_of(points / 100)
        grid += [line_svg(x, top, x, bottom, "#333333" if points == 0 else "#dddddd", 1.2 if points == 0 else 1),
                 text_svg(tick_label(points), x, ticks_y, anchor="middle"),
                 text_svg(tick_label(points), x, bottom + 14, anchor="middle")]
    y = top + 4
    for band in bands:
        drawn.append(text_svg(band.name, MARGIN, y + 14, bold=True))
        y += BAND_TITLE
        for number, row in enumerate(band.differences):
            if number % 2:
                shades.append(f'<rect x="{fmt(MARGIN)}" y="{fmt(y)}" width="{fmt(width - 2 * MARGIN)}" '
                              f'height="{fmt(ROW)}" fill="{SHADE}"/>')
            centre = y + ROW / 2
            drawn.append(text_svg(row.model, axis_left - 10, centre + 4, anchor="end"))
            if not math.isnan(row.difference):
                drawn += _row_svg(row, centre, x_of)
            drawn.append(text_svg(value_text(row), value_left, centre + 4,
                                  fill=None if not math.isnan(row.difference) else CAPTION_GREY))
            y += ROW
        y += BAND_GAP
    body = [*legend.elements, *caption.elements,
            text_svg("\u2190 second absorbs more", zero - 6, hints_y, anchor="end"),
            text_svg("second absorbs less \u2192", zero + 6, hints_y), *shades, *grid, *drawn]
    body.append(text_svg(AXIS_TITLE, zero, bottom + 30, anchor="middle"))
    height = bottom + 30 + DESCENT * FONT_SIZE + MARGIN
    return svg_document(width, height, title, body)
