"""Paired contrasts of two conditions per model, Holm-adjusted across models, and the table of them.

One row builder and one table builder for the absorption contrasts
(`stats.tables`: newline vs blank, newline vs boundary, ...) and for the
validity checks' contrasts of each treatment with clean (`validity.tables`), so
both are tested, seeded, adjusted and written the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from stats.holm import holm_adjust
from stats.paired import PairedComparison, compare_paired
from stats.rates import NAN
from stats.render import Column, Table, interval_text
from stats.schema import TableSpec
from stats.settings import TableSettings
from stats.specs import CONTRASTS, DIRECTION


def contrast_name(first: str, second: str) -> str:
    """How a contrast is named in the tables.

    >>> contrast_name("newline", "boundary")
    'newline vs boundary'
    """
    return f"{first} vs {second}"


REDUCES, RAISES, NO_DIFFERENCE = "reduces", "raises", "none"


def direction_of(b: int, c: int, n: int | None = None) -> str | None:
    """Which way the second condition moves absorption relative to the first, from the discordant pairs.

    A contrast "first vs second" reports diff = p(first) - p(second) = (b - c)/n, so
    b > c (diff > 0) means the second condition absorbs less: it *reduces* absorption
    ("newline vs boundary" with b > c: the boundary markers reduce it); b < c means it
    *raises* it ("newline vs native" with b < c: native comments are absorbed more);
    b = c is "none". Without pairs (n = 0) there is no direction: None. Kept apart from
    `significant`, so that a count of significant results never takes an increase for
    a reduction.

    >>> direction_of(24, 9), direction_of(23, 35), direction_of(4, 4), direction_of(0, 0, n=0)
    ('reduces', 'raises', 'none', None)
    """
    if n == 0:
        return None
    return REDUCES if b > c else RAISES if b < c else NO_DIFFERENCE


@dataclass(frozen=True)
class ContrastRow:
    """One model's comparison of condition `first` with `second`, and its place in the Holm family."""

    model: str
    first: str
    second: str
    result: PairedComparison
    adjusted_pvalue: float  # the exact McNemar p, Holm-adjusted across the models; NaN without pairs
    significant: bool | None  # adjusted_pvalue < alpha; None without pairs

    @property
    def direction(self) -> str | None:
        """`direction_of` this row's discordant pairs: "reduces", "raises", "none", or None without pairs."""
        table = self.result.table
        return direction_of(table.first_only, table.second_only, table.n)


def paired_contrast_rows(outcomes: dict[tuple[str, str], dict[str, bool | None]], models,
                         contrasts, settings: TableSettings) -> list[ContrastRow]:
    """Each (first, second) contrast whose two conditions both occur in `outcomes`, per model,
    with the exact McNemar p Holm-adjusted across the models of that contrast.

    `outcomes[(model, condition)][cluster]` is True/False when usable and None when
    not. Models without a pair under both conditions have no test and are not part
    of the Holm family.

    >>> outcomes = {("m", "newline"): dict.fromkeys("abcdef", True),
    ...             ("m", "boundary"): dict.fromkeys("abcdef", False)}
    >>> (row,) = paired_contrast_rows(outcomes, ["m"], [("newline", "boundary")], TableSettings())
    >>> row.result.table.first_only, row.result.mcnemar.pvalue, row.adjusted_pvalue, row.significant
    (6, 0.03125, 0.03125, True)
    """
    rows = []
    present = {condition for _, condition in outcomes}
    for first, second in contrasts:
        if not (first in present and second in present):
            continue
        results = [(model, compare_paired(outcomes.get((model, first), {}), outcomes.get((model, second), {}),
                                          confidence_level=settings.confidence_level,
                                          permutations=settings.permutations, seed=settings.seed))
                   for model in models]
        raw = [r.mcnemar.pvalue if r.table.n else NAN for _, r in results]
        for (model, result), adjusted in zip(results, holm_adjust(raw), strict=True):
            significant = None if math.isnan(adjusted) else adjusted < settings.alpha
            rows.append(ContrastRow(model, first, second, result, adjusted, significant))
    return rows


