"""The figures on a page of `seam.py compare` mark each model as its tables do (issue 36): "model (yours)" for the
user's models, "model (released)" for the released ones, as the page's rates table names them; the figures of
the release's own pages stay byte for byte what they were (./reproduce.sh compares the pages whole).

The marked figures are drawn again from the compare folder's rates.csv and contrasts.csv (report/figures.py); drawn
that way from the released tables, which have no origin, they are the released figures themselves."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from support.fakeserver import config_keys, serve, toml_text

import seam
from benchmark import conditions
from report.figures import MARKS, compare_figures, contrasts_svg, rates_svg
from report.tables import read_folder
from stats.svg_boxes import outside_canvas

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


@pytest.fixture(scope="module")
def compared(tmp_path_factory) -> Path:
    """A new model's traces (3 clusters x 6 conditions) from the fake server, compared with the release."""
    home = tmp_path_factory.mktemp("user")
    with serve() as server:
        config = home / "new-model.toml"
        config.write_text(toml_text(config_keys(server, name="new-model")), encoding="utf-8")
        traces = home / "runs" / "new-model.jsonl"
        assert seam.main(["run", str(config), "--first", "3", "--out", str(traces)]) == 0
    out = home / "runs" / "compare"
    assert seam.main(["compare", str(traces), "--out", str(out)]) == 0
    return out


def _figure(page: str, name: str) -> tuple[str, str]:
    """A figure of the page: its SVG and its caption."""
    found = re.search(f'<figure id="figure-{name}">(<svg.*?</svg>\n?)<figcaption>(.*?)</figcaption></figure>', page,
                      re.S)
    assert found, f"no figure {name} on the page"
    return found.group(1), found.group(2)


def _origins(folder: Path) -> dict[str, str]:
    with open(folder / "tables" / "rates.csv", newline="", encoding="utf-8") as f:
        return {row["model"]: row["origin"] for row in csv.DictReader(f)}


def test_a_compare_pages_figures_name_each_model_as_its_tables_do(compared):
    origins = _origins(compared)
    assert origins["new-model"] == "yours" and "released" in origins.values()
    page = (compared / "report.html").read_text(encoding="utf-8")
    for name in ("rates", "contrasts"):
        svg, caption = _figure(page, name)
        for model, origin in origins.items():
            assert f">{model} ({origin})</text>" in svg, (name, model)
            assert f">{model}</text>" not in svg, (name, model)  # no model left unmarked
        assert MARKS in caption
        assert outside_canvas(svg) == (), name  # the longer names still fit
    rates, _ = _figure(page, "rates")  # the user's models after the released ones, as in the tables
    positions = {model: rates.index(f">{model} ({origin})</text>") for model, origin in origins.items()}
    assert max(p for m, p in positions.items() if origins[m] == "released") < positions["new-model"]


def test_the_svg_files_compare_writes_are_the_pages_figures_byte_for_byte(compared):
    """OUT/tables/rates.svg and contrasts.svg mark each model too (they used to be drawn unmarked, so a figure
    taken from the folder did not tell the user's models from the released ones)."""
    page = (compared / "report.html").read_text(encoding="utf-8")
    for name in ("rates", "contrasts"):
        svg, _ = _figure(page, name)
        written = (compared / "tables" / f"{name}.svg").read_text(encoding="utf-8")
        assert written.rstrip("\n") == svg.rstrip("\n")
        assert ">new-model (yours)</text>" in written


def test_the_page_says_which_is_which_only_where_there_are_origins():
    page = (DATA / "report.html").read_text(encoding="utf-8")
    for name in ("rates", "contrasts"):
        svg, caption = _figure(page, name)
        assert svg == (DATA / "tables" / f"{name}.svg").read_text(encoding="utf-8")  # the release's, as it was
        assert MARKS not in caption and "(released)" not in svg


@pytest.mark.parametrize("folder, condition_file", [("tables", None),
                                                    ("studies/example/tables", "conditions/example.toml")])
def test_drawn_from_tables_without_origins_the_figures_are_the_released_ones(folder, condition_file):
    """The redrawing reads the numbers the figures are drawn from as the tables wrote them: with nothing to mark,
    it gives the released figures byte for byte (the built-in conditions, and a condition file's study)."""
    tables = read_folder(DATA / folder)
    defined = conditions.load(None if condition_file is None else str(DATA / condition_file))
    assert compare_figures(tables, defined) == {}  # no origin: the page shows the folder's files
    assert rates_svg(tables.absorption["rates"], defined) == (DATA / folder / "rates.svg").read_text(encoding="utf-8")
    assert contrasts_svg(tables.absorption["contrasts"], {}) == (DATA / folder / "contrasts.svg").read_text(
        encoding="utf-8")
