"""rates.svg: the absorption rate per model under each treatment condition, with Wilson intervals.

One slot per model, one marker per condition within it (each condition its own Okabe-Ito
colour and its own shape, so it reads in grey print and for colour-blind readers), the legend
and a short caption above the plot, the model names rotated below it. The canvas is as wide as
the widest of plot, legend and caption and as tall as the longest model name needs, so nothing
is clipped for 1 model or 20 (`stats.svg_boxes.outside_canvas` checks it in the tests).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from stats.svg import (
    Marker,
    caption_block,
    fmt,
    legend_block,
    line_svg,
    marker_svg,
    svg_document,
    text_svg,
)
from stats.svg_boxes import ASCENT, FONT_SIZE, text_box

# Okabe & Ito (2008) colour-blind-safe colours, one marker style per series: the five shapes filled (the
# built-in treatments), then hollow in other colours (a condition file's, up to five more).
STYLES = (Marker("circle", "#0072B2"), Marker("square", "#D55E00"), Marker("triangle", "#009E73"),
          Marker("diamond", "#CC79A7"), Marker("inverted triangle", "#E69F00"),
          Marker("circle", "#56B4E9", filled=False), Marker("square", "#000000", filled=False),
          Marker("triangle", "#D55E00", filled=False), Marker("diamond", "#009E73", filled=False),
          Marker("inverted triangle", "#0072B2", filled=False))
MARGIN = 12.0
PLOT_HEIGHT = 260.0
AXIS_LEFT = 64.0  # smallest left edge of the plot: the axis title and the tick labels
SERIES_STEP = 11.0  # between two markers of one model
MIN_SLOT = 54.0  # horizontal room per model, at least
MIN_TEXT_WIDTH = 420.0  # legend and caption wrap at this width or the plot's, whichever is wider
LABEL_ANGLE = -45.0  # model names read upwards to the right, ending under their slot
SHADE = "#f3f3f3"  # every other model's slot


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


def slot_width(series_count: int) -> float:
    """The horizontal room per model: wide enough to keep every series' marker and whisker apart.

    >>> slot_width(1), slot_width(5)
    (54.0, 73.0)
    """
    return max(MIN_SLOT, series_count * SERIES_STEP + 18.0)


def _label_reach(model: str) -> tuple[float, float]:
    """How far a rotated model name reaches left of and below its anchor."""
    box = text_box(model, 0.0, 0.0, anchor="end", angle=LABEL_ANGLE)
    return -box.left, box.bottom


def plot_left(models: tuple[str, ...], slot: float) -> float:
    """The plot's left edge: right of the axis labels, and far enough right that each rotated
    model name, which reaches down and to the left of its slot's centre, stays on the canvas.

    >>> plot_left(("a",), 54.0), round(plot_left(("a-very-long-model-name-of-forty-characters",), 54.0), 1)
    (64.0, 173.8)
    """
    needed = [_label_reach(model)[0] + MARGIN / 2 - slot * (j + 0.5) for j, model in enumerate(models)]
    return max([AXIS_LEFT, *needed])


def _series_svg(marker: Marker, point: Point, x: float, y_of) -> list[str]:
    top, bottom = y_of(point.high), y_of(point.low)
    return [line_svg(x, top, x, bottom, marker.colour, 1.2),
            line_svg(x - 3, top, x + 3, top, marker.colour, 1.2),
            line_svg(x - 3, bottom, x + 3, bottom, marker.colour, 1.2),
            marker_svg(marker, x, y_of(point.rate))]


def rates_figure(models: tuple[str, ...], series: tuple[Series, ...], title: str, *,
                 confidence_level: float = 0.95) -> str:
    """SVG text: per model, each series' rate as a marker with its interval as a whisker (None: none).

    The conditions are treatments; clean, the baseline every treatment is scored against, has no
    rate of its own, and the caption says so.

    >>> svg = rates_figure(("a", "b"), (Series("newline", (Point(0.5, 0.3, 0.7), None)),), "Rates")
    >>> svg.splitlines()[1], svg.count("<circle")  # the legend's marker and a's
    ('<title>Rates</title>', 2)
    """
    if len(series) > len(STYLES):
        raise ValueError(f"series: expected at most {len(STYLES)} (one per marker style), got {len(series)}")
    for s in series:
        if len(s.points) != len(models):
            raise ValueError(f"series: {s.name!r} has {len(s.points)} points for {len(models)} models")
    slot = slot_width(len(series))
    left = plot_left(models, slot)
    right = left + slot * max(1, len(models))
    text_room = max(right + MARGIN, MIN_TEXT_WIDTH) - 2 * MARGIN
    legend = legend_block(tuple(zip(STYLES, (s.name for s in series), strict=False)), MARGIN, MARGIN, text_room)
    caption = caption_block(f"Markers: absorption rate (%); whiskers: {confidence_level:.0%} Wilson score "
                            "interval. No clean series: clean is the baseline every treatment is scored against.",
                            MARGIN, MARGIN + legend.height + 4, text_room)
    top = MARGIN + legend.height + 4 + caption.height + 14
    bottom = top + PLOT_HEIGHT
    label_y = bottom + 12
    reach_down = max([_label_reach(m)[1] for m in models] + [0.0])
    width = max(right + MARGIN, legend.width + 2 * MARGIN, caption.width + 2 * MARGIN)
    height = label_y + reach_down + MARGIN

    def y_of(p: float) -> float:
        return top + PLOT_HEIGHT * (1 - p)

    body = [*legend.elements, *caption.elements]
    body += [f'<rect x="{fmt(left + slot * j)}" y="{fmt(top)}" width="{fmt(slot)}" height="{fmt(PLOT_HEIGHT)}" '
             f'fill="{SHADE}"/>' for j in range(1, len(models), 2)]
    for tick in range(0, 101, 20):
        y = y_of(tick / 100)
        body.append(line_svg(left, y, right, y, "#dddddd"))
        body.append(text_svg(str(tick), left - 6, y + 4, anchor="end"))
    middle = top + PLOT_HEIGHT / 2
    axis_x = MARGIN + ASCENT * FONT_SIZE
    body.append(text_svg("absorption rate (%)", axis_x, middle, anchor="middle", angle=-90))
    body.append(line_svg(left, top, left, bottom, "#333333"))
    offsets = [(i - (len(series) - 1) / 2) * SERIES_STEP for i in range(len(series))]
    for j, model in enumerate(models):
        centre = left + slot * (j + 0.5)
        for marker, s, dx in zip(STYLES, series, offsets, strict=False):
            point = s.points[j]
            if point is not None and not math.isnan(point.rate):
                body += _series_svg(marker, point, centre + dx, y_of)
        body.append(text_svg(model, centre, label_y, anchor="end", angle=LABEL_ANGLE))
    return svg_document(width, height, title, body)

