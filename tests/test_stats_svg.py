"""The figures hold everything they draw, for 1 to 20 models with short or long names, byte for byte.

A browser's own text boxes are the final word (checked elsewhere); these tests read each SVG
back with `stats.svg_boxes`, whose per-character widths err on the wide side, and check that
every text and every shape lies inside the viewBox, that no two upright texts overlap, and that
the same input gives the same bytes.
"""

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from stats.contrasts_figure import Band, Difference, contrasts_figure
from stats.rates_figure import STYLES, Point, Series, rates_figure
from stats.svg import Marker, legend_block
from stats.svg_boxes import canvas_box, outside_canvas, shape_boxes, text_boxes, text_width

ROOT = Path(__file__).resolve().parents[1]
NS = "{http://www.w3.org/2000/svg}"
CONDITIONS = ("newline", "blank", "boundary", "mitigation", "native")
CONTRASTS = ("newline vs blank", "newline vs boundary", "boundary vs mitigation", "newline vs native")
COUNTS = (1, 2, 3, 7, 20)


def model_names(count: int, length: str) -> tuple[str, ...]:
    """Short ("m0") or long names, the long ones with wide letters (W, M) and of varied length."""
    if length == "short":
        return tuple(f"m{i}" for i in range(count))
    stems = ("WMW-organisation/Meta-Llama-3.1-70B-Instruct-Q4_K_M-with-a-long-suffix", "qwen2.5-coder-0.5b",
             "MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM", "x")
    return tuple(f"{stems[i % len(stems)]}-{i}" for i in range(count))


def rates_input(count: int, length: str):
    models = model_names(count, length)
    series = []
    for s, name in enumerate(CONDITIONS):
        points = []
        for m in range(count):
            if (m + s) % 11 == 10:
                points.append(None)  # a model without usable rows under that condition
                continue
            rate = ((m * 37 + s * 19) % 101) / 100  # 0 to 1, both ends included somewhere
            points.append(Point(rate, max(0.0, rate - 0.12), min(1.0, rate + 0.12)))
        series.append(Series(name, tuple(points)))
    return models, tuple(series)


def contrasts_input(count: int, length: str):
    models = model_names(count, length)
    bands = []
    for c, name in enumerate(CONTRASTS):
        rows = []
        for m, model in enumerate(models):
            if (m + c) % 9 == 8:
                rows.append(Difference(model, math.nan, math.nan, math.nan, None))  # no pairs
                continue
            diff = ((m * 29 + c * 13) % 41 - 20) / 100  # -0.20 to +0.20
            rows.append(Difference(model, diff, max(-1.0, diff - 0.09), min(1.0, diff + 0.09), abs(diff) > 0.1))
        bands.append(Band(name, tuple(rows)))
    return tuple(bands)


def rates_svg(count, length):
    models, series = rates_input(count, length)
    return rates_figure(models, series, "Absorption rate per model")


def contrasts_svg(count, length):
    return contrasts_figure(contrasts_input(count, length), "Paired contrasts per model")


FIGURES = {"rates": rates_svg, "contrasts": contrasts_svg}


@pytest.mark.parametrize("figure", FIGURES)
@pytest.mark.parametrize("length", ["short", "long"])
@pytest.mark.parametrize("count", COUNTS)
def test_every_text_and_marker_lies_inside_the_canvas(figure, count, length):
    svg = FIGURES[figure](count, length)
    outside = [f"{p.kind} {p.label[:60]!r} at {p.box}" for p in outside_canvas(svg)]
    assert outside == [], f"{figure}.svg, {count} {length}-named models, canvas {canvas_box(svg)}"
    assert all(model in {p.label for p in text_boxes(svg)} for model in model_names(count, length))


@pytest.mark.parametrize("figure", FIGURES)
@pytest.mark.parametrize("length", ["short", "long"])
@pytest.mark.parametrize("count", COUNTS)
def test_no_two_upright_texts_overlap(figure, count, length):
    svg = FIGURES[figure](count, length)
    root = ET.fromstring(svg)
    upright = [p for p, element in zip(text_boxes(svg), root.iter(f"{NS}text"), strict=True)
               if element.get("transform") is None]
    clashes = [(a.label, b.label) for i, a in enumerate(upright) for b in upright[i + 1:] if a.box.overlaps(b.box)]
    assert clashes == []


@pytest.mark.parametrize("figure", FIGURES)
@pytest.mark.parametrize("count", COUNTS)
def test_the_same_input_gives_the_same_bytes(figure, count):
    assert FIGURES[figure](count, "long") == FIGURES[figure](count, "long")


def test_the_legend_and_the_caption_set_the_width_of_a_one_model_figure():
    # the reported bug: a 142 px canvas for one model, sized by the models only, clipped legend and caption
    svg = rates_svg(1, "short")
    canvas = canvas_box(svg)
    legend = [p for p in text_boxes(svg) if p.label in CONDITIONS]
    assert [p.label for p in legend] == list(CONDITIONS)
    assert max(p.box.right for p in legend) <= canvas.right
    assert canvas.right >= 300


