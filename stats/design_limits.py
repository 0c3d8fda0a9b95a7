"""The two tables of what the design itself limits: whether a reduction survives another draw of the
comment pool (resampling.csv, `stats.resample`), and the smallest paired difference the pairs and models
can detect (resolution.csv, `stats.power`), beside what the original benchmark's design detects.

The contrasts say what the labels show; these say how far the design lets them show it. The clusters share
a small pool of casual comments, so a reduction could rest on the particular comments drawn; and a contrast
that is not significant rules out only the differences the design can resolve.
"""

from __future__ import annotations

from benchmark.conditions import builtin
from stats import resample
from stats.contrasts import ContrastRow, contrast_name
from stats.labels import LabelSet
from stats.power import detectable_difference
from stats.render import Table
from stats.settings import TableSettings
from stats.specs import RESAMPLING, RESOLUTION

# The built-in contrasts (benchmark/conditions.toml), `resolution_table`'s default as they are the report's
# (`stats.tables.CONTRASTS`; `build_report` passes a condition file's too).
_BUILTIN_CONTRASTS = builtin().contrasts
# The original benchmark's design, shown beside this one's resolution: 300 pairs per model, 20 models,
# and the discordance it observed.
PAPER_PAIRS, PAPER_MODELS, PAPER_DISCORDANCE = 300, 20, 0.27


def _example() -> LabelSet:
    """The labels of the examples below: those of the report's examples (`stats.synthetic.example_labels`)."""
    from stats.synthetic import example_labels

    return example_labels()


# ---------------------------------------------------------------- resampling


def resampling_table(result: resample.ResamplingResult | None, notes: list[str]) -> Table:
    """Per model, the share of comment-pool resamples that keep the reduction significant.

    >>> table = resampling_table(resample.comment_pool_resampling(_example(), resamples=100), [])
    >>> table.rows
    (('a', 4, 3, 0, False, 100, 0, 0.0, False, False),)
    >>> print(table.notes[0])  # doctest: +NORMALIZE_WHITESPACE
    0 of 1 models keep their newline vs boundary reduction: significant on the observed labels (b > c,
    Holm p < 0.05) and in a majority of 100 resamples.
    """
    if result is None:
        return RESAMPLING.table("Comment-pool resampling", (),
                                ("Not computed: the labels lack newline or boundary.", *notes))
    rows = tuple((m.model, m.n_pairs, m.b, m.c, m.observed_significant, m.resamples, m.significant_resamples,
                  m.share, m.majority, m.keeps) for m in result.models)
    contrast = contrast_name(result.first, result.second)
    summary = (f"{result.kept_models} of {len(result.models)} models keep their {contrast} reduction: "
               f"significant on the observed labels (b > c, Holm p < {result.alpha:g}) and in a majority of "
               f"{result.resamples} resamples.")
    method = (f"The {result.comments} casual comments ({result.clusters} clusters) resampled with "
              f"replacement, each drawn comment bringing all its clusters; numpy PCG64, seed {result.seed}. "
              "Per resample: exact McNemar test per model, Holm across models. Share: resamples in which "
              "the model's reduction is significant, in percent. Majority: more than half of the resamples; "
              "Keeps: significant on the observed labels and in a majority (a model whose observed reduction is "
              "not significant keeps nothing, however often a resample makes it significant).")
    return RESAMPLING.table(f"Comment-pool resampling of the {contrast} reduction", rows, (summary, method, *notes))


# ---------------------------------------------------------------- resolution


def resolution_table(labels: LabelSet, rows: list[ContrastRow], settings: TableSettings,
                     notes: list[str], contrasts=_BUILTIN_CONTRASTS) -> Table:
    """Per contrast, the smallest paired difference the design detects (`stats.power`), and beside it what
    the paper's design (`PAPER_PAIRS` pairs, `PAPER_MODELS` models) would detect at the same discordance.

    >>> from stats.contrasts import paired_contrast_rows
    >>> labels, settings = _example(), TableSettings()
    >>> rows = paired_contrast_rows(labels.outcomes, labels.models, [("newline", "boundary")], settings)
    >>> resolution_table(labels, rows, settings, []).rows
    (('newline vs boundary', 1, 4, 0.75, 'observed, pooled', 0.05, 0.8, nan, 0.19324...),)
    """
    columns = RESOLUTION.headed(paper_resolution=f"At n = {PAPER_PAIRS}, K = {PAPER_MODELS}")
    out = []
    source = "given" if settings.discordance is not None else "observed, pooled"
    for first, second in contrasts:
        family = [r.result.table for r in rows if (r.first, r.second) == (first, second) and r.result.table.n]
        if not family:
            continue
        n = min(t.n for t in family)
        psi = (settings.discordance if settings.discordance is not None
               else sum(t.discordant for t in family) / sum(t.n for t in family))
        res = detectable_difference(n, psi, tests=len(family), alpha=settings.alpha, power=settings.power)
        paper = detectable_difference(PAPER_PAIRS, psi, tests=PAPER_MODELS, alpha=settings.alpha,
                                      power=settings.power)
        out.append((contrast_name(first, second), len(family), n, psi, source, res.threshold, res.power,
                    res.difference, paper.difference))
    used = ("the discordance given with --discordance" if settings.discordance is not None
            else "the observed discordance (b + c)/n pooled over the models (Σ(b + c)/Σn)")
    reference = detectable_difference(PAPER_PAIRS, PAPER_DISCORDANCE, tests=PAPER_MODELS, alpha=settings.alpha,
                                      power=settings.power)
    method = ("Smallest paired difference detectable (percentage points) two-sided at Holm's strictest "
              f"level {settings.alpha:g}/models with {settings.power:.0%} power: (z(1 - level/2) + z(power)) "
              f"* sqrt(discordance / n), with n the smallest number of pairs among the models and {used}. "
              "A dash when that exceeds the discordance: a paired difference never does, so none is "
              f"detectable with that power. The last column is the paper's design ({PAPER_PAIRS} pairs, "
              f"K = {PAPER_MODELS} models, level {settings.alpha:g}/{PAPER_MODELS}) at the same discordance; at "
              f"the paper's own discordance {PAPER_DISCORDANCE:g} that design resolves "
              f"{100 * reference.difference:.1f} points.")
    return RESOLUTION.table("Resolution of the paired design", out, (method, *notes), columns=columns)
