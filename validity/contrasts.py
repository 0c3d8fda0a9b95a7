"""Each treatment against its control, the paired contrast every clean-contrast table of validity writes.

The control is the one the treatment is scored against (`ConditionSet.control_of`):
clean for the built-in treatments and for a condition file's by default, a
condition file's own otherwise (later-turn against later-control, the same
conversation without the remark). Pairing a later turn with clean would compare
a second edit of the model's own reply with a first edit of the artifact, so it
is never done. Rows are the statistics stage's (`stats.contrasts`), Holm-adjusted
across the models of each contrast; with the built-in conditions only, every
control is clean and the tables say "vs clean", byte for byte as before.
"""

from __future__ import annotations

from stats.contrasts import ContrastRow, paired_contrast_rows, paired_contrasts_table
from stats.render import Table
from stats.schema import TableSpec
from validity.checked import Options


def control_pairs(options: Options) -> tuple[tuple[str, str], ...]:
    """(treatment, its control) for every treatment defined, the built-ins first.

    >>> control_pairs(Options())[:2]
    (('newline', 'clean'), ('blank', 'clean'))
    """
    defined = options.defined
    return tuple((name, defined.control_of(name)) for name in defined.treatments)


def clean_contrast_rows(outcomes: dict[tuple[str, str], dict[str, bool | None]], models, options: Options
                        ) -> list[ContrastRow]:
    """Each treatment vs its control (clean for every built-in one), per model, Holm-adjusted across the models
    of each contrast."""
    return paired_contrast_rows(outcomes, models, control_pairs(options), options.stats)


def versus(rows: list[ContrastRow]) -> str:
    """What the treatments of `rows` are compared with, in words: "clean", unless some control is another."""
    return "clean" if all(row.second == "clean" for row in rows) else "its control"


def clean_contrasts_table(spec: TableSpec, title: str, rows: list[ContrastRow], what: str, options: Options,
                          notes: list[str]) -> Table:
    """The statistics stage's contrast table, with a method note saying what b and c count here."""
    if versus(rows) == "clean":
        against, minus = "only under clean", "treatment minus clean"
    else:
        own = sorted({f"{row.first} against {row.second}" for row in rows if row.second != "clean"})
        against = f"only under its control (clean; {', '.join(own)})"
        minus = "treatment minus control"
    method = (f"Paired on clusters usable under both conditions (n). Outcome: {what}. b: the outcome only under "
              f"the treatment; c: {against}; Diff = (b - c)/n in percentage points ({minus}), "
              f"with a {options.confidence:.0%} Newcombe (1998) hybrid score interval. p McNemar: exact "
              "two-sided binomial test on the discordant pairs; p perm.: paired sign-flip permutation test; p Holm: "
              f"Holm-adjusted McNemar p across the models of each contrast; Sig.: p Holm < {options.alpha:g}.")
    return paired_contrasts_table(rows, options.stats, notes, spec=spec, title=title, method=method)