def test_rates_draw_one_marker_per_point_with_its_own_style_per_condition():
    models, series = rates_input(7, "short")
    root = ET.fromstring(rates_figure(models, series, "t"))
    markers = [e for e in root.iter() if e.tag in (f"{NS}circle", f"{NS}polygon")]
    points = sum(p is not None for s in series for p in s.points)
    assert len(markers) == len(CONDITIONS) + points  # the legend's, then one per point
    styles = {(e.tag, e.get("fill"), len(e.get("points", "").split())) for e in markers}
    assert len(styles) == 5 == len({m.shape for m in STYLES}) == len({m.colour for m in STYLES[:5]})
    # ten series in all (a condition file's after the built-in five): each its own shape, fill and colour
    assert len(STYLES) == 10 == len({(m.shape, m.filled, m.colour) for m in STYLES})
    assert len({(m.shape, m.filled) for m in STYLES}) == 10  # told apart in grey print too
    assert "clean is the baseline" in " ".join(p.label for p in text_boxes(rates_figure(models, series, "t")))


def test_slots_widen_with_the_series_so_that_their_markers_do_not_touch():
    models, series = rates_input(20, "short")
    svg = rates_figure(models, series, "t")
    markers = [p.box for p in shape_boxes(svg) if p.kind in ("circle", "polygon")][len(CONDITIONS):]  # not the legend
    centres = sorted({round((b.left + b.right) / 2, 1) for b in markers})  # every shape is symmetric left-right
    assert len(centres) == sum(p is not None for s in series for p in s.points)
    assert min(b - a for a, b in zip(centres, centres[1:], strict=False)) >= 10


@pytest.mark.parametrize("series, message", [
    ((Series("a", (None,)),) * 11, "series: expected at most 10"),
    ((Series("a", (None, None)),), "series: 'a' has 2 points for 1 models"),
])
def test_rates_figure_refuses_what_it_cannot_draw(series, message):
    with pytest.raises(ValueError, match=message):
        rates_figure(("m",), series, "t")


def test_contrasts_put_positive_differences_right_of_zero_and_fill_only_significant_ones():
    band = Band("newline vs boundary", (Difference("reduces", 0.094, 0.019, 0.169, True),
                                       Difference("raises", -0.086, -0.182, 0.012, False),
                                       Difference("untested", math.nan, math.nan, math.nan, None)))
    svg = contrasts_figure((band,), "t")
    root = ET.fromstring(svg)
    zero = next(float(e.get("x1")) for e in root.iter(f"{NS}line") if e.get("stroke") == "#333333")
    legend, reduces, raises = list(root.iter(f"{NS}circle"))[:2], *list(root.iter(f"{NS}circle"))[2:]
    assert [e.get("fill") for e in legend] == ["#0072B2", "#ffffff"]
    assert float(reduces.get("cx")) > zero and reduces.get("fill") == "#0072B2"
    assert float(raises.get("cx")) < zero and raises.get("fill") == "#ffffff"
    texts = [p.label for p in text_boxes(svg)]
    assert "9.4 [1.9, 16.9] *" in texts and "-8.6 [-18.2, 1.2]" in texts and "no pairs" in texts
    caption = " ".join(texts)
    assert "first condition minus second" in caption and "the second condition absorbs less" in caption


def test_the_legend_wraps_into_rows_no_wider_than_asked():
    items = tuple((marker, name) for marker, name in zip(STYLES, CONDITIONS, strict=False))
    one_row = legend_block(items, 0, 0, 10_000)
    narrow = legend_block(items, 0, 0, 150)
    assert one_row.height == 16 and narrow.height > 16
    assert narrow.width <= 150 and narrow.width < one_row.width


def test_the_estimate_errs_on_the_wide_side():
    # Liberation Sans (Arial's metrics): 'W' 0.944 em, 'm' 0.833 em, 'i' 0.222 em, digits 0.556 em
    assert text_width("W") >= 0.944 * 11 and text_width("m") >= 0.833 * 11
    assert text_width("i") >= 0.222 * 11 and text_width("0123456789") >= 5.56 * 11
    clipped = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 142 100" font-size="11">'
               '<text x="100" y="20">boundary</text><circle cx="140" cy="50" r="4" fill="#000"/></svg>')
    assert [p.kind for p in outside_canvas(clipped)] == ["text", "circle"]


def test_a_marker_shape_must_be_known():
    with pytest.raises(ValueError, match="shape: expected one of circle, square"):
        Marker("star", "#000000")


@pytest.mark.parametrize("name", ["rates.svg", "contrasts.svg"])
def test_the_released_figures_hold_everything_they_draw(name):
    svg = (ROOT / "data" / "tables" / name).read_text(encoding="utf-8")
    assert outside_canvas(svg) == ()


def test_model_names_are_text_in_the_figures_whatever_they_hold():
    # Model names come from label rows; the report inlines both figures into its page.
    hostile = ('</svg><script>alert(1)</script><img src=x onerror=alert(2)> & "q" \'a\'', "m<b>")
    point = Point(0.5, 0.3, 0.7)
    figures = (rates_figure(hostile, (Series("newline", (point, point)),), "Rates of <b> & co"),
               contrasts_figure((Band("newline vs blank", tuple(Difference(m, 0.1, 0.0, 0.2, True)
                                                                   for m in hostile)),), "Contrasts <i>"))
    for svg in figures:
        assert "<script" not in svg and "<img" not in svg and "<b>" not in svg
        root = ET.fromstring(svg)  # well-formed: every name escaped
        texts = ["".join(t.itertext()) for t in root.iter(f"{NS}text")]
        assert all(name in texts for name in hostile)
        assert [child.tag for child in root.iter() if child.tag.removeprefix(NS) in ("script", "img", "b")] == []
