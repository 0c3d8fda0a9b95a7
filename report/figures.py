"""The figures of a page of `seam.py compare`, with each model marked as the tables mark it.

A compare folder's tables have a first column `origin` (`released` or `yours`), and the page names each model
in its rates table as "model (yours)" or "model (released)". Its figures are drawn here again from the same two
tables, rates.csv and contrasts.csv (the numbers the figures of `seam.py tables` are drawn from, as written),
by the same drawing code (stats/rates_figure.py, stats/contrasts_figure.py), with every model named that way,
so that a reader tells the user's models from the released ones in the figures too. The models stand in the
tables' order: the released ones first, then the user's. Any other page (the release's, a study's) shows its
folder's rates.svg and contrasts.svg byte for byte, as before: `compare_figures` gives nothing for it.
"""

from __future__ import annotations

import math

from benchmark.conditions import ConditionSet
from report.tables import Folder
from stats.contrasts_figure import Band, Difference, contrasts_figure
from stats.rates_figure import Point, Series, rates_figure
from stats.schema import origin_of, records
from stats.settings import TableSettings
from stats.specs import CONTRASTS, RATES

DEFAULT_SETTINGS = TableSettings()  # compare's: its figures' 95% intervals and Holm's alpha of 0.05

# Said under each figure of a compare page.
MARKS = "Each model is named as in the tables: (yours) marks your models, (released) the released ones."


def marked(model: str, origin: str | None) -> str:
    """A model's name in a compare page's figures.

    >>> marked("gpt-x", "yours"), marked("smollm2-135m", "released"), marked("m", None)
    ('gpt-x (yours)', 'smollm2-135m (released)', 'm')
    """
    return f"{model} ({origin})" if origin else model


def _number(value) -> float:
    """A cell of an interval or difference as drawn: NaN where the table has none (no pairs)."""
    return math.nan if value is None else float(value)


def rates_svg(rates, defined: ConditionSet, settings: TableSettings = DEFAULT_SETTINGS) -> str:
    """rates.svg of a compare folder's rates table, every model marked with its origin."""
    rows = records(rates)
    origins = {row.model: origin_of(row) for row in rows}
    models = tuple(origins)  # the table's order: released first, then yours
    cells = {(row.model, row.condition): row for row in rows}
    treatments = set(defined.treatments)
    conditions = [name for name in defined.order({row.condition for row in rows})
                  if name in treatments or name not in defined.names]
    series = []
    for condition in conditions:
        points = []
        for model in models:
            row = cells.get((model, condition))
            if row is None or not row.n or row.rate is None:
                points.append(None)
                continue
            points.append(Point(row.rate, _number(row.ci_low), _number(row.ci_high)))
        series.append(Series(condition, tuple(points)))
    return rates_figure(tuple(marked(model, origins[model]) for model in models), tuple(series),
                        f"Absorption rate per model: {', '.join(conditions)}",
                        confidence_level=settings.confidence_level)


def contrasts_svg(contrasts, origins: dict[str, str], settings: TableSettings = DEFAULT_SETTINGS) -> str:
    """contrasts.svg of a compare folder's contrasts table, one band per contrast in the table's order, every
    model marked with its origin (the rates table's, else the row's own)."""
    bands: dict[str, list[Difference]] = {}
    for row in records(contrasts):
        name = marked(row.model, origins.get(row.model) or origin_of(row))
        bands.setdefault(row.contrast, []).append(
            Difference(name, _number(row.diff), _number(row.ci_low), _number(row.ci_high), row.significant))
    return contrasts_figure(tuple(Band(name, tuple(found)) for name, found in bands.items()),
                            "Paired contrasts per model: difference in absorption rate, first minus second",
                            confidence_level=settings.confidence_level, alpha=settings.alpha)


def compare_figures(tables: Folder, defined: ConditionSet) -> dict[str, str]:
    """The figures of a compare folder's page by file name (rates.svg, contrasts.svg), drawn with every model
    marked; {} for any other folder (its tables have no origin), whose page shows its SVG files as they are."""
    rates = tables.absorption.get(RATES.name)
    if rates is None:
        return {}
    origins = {row.model: origin_of(row) for row in records(rates) if origin_of(row)}
    if not origins:
        return {}
    figures = {"rates.svg": rates_svg(rates, defined)}
    contrasts = tables.absorption.get(CONTRASTS.name)
    if contrasts is not None:
        figures["contrasts.svg"] = contrasts_svg(contrasts, origins)
    return figures
