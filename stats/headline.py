"""The headline counts: per contrast, in how many models the second condition significantly reduces or
raises absorption, as the paper states them ("boundary markers significantly reduce absorption in k of K
models").

The counts are tallied here from the contrast rows, never by hand from `contrasts.csv`,
and always with the direction: `significant` says only that Holm's adjusted p is below
alpha, so a count of "significant" rows would take an increase (native comments absorbed
more often) for a reduction. A model counts in the family of a contrast when it has at
least one pair under both conditions, exactly the models Holm's correction adjusts over.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmark.conditions import ConditionSet, builtin
from stats.contrasts import NO_DIFFERENCE, RAISES, REDUCES, ContrastRow, contrast_name
from stats.render import Column, Table
from stats.settings import TableSettings
from stats.specs import SUMMARY


@dataclass(frozen=True)
class HeadlineCount:
    """One contrast's directional counts over the models tested (K)."""

    first: str
    second: str
    models: int  # K: models with at least one pair under both conditions
    reduces_significantly: int  # significant after Holm and b > c
    raises_significantly: int  # significant after Holm and b < c
    reduces: int  # b > c, significant or not
    raises: int  # b < c, significant or not
    no_difference: int  # b = c
    untested: int  # models with labels but no pair under both conditions

    @property
    def neither(self) -> int:
        """Models with no significant difference either way."""
        return self.models - self.reduces_significantly - self.raises_significantly


def headline_counts(rows: list[ContrastRow], contrasts) -> list[HeadlineCount]:
    """The counts of `HeadlineCount` for each (first, second) of `contrasts` that has rows.

    >>> from stats.contrasts import paired_contrast_rows
    >>> outcomes = {("m", "newline"): dict.fromkeys("abcdef", True), ("m", "boundary"): dict.fromkeys("abcdef", False),
    ...             ("m", "native"): dict.fromkeys("abcdef", True),
    ...             ("n", "newline"): dict.fromkeys("abcdef", False), ("n", "native"): dict.fromkeys("abcdef", True)}
    >>> rows = paired_contrast_rows(outcomes, ["m", "n"], [("newline", "boundary"), ("newline", "native")],
    ...                             TableSettings())
    >>> for count in headline_counts(rows, [("newline", "boundary"), ("newline", "native")]):
    ...     print(count.first, count.second, count.models, count.reduces_significantly,
    ...           count.raises_significantly, count.neither, count.untested)
    newline boundary 1 1 0 0 1
    newline native 2 0 0 2 0
    """
    result = []
    for first, second in contrasts:
        family = [r for r in rows if (r.first, r.second) == (first, second)]
        if not family:
            continue
        tested = [r for r in family if r.result.table.n]
        result.append(HeadlineCount(
            first=first, second=second, models=len(tested),
            reduces_significantly=sum(bool(r.significant) and r.direction == REDUCES for r in tested),
            raises_significantly=sum(bool(r.significant) and r.direction == RAISES for r in tested),
            reduces=sum(r.direction == REDUCES for r in tested),
            raises=sum(r.direction == RAISES for r in tested),
            no_difference=sum(r.direction == NO_DIFFERENCE for r in tested),
            untested=len(family) - len(tested)))
    return result


def condition_phrase(condition: str, defined: ConditionSet | None = None) -> tuple[str, bool]:
    """(noun phrase, plural?) naming what a condition puts after the pasted text, as `defined` (default: the
    built-ins) defines it.

    >>> condition_phrase("boundary"), condition_phrase("shouting")
    (('boundary markers', True), ('the shouting condition', False))
    """
    return (defined or builtin()).phrase(condition)


def _models(k: int) -> str:
    return f"{k} model" if k == 1 else f"{k} models"


