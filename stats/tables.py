"""Assemble every table of the report from a `LabelSet`.

Each builder returns a `render.Table` (raw values for CSV, a paper-style
`display` for Markdown and LaTeX). Models are sorted by name, conditions follow
the benchmark's order, contrasts follow `CONTRASTS`, so the same labels always
give the same bytes. Anything that could not be computed (a condition missing
for a model, a contrast whose condition is absent) becomes an empty cell and a
note, never an exception.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from stats import paired, resample
from stats.holm import holm_adjust
from stats.labels import LabelSet
from stats.power import detectable_difference
from stats.rates import NAN, proportion
from stats.render import Column, Table, percent
from stats.svg import Point, Series, rates_figure

CONTRASTS = (("newline", "blank"), ("newline", "boundary"), ("boundary", "mitigation"), ("newline", "native"))
FIGURE_CONDITIONS = ("newline", "blank", "boundary")
POOLED_CASUAL = ("newline", "blank")  # the source table pools the two plain casual conditions


@dataclass(frozen=True)
class Options:
    confidence: float = 0.95
    alpha: float = 0.05
    power: float = 0.8
    resamples: int = resample.DEFAULT_RESAMPLES
    seed: int = resample.DEFAULT_SEED
    permutations: int = paired.DEFAULT_PERMUTATIONS  # only used if a permutation test is not exact
    top: int = 10  # clusters listed at each end of the extremes table
    discordance: float | None = None  # resolution at this discordance instead of the observed one


@dataclass(frozen=True)
class Report:
    tables: tuple[Table, ...]
    figure: str
    notes: tuple[str, ...]
    provenance: dict = field(default_factory=dict)


def contrast_name(first: str, second: str) -> str:
    return f"{first} vs {second}"


def interval_text(value: float, low: float, high: float) -> str:
    """A rate or difference as "12.3 [4.5, 20.1]" in percent, or an em dash when it is undefined.

    Shared with the validity tables, so every bracketed interval in the report looks the same.
    """
    if math.isnan(value):
        return "\u2014"
    return f"{percent(value)} [{percent(low)}, {percent(high)}]"


def _count(outcomes: dict[str, bool | None]) -> tuple[int, int]:
    usable = [x for x in outcomes.values() if x is not None]
    return len(usable), sum(usable)


# ---------------------------------------------------------------- notes


def data_notes(labels: LabelSet) -> list[str]:
    """What is missing from the labels or limits them; shown under every table."""
    notes = []
    lexical = labels.lexical_only_models
    if lexical:
        notes.append("The entailment tier did not run on some prose labels (models: " + ", ".join(lexical)
                     + "): prose absorption rates are lexical-only lower bounds.")
    for model in labels.models:
        absent = [c for c in labels.conditions if (model, c) not in labels.outcomes]
        if absent:
            notes.append(f"Model {model} has no labels for condition(s): {', '.join(absent)}.")
        unusable = [c for c in labels.conditions
                    if (model, c) in labels.outcomes and _count(labels.outcome(model, c))[0] == 0]
        if unusable:
            notes.append(f"Model {model} has no usable pairs for condition(s): {', '.join(unusable)}.")
    for first, second in CONTRASTS:
        missing = [c for c in (first, second) if not labels.has_condition(c)]
        if missing:
            notes.append(f"Contrast {contrast_name(first, second)} not computed: no labels for "
                         f"{', '.join(missing)}.")
    return notes


# ---------------------------------------------------------------- rates


def rates_table(labels: LabelSet, options: Options, notes: list[str]) -> Table:
    columns = (Column("model", "Model"), Column("condition", "Condition"), Column("n", "n", "int"),
               Column("absorbed", "Absorbed", "int"), Column("rate", "Rate", "proportion"),
               Column("ci_low", "CI low", "proportion"), Column("ci_high", "CI high", "proportion"),
               Column("entailment_not_run", "Entailment not run", "int"))
    rows, wide = [], []
    for model in labels.models:
        cells, sizes = [], []
        for condition in labels.conditions:
            n, absorbed = _count(labels.outcome(model, condition))
            result = proportion(absorbed, n, options.confidence)
            ci = result.confidence_interval
            rows.append((model, condition, n, absorbed, result.statistic, ci.low, ci.high,
                         labels.entailment_missing.get((model, condition), 0)))
            cells.append(interval_text(result.statistic, ci.low, ci.high))
            if n:
                sizes.append(n)
        n_text = "\u2014" if not sizes else (str(min(sizes)) if min(sizes) == max(sizes)
                                            else f"{min(sizes)}\u2013{max(sizes)}")
        wide.append((model, n_text, *cells))
    display = Table("rates", "", (Column("model", "Model"), Column("n", "n", align="r"),
                                  *(Column(c, c, align="r") for c in labels.conditions)), tuple(wide))
    method = (f"Absorption rate in percent over usable pairs, with {options.confidence:.0%} Wilson score "
              "intervals in brackets; n = usable pairs per condition.")
    return Table("rates", "Absorption rate by model and condition", columns, tuple(rows),
                 (method, *notes), display)


# ---------------------------------------------------------------- contrasts


@dataclass(frozen=True)
class ContrastRow:
    model: str
    first: str
    second: str
    result: paired.PairedComparison
    pvalue_holm: float
    significant: bool | None


def contrast_rows(labels: LabelSet, options: Options) -> list[ContrastRow]:
    """Every model x contrast whose two conditions appear in the labels, with Holm across models."""
    return paired_contrast_rows(labels.outcomes, labels.models, CONTRASTS, options)


def paired_contrast_rows(outcomes: dict[tuple[str, str], dict[str, bool | None]], models,
                         contrasts, options: Options) -> list[ContrastRow]:
    """Each (first, second) contrast whose two conditions both occur in `outcomes`, per model,
    with the exact McNemar p Holm-adjusted across the models of that contrast.

    `outcomes[(model, condition)][cluster]` is True/False when usable and None when
    not. One builder for the absorption contrasts and the validity checks' contrasts
    with clean, so both are tested, seeded and adjusted the same way.
    """
    rows = []
    present = {condition for _, condition in outcomes}
    for first, second in contrasts:
        if not (first in present and second in present):
            continue
        results = [(model, paired.compare_paired(outcomes.get((model, first), {}), outcomes.get((model, second), {}),
                                                 confidence=options.confidence,
                                                 permutations=options.permutations, seed=options.seed))
                   for model in models]
        # models without pairs have no test and are not part of the Holm family
        raw = [r.pvalue_mcnemar if r.table.n else NAN for _, r in results]
        for (model, result), adjusted in zip(results, holm_adjust(raw), strict=True):
            significant = None if math.isnan(adjusted) else adjusted < options.alpha
            rows.append(ContrastRow(model, first, second, result, adjusted, significant))
    return rows


def contrasts_table(rows: list[ContrastRow], options: Options, notes: list[str]) -> Table:
    columns = (Column("model", "Model"), Column("contrast", "Contrast"), Column("n_pairs", "n", "int"),
               Column("b", "b", "int"), Column("c", "c", "int"), Column("diff", "Diff", "proportion"),
               Column("ci_low", "CI low", "proportion"), Column("ci_high", "CI high", "proportion"),
               Column("p_mcnemar", "p McNemar", "pvalue"), Column("p_permutation", "p permutation", "pvalue"),
               Column("p_holm", "p Holm", "pvalue"), Column("significant", "Significant", "flag"),
               Column("permutation_method", "Permutation method"))
    raw, shown = [], []
    for row in rows:
        r, table = row.result, row.result.table
        has = table.n > 0
        ci = r.confidence_interval
        raw.append((row.model, contrast_name(row.first, row.second), table.n, table.first_only,
                    table.second_only, r.statistic, ci.low, ci.high,
                    r.pvalue_mcnemar if has else None, r.permutation.pvalue if has else None,
                    row.pvalue_holm, row.significant, r.permutation.method if has else None))
        shown.append((contrast_name(row.first, row.second), row.model, table.n, table.first_only,
                      table.second_only, interval_text(r.statistic, ci.low, ci.high),
                      r.pvalue_mcnemar if has else None, r.permutation.pvalue if has else None,
                      row.pvalue_holm, row.significant))
    display = Table("contrasts", "", (
        Column("contrast", "Contrast"), Column("model", "Model"), Column("n", "n", "int"),
        Column("b", "b", "int"), Column("c", "c", "int"), Column("diff", "Diff (pp) [95% CI]", align="r"),
        Column("p", "p McNemar", "pvalue"), Column("perm", "p perm.", "pvalue"),
        Column("holm", "p Holm", "pvalue"), Column("sig", "Sig.", "flag")), tuple(shown))
    methods = sorted({row.result.permutation.method for row in rows if row.result.table.n})
    permutation = "exact enumeration" if methods in ([], ["exact"]) else (
        f"exact where feasible, otherwise Monte Carlo with {options.permutations} sign vectors, "
        f"seed {options.seed}, p = (k + 1)/(R + 1)")
    method = ("Paired on clusters usable under both conditions. b: absorbed only under the first condition; "
              "c: only under the second; diff = (b - c)/n, in percentage points, with a "
              f"{options.confidence:.0%} Newcombe (1998) hybrid score interval (method 10). p McNemar: "
              "exact two-sided binomial test on the discordant pairs; p permutation: paired sign-flip test "
              f"({permutation}); p Holm: Holm-adjusted exact McNemar p across the models of each contrast; "
              f"significant: p Holm < {options.alpha:g}.")
    return Table("contrasts", "Paired contrasts per model", columns, tuple(raw), (method, *notes), display)


# ---------------------------------------------------------------- sources


def source_order(labels: LabelSet) -> tuple[str, ...]:
    """Sources grouped by genre (code first), then by name."""
    pairs = {(info.genre, info.source) for info in labels.clusters.values()}
    return tuple(source for _, source in sorted(pairs))


def sources_table(labels: LabelSet, options: Options, notes: list[str]) -> Table:
    columns = (Column("model", "Model"), Column("source", "Source"), Column("n", "n", "int"),
               Column("absorbed", "Absorbed", "int"), Column("rate", "Rate", "proportion"),
               Column("ci_low", "CI low", "proportion"), Column("ci_high", "CI high", "proportion"),
               Column("entailment_not_run", "Entailment not run", "int"))
    sources = source_order(labels)
    rows, wide = [], []
    for model in labels.models:
        n = dict.fromkeys(sources, 0)
        absorbed = dict.fromkeys(sources, 0)
        for condition in POOLED_CASUAL:
            for cluster, x in labels.outcome(model, condition).items():
                if x is not None:
                    source = labels.clusters[cluster].source
                    n[source] += 1
                    absorbed[source] += x
        cells = []
        for source in sources:
            result = proportion(absorbed[source], n[source], options.confidence)
            ci = result.confidence_interval
            rows.append((model, source, n[source], absorbed[source], result.statistic, ci.low, ci.high,
                         labels.entailment_missing_by_source.get((model, source), 0)))
            cells.append(result.statistic)
        total = proportion(sum(absorbed.values()), sum(n.values()), options.confidence)
        wide.append((model, *cells, total.statistic))
    display = Table("sources", "", (Column("model", "Model"),
                                    *(Column(s, s, "proportion") for s in sources),
                                    Column("all", "all", "proportion")), tuple(wide))
    method = ("Casual-comment absorption rate in percent, newline and blank conditions pooled (usable pairs "
              "of both), per source; the CSV adds counts and 95% Wilson intervals (which treat the two "
              "conditions of a cluster as independent, so they are somewhat too narrow).")
    return Table("sources", "Casual-comment absorption by source", columns, tuple(rows),
                 (method, *notes), display)


# ---------------------------------------------------------------- clusters


@dataclass(frozen=True)
class ClusterCounts:
    cluster: str
    source: str
    genre: str
    comment: str | None
    per_condition: tuple[tuple[int, int], ...]  # (models absorbed, models usable) per condition

    @property
    def absorbed(self) -> int:
        return sum(a for a, _ in self.per_condition)

    @property
    def usable(self) -> int:
        return sum(u for _, u in self.per_condition)

    @property
    def share(self) -> float:
        return self.absorbed / self.usable if self.usable else NAN


def cluster_counts(labels: LabelSet) -> list[ClusterCounts]:
    tallies: dict[str, dict[str, list[int]]] = {c: {} for c in labels.clusters}
    for (_, condition), outcomes in labels.outcomes.items():
        for cluster, x in outcomes.items():
            if x is not None:
                tally = tallies[cluster].setdefault(condition, [0, 0])
                tally[0] += x
                tally[1] += 1
    return [ClusterCounts(cluster, info.source, info.genre, info.casual_comment,
                          tuple(tuple(tallies[cluster].get(c, (0, 0))) for c in labels.conditions))
            for cluster, info in labels.clusters.items()]


def clusters_table(labels: LabelSet, counts: list[ClusterCounts], notes: list[str]) -> Table:
    columns = [Column("cluster", "Cluster"), Column("source", "Source"), Column("genre", "Genre"),
               Column("comment_id", "Comment")]
    for condition in labels.conditions:
        columns += [Column(f"{condition}_absorbed", f"{condition} absorbed", "int"),
                    Column(f"{condition}_models", f"{condition} models", "int")]
    columns += [Column("absorbed", "Absorbed", "int"), Column("usable", "Usable", "int"),
                Column("share", "Share", "proportion")]
    rows, shown = [], []
    for item in counts:
        flat = [value for pair in item.per_condition for value in pair]
        rows.append((item.cluster, item.source, item.genre, item.comment, *flat, item.absorbed, item.usable,
                     item.share))
        shown.append((item.cluster, item.source,
                      *(f"{a}/{u}" if u else "\u2014" for a, u in item.per_condition), item.share))
    display = Table("clusters", "", (Column("cluster", "Cluster"), Column("source", "Source"),
                                     *(Column(c, c, align="r") for c in labels.conditions),
                                     Column("share", "Share (%)", "proportion")), tuple(shown))
    method = ("Per cluster and condition: models that absorbed the comment / models with a usable pair; "
              "share: absorbed over usable across all conditions, in percent.")
    return Table("clusters", "Absorption per cluster", tuple(columns), tuple(rows), (method, *notes), display)


def extremes_table(counts: list[ClusterCounts], options: Options, notes: list[str]) -> Table:
    scored = [c for c in counts if c.usable]
    most = sorted(scored, key=lambda c: (-c.share, -c.usable, c.cluster))[: options.top]
    least = sorted(scored, key=lambda c: (c.share, -c.usable, c.cluster))[: options.top]
    columns = (Column("end", "End"), Column("rank", "Rank", "int"), Column("cluster", "Cluster"),
               Column("source", "Source"), Column("comment_id", "Comment"),
               Column("absorbed", "Absorbed", "int"),
               Column("usable", "Usable", "int"), Column("share", "Share", "proportion"))
    rows = [(end, rank, c.cluster, c.source, c.comment, c.absorbed, c.usable, c.share)
            for end, chosen in (("most", most), ("least", least))
            for rank, c in enumerate(chosen, start=1)]
    method = (f"The {options.top} clusters most and least often absorbed, over all models and conditions "
              "(share in percent; ties broken by more usable pairs, then by name).")
    return Table("cluster_extremes", "Clusters most and least often absorbed", columns, tuple(rows),
                 (method, *notes))


# ---------------------------------------------------------------- resampling


def resampling_table(result: resample.ResamplingResult | None, notes: list[str]) -> Table:
    columns = (Column("model", "Model"), Column("n_pairs", "n", "int"), Column("b", "b", "int"),
               Column("c", "c", "int"), Column("observed_significant", "Significant (observed)", "flag"),
               Column("resamples", "Resamples", "int"),
               Column("significant_resamples", "Significant resamples", "int"),
               Column("share", "Share", "proportion"), Column("majority", "Majority", "flag"))
    if result is None:
        return Table("resampling", "Comment-pool resampling", columns, (),
                     ("Not computed: the labels lack newline or boundary.", *notes))
    rows = tuple((m.model, m.n_pairs, m.b, m.c, m.observed_significant, m.resamples, m.significant_resamples,
                  m.share, m.majority) for m in result.models)
    contrast = contrast_name(result.first, result.second)
    summary = (f"{result.majority_models} of {len(result.models)} models keep a significant {contrast} "
               f"reduction (b > c, Holm p < {result.alpha:g}) in a majority of {result.resamples} resamples.")
    method = (f"The {result.comments} casual comments ({result.clusters} clusters) resampled with "
              f"replacement, each drawn comment bringing all its clusters; numpy PCG64, seed {result.seed}. "
              "Per resample: exact McNemar test per model, Holm across models. Share: resamples in which "
              "the model's reduction is significant, in percent.")
    return Table("resampling", f"Comment-pool resampling of the {contrast} reduction", columns, rows,
                 (summary, method, *notes))


# ---------------------------------------------------------------- resolution


def resolution_table(labels: LabelSet, rows: list[ContrastRow], options: Options, notes: list[str]) -> Table:
    columns = (Column("contrast", "Contrast"), Column("models", "Models", "int"),
               Column("n_pairs", "n", "int"), Column("discordance", "Discordance", "float"),
               Column("threshold", "Per-test level", "float"), Column("power", "Power", "float"),
               Column("resolution", "Resolution", "proportion"))
    out = []
    for first, second in CONTRASTS:
        family = [r.result.table for r in rows if (r.first, r.second) == (first, second) and r.result.table.n]
        if not family:
            continue
        n = min(t.n for t in family)
        psi = (options.discordance if options.discordance is not None
               else sum(t.discordant for t in family) / sum(t.n for t in family))
        res = detectable_difference(n, psi, tests=len(family), alpha=options.alpha, power=options.power)
        out.append((contrast_name(first, second), len(family), n, psi, res.threshold, res.power,
                    res.statistic))
    source = ("the given discordance" if options.discordance is not None
              else "the observed discordance (b + c)/n pooled over models")
    method = ("Smallest paired difference detectable (percentage points) two-sided at Holm's strictest "
              f"level {options.alpha:g}/models with {options.power:.0%} power: (z(1 - level/2) + z(power)) "
              f"* sqrt(discordance / n), with n the smallest number of pairs among the models and {source}. "
              "Empty when that exceeds the discordance: a paired difference never does, so none is "
              "detectable with that power.")
    return Table("resolution", "Resolution of the paired design", columns, tuple(out), (method, *notes))


# ---------------------------------------------------------------- figure and report


def figure(labels: LabelSet, options: Options) -> str:
    series = []
    for condition in FIGURE_CONDITIONS:
        if not labels.has_condition(condition):
            continue
        points = []
        for model in labels.models:
            n, absorbed = _count(labels.outcome(model, condition))
            if not n:
                points.append(None)
                continue
            result = proportion(absorbed, n, options.confidence)
            ci = result.confidence_interval
            points.append(Point(result.statistic, ci.low, ci.high))
        series.append(Series(condition, tuple(points)))
    return rates_figure(labels.models, tuple(series), "Absorption rate per model: newline, blank, boundary")


def build_report(labels: LabelSet, options: Options = Options(), *,
                 labels_sha256: str | None = None) -> Report:
    notes = data_notes(labels)
    contrasts = contrast_rows(labels, options)
    counts = cluster_counts(labels)
    resampled = None
    if labels.has_condition("newline") and labels.has_condition("boundary"):
        resampled = resample.comment_pool_resampling(labels, "newline", "boundary",
                                                     resamples=options.resamples, seed=options.seed,
                                                     alpha=options.alpha)
    tables = (
        rates_table(labels, options, notes),
        contrasts_table(contrasts, options, notes),
        sources_table(labels, options, notes),
        clusters_table(labels, counts, notes),
        extremes_table(counts, options, notes),
        resampling_table(resampled, notes),
        resolution_table(labels, contrasts, options, notes),
    )
    methods = sorted({r.result.permutation.method for r in contrasts if r.result.table.n})
    provenance = {
        "alpha": options.alpha,
        "confidence": options.confidence,
        "power": options.power,
        "labels_sha256": labels_sha256,
        "models": list(labels.models),
        "conditions": list(labels.conditions),
        "clusters": len(labels.clusters),
        "entailment_not_run_models": list(labels.lexical_only_models),
        "interval_paired": "Newcombe (1998) hybrid score, method 10",
        "interval_rate": "Wilson score",
        "permutation": {"methods": methods, "monte_carlo_permutations": options.permutations,
                        "monte_carlo_seed": options.seed, "generator": "numpy PCG64"},
        "resampling": None if resampled is None else {
            "contrast": contrast_name(resampled.first, resampled.second), "resamples": resampled.resamples,
            "seed": resampled.seed, "generator": "numpy PCG64", "comments": resampled.comments,
            "majority_models": resampled.majority_models, "models": len(resampled.models)},
        "resolution_discordance": options.discordance,
    }
    return Report(tables=tables, figure=figure(labels, options), notes=tuple(notes), provenance=provenance)