def paired_contrasts_table(rows: list[ContrastRow], settings: TableSettings, notes: list[str], *,
                           spec: TableSpec = CONTRASTS, title: str = "Paired contrasts per model",
                           method: str | None = None) -> Table:
    """The table of contrast rows: raw numbers for the CSV, "diff [CI]" and rounded p-values for display.

    `method`, the note saying what b and c count, defaults to the absorption contrasts' one.
    The absorption contrasts (`spec` CONTRASTS, whose conditions are all treatments) have a
    `direction` column after `significant` (`direction_of`: whether the second condition
    reduces or raises absorption); the validity contrasts (treatment vs clean, of outcomes
    that are not absorption; validity/specs.py) have the same columns without it.

    >>> from stats.specs import PAIRED_VS_CLEAN
    >>> outcomes = {("m", "newline"): {"a": True, "b": True}, ("m", "blank"): {"a": False, "b": True}}
    >>> rows = paired_contrast_rows(outcomes, ["m"], [("newline", "blank")], TableSettings())
    >>> table = paired_contrasts_table(rows, TableSettings(), [], spec=TableSpec("t", PAIRED_VS_CLEAN))
    >>> [column.key for column in table.columns][:6], table.rows[0][:6]
    (['model', 'contrast', 'n_pairs', 'b', 'c', 'diff'], ('m', 'newline vs blank', 2, 1, 0, 0.5))
    >>> paired_contrasts_table(rows, TableSettings(), []).rows[0][11:13]
    (False, 'reduces')
    """
    direction = DIRECTION in spec.columns
    extra = (DIRECTION,) if direction else ()
    raw, shown = [], []
    for row in rows:
        r, table = row.result, row.result.table
        has = table.n > 0
        ci = r.confidence_interval
        way = (row.direction,) if direction else ()
        raw.append((row.model, contrast_name(row.first, row.second), table.n, table.first_only,
                    table.second_only, r.difference, ci.low, ci.high,
                    r.mcnemar.pvalue if has else None, r.permutation.pvalue if has else None,
                    row.adjusted_pvalue, row.significant, *way, r.permutation.method if has else None))
        shown.append((contrast_name(row.first, row.second), row.model, table.n, table.first_only,
                      table.second_only, interval_text(r.difference, ci.low, ci.high),
                      r.mcnemar.pvalue if has else None, r.permutation.pvalue if has else None,
                      row.adjusted_pvalue, row.significant, *way))
    display = Table(spec.name, "", (
        Column("contrast", "Contrast"), Column("model", "Model"), Column("n", "n", "int"),
        Column("b", "b", "int"), Column("c", "c", "int"), Column("diff", "Diff (pp) [95% CI]", align="r"),
        Column("p", "p McNemar", "pvalue"), Column("perm", "p perm.", "pvalue"),
        Column("holm", "p Holm", "pvalue"), Column("sig", "Sig.", "flag"), *extra), tuple(shown))
    if method is None:
        methods = sorted({row.result.permutation.method for row in rows if row.result.table.n})
        permutation = "exact enumeration" if methods in ([], ["exact"]) else (
            f"exact where feasible, otherwise Monte Carlo with {settings.permutations} sign vectors, "
            f"seed {settings.seed}, p = (k + 1)/(R + 1)")
        method = ("Paired on clusters usable under both conditions (n). b: absorbed only under the first "
                  "condition; c: only under the second; Diff = (b - c)/n, in percentage points, with a "
                  f"{settings.confidence_level:.0%} Newcombe (1998) hybrid score interval (method 10). p McNemar: "
                  "exact two-sided binomial test on the discordant pairs; p perm.: paired sign-flip permutation "
                  f"test ({permutation}); p Holm: Holm-adjusted exact McNemar p across the models of each "
                  f"contrast; Sig.: p Holm < {settings.alpha:g}."
                  + (" Direction: what the second condition does to absorption relative to the first: reduces "
                     "(b > c, Diff > 0), raises (b < c) or none (b = c). Sig. alone does not say which way; "
                     "the summary table counts significant reductions and increases apart." if direction else ""))
    return spec.table(title, raw, (method, *notes), display)