def headline_sentence(count: HeadlineCount, alpha: float = 0.05, defined: ConditionSet | None = None) -> str:
    """The count as the paper would state it, generated from the numbers alone.

    >>> print(headline_sentence(HeadlineCount("newline", "boundary", 14, 11, 0, 13, 1, 0, 0)))
    ... # doctest: +NORMALIZE_WHITESPACE
    Compared with a bare line break, boundary markers significantly reduce absorption in 11 of 14 models and
    significantly raise it in none; 3 of 14 show no significant difference (Holm-adjusted exact McNemar, p < 0.05).
    >>> print(headline_sentence(HeadlineCount("newline", "blank", 1, 0, 0, 0, 1, 0, 0)))
    ... # doctest: +NORMALIZE_WHITESPACE
    Compared with a bare line break, a blank line gives no significant reduction of absorption in any model
    (0 of 1) and significantly raises it in none; 1 of 1 shows no significant difference (Holm-adjusted exact
    McNemar, p < 0.05).
    >>> print(headline_sentence(HeadlineCount("newline", "native", 2, 0, 1, 0, 2, 0, 0)))
    ... # doctest: +NORMALIZE_WHITESPACE
    Compared with a bare line break, artifact-native comments give no significant reduction of absorption in any
    model (0 of 2) and significantly raise it in 1 of 2; 1 of 2 shows no significant difference (Holm-adjusted
    exact McNemar, p < 0.05).
    """
    subject, plural = condition_phrase(count.second, defined)
    reference, _ = condition_phrase(count.first, defined)
    k, down, up, neither = count.models, count.reduces_significantly, count.raises_significantly, count.neither
    tail = f"(Holm-adjusted exact McNemar, p < {alpha:g})"
    if k == 0:
        return (f"Compared with {reference}, {subject} could not be tested: no model has a pair of usable "
                f"outputs under both conditions.")
    if down:
        reduce = f"significantly {'reduce' if plural else 'reduces'} absorption in {down} of {_models(k)}"
    else:
        reduce = f"{'give' if plural else 'gives'} no significant reduction of absorption in any model (0 of {k})"
    raise_ = f"significantly {'raise' if plural else 'raises'} it in " + (f"{up} of {k}" if up else "none")
    rest = f"{neither} of {k} {'shows' if neither == 1 else 'show'} no significant difference"
    return f"Compared with {reference}, {subject} {reduce} and {raise_}; {rest} {tail}."


def summary_table(rows: list[ContrastRow], contrasts, settings: TableSettings, notes: list[str],
                  defined: ConditionSet | None = None) -> Table:
    """`summary.csv/.md`: per contrast the directional counts of `headline_counts` and their sentence, the
    conditions named by their phrases in `defined` (default: the built-ins).

    >>> from stats.contrasts import paired_contrast_rows
    >>> outcomes = {("m", "newline"): dict.fromkeys("abcdef", True), ("m", "boundary"): dict.fromkeys("abcdef", False)}
    >>> rows = paired_contrast_rows(outcomes, ["m"], [("newline", "boundary")], TableSettings())
    >>> summary_table(rows, [("newline", "boundary")], TableSettings(), []).rows[0][:8]
    ('newline vs boundary', 'newline', 'boundary', 1, 1, 0, 0, 1)
    """
    out, shown = [], []
    for count in headline_counts(rows, contrasts):
        statement = headline_sentence(count, settings.alpha, defined)
        name = contrast_name(count.first, count.second)
        out.append((name, count.first, count.second, count.models, count.reduces_significantly,
                    count.raises_significantly, count.neither, count.reduces, count.raises, count.no_difference,
                    count.untested, statement))
        shown.append((name, count.models, count.reduces_significantly, count.raises_significantly, count.neither,
                      statement))
    display = Table("summary", "", (
        Column("contrast", "Contrast"), Column("models", "K", "int"),
        Column("down", "Sig. reduction", "int"), Column("up", "Sig. increase", "int"),
        Column("neither", "Neither", "int"), Column("statement", "In words")), tuple(shown))
    method = ("Per contrast \"first vs second\", over the K models with at least one pair usable under both "
              "conditions: in how many the second condition significantly reduces absorption (Holm-adjusted exact "
              f"McNemar p < {settings.alpha:g} and b > c, i.e. Diff > 0), significantly raises it (the same p and "
              "b < c), or neither. The CSV adds how many models go each way regardless of significance (reduces, "
              "raises and no difference, by the sign of b - c) and the models with labels but no pair (untested), "
              "all from the rows of contrasts.csv.")
    return SUMMARY.table("Headline counts per contrast", out, (method, *notes), display)
