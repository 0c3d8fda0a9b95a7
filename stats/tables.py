"""Assemble every table of the report from a `LabelSet`.

Each builder returns a `render.Table` (raw values for CSV, a paper-style
`display` for Markdown and LaTeX). Models are sorted by name, conditions follow
the order of their definitions (the built-ins', then a condition file's),
contrasts follow the definitions' list (`CONTRASTS`, then a condition file's),
so the same labels always give the same bytes. Anything that could not be computed (a condition missing
for a model, a contrast whose condition is absent) becomes an empty cell and a
note, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmark.conditions import ConditionSet, builtin
from stats import resample
from stats.contrasts import ContrastRow, contrast_name, paired_contrast_rows, paired_contrasts_table
from stats.contrasts_figure import Band, Difference, contrasts_figure
from stats.exclusions import Exclusions
from stats.headline import summary_table
from stats.labels import POOLED_CASUAL, LabelSet
from stats.power import detectable_difference
from stats.rates import NAN, proportion
from stats.rates_figure import Point, Series, rates_figure
from stats.recovered import METHOD as RECOVERED_METHOD
from stats.recovered import recovered_table
from stats.render import Column, Table, interval_text
from stats.reruns import reruns, reruns_table
from stats.sensitivity import absorption_sensitivity
from stats.settings import TableSettings
from stats.specs import CLUSTER_EXTREMES, CLUSTERS, RATES, RESAMPLING, RESOLUTION, SOURCES
from stats.usage import UsageSettings, usage_table

# The built-in contrasts and treatments, as benchmark/conditions.toml defines them (a condition file adds to both):
# newline vs blank, newline vs boundary, boundary vs mitigation, newline vs native.
CONTRASTS = builtin().contrasts
FIGURE_CONDITIONS = builtin().treatments  # newline, blank, boundary, mitigation, native; clean is their baseline
# The original benchmark's design, shown beside this one's resolution: 300 pairs per model, 20 models,
# and the discordance it observed.
PAPER_PAIRS, PAPER_MODELS, PAPER_DISCORDANCE = 300, 20, 0.27


@dataclass(frozen=True)
class AbsorptionReport:
    """Everything `seam.py tables` writes: the tables, the figures (SVG text: rates.svg and
    contrasts.svg), the data notes, provenance."""

    tables: tuple[Table, ...]
    figure: str  # rates.svg
    contrasts_figure: str  # contrasts.svg
    notes: tuple[str, ...]
    provenance: dict = field(default_factory=dict)


DEFAULT_SETTINGS = TableSettings()


def _example() -> LabelSet:
    """The labels of the examples below: model a on four humaneval clusters under newline and
    boundary and on one austen cluster (entailment not run) under newline; model b under newline only."""
    from stats.labels import label_set_of
    from stats.synthetic import label_row

    rows = [label_row("a", f"humaneval-{i:03d}", "newline", True) for i in range(4)]
    rows += [label_row("a", f"humaneval-{i:03d}", "boundary", i == 0) for i in range(4)]
    rows += [label_row("b", f"humaneval-{i:03d}", "newline", i < 2) for i in range(4)]
    rows += [label_row("a", "austen-000", "newline", False, source="austen", entailment_ran=False)]
    return label_set_of(rows)


def _count(outcomes: dict[str, bool | None]) -> tuple[int, int]:
    usable = [x for x in outcomes.values() if x is not None]
    return len(usable), sum(usable)


# ---------------------------------------------------------------- notes


def data_notes(labels: LabelSet, contrasts=CONTRASTS) -> list[str]:
    """What is missing from the labels or limits them; shown under every table.

    >>> for note in data_notes(_example())[1:3]:
    ...     print(note)
    Model b has no labels for condition(s): boundary.
    Contrast newline vs blank not computed: no labels for blank.
    >>> data_notes(_example())[0][:60]
    'The entailment tier did not run on some prose labels (models'
    """
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
    for first, second in contrasts:
        missing = [c for c in (first, second) if not labels.has_condition(c)]
        if missing:
            notes.append(f"Contrast {contrast_name(first, second)} not computed: no labels for "
                         f"{', '.join(missing)}.")
    return notes


# ---------------------------------------------------------------- rates


def rates_table(labels: LabelSet, settings: TableSettings, notes: list[str]) -> Table:
    """Absorption rate per model and condition with its Wilson interval; displayed model x condition.

    >>> table = rates_table(_example(), DEFAULT_SETTINGS, [])
    >>> table.rows[1][:5]
    ('a', 'boundary', 4, 1, 0.25)
    >>> table.display.rows
    (('a', '4–5', '80.0 [37.6, 96.4]', '25.0 [4.6, 69.9]'), ('b', '4', '50.0 [15.0, 85.0]', '—'))
    """
    rows, wide = [], []
    for model in labels.models:
        cells, sizes = [], []
        for condition in labels.conditions:
            n, absorbed = _count(labels.outcome(model, condition))
            result = proportion(absorbed, n, settings.confidence_level)
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
    method = (f"Absorption rate in percent over usable pairs, with {settings.confidence_level:.0%} Wilson score "
              "intervals in brackets; n: usable pairs per condition (smallest–largest when they differ).")
    return RATES.table("Absorption rate by model and condition", rows, (method, *notes), display)


# ---------------------------------------------------------------- contrasts


def absorption_contrast_rows(labels: LabelSet, settings: TableSettings, contrasts=CONTRASTS) -> list[ContrastRow]:
    """Every model x contrast of `contrasts` whose two conditions appear in the labels, with Holm across models.

    >>> [(row.model, contrast_name(row.first, row.second), row.result.table.n, row.significant)
    ...  for row in absorption_contrast_rows(_example(), DEFAULT_SETTINGS)]
    [('a', 'newline vs boundary', 4, False), ('b', 'newline vs boundary', 0, None)]
    """
    return paired_contrast_rows(labels.outcomes, labels.models, contrasts, settings)


# ---------------------------------------------------------------- sources


def source_order(labels: LabelSet) -> tuple[str, ...]:
    """Sources grouped by genre (code first), then by name.

    >>> source_order(_example())
    ('humaneval', 'austen')
    """
    pairs = {(info.genre, info.source) for info in labels.clusters.values()}
    return tuple(source for _, source in sorted(pairs))


def sources_table(labels: LabelSet, settings: TableSettings, notes: list[str]) -> Table:
    """Casual-comment absorption per model and source, newline and blank pooled.

    >>> sources_table(_example(), DEFAULT_SETTINGS, []).display.rows
    (('a', 1.0, 0.0, 0.8), ('b', 0.5, nan, 0.5))
    """
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
            result = proportion(absorbed[source], n[source], settings.confidence_level)
            ci = result.confidence_interval
            rows.append((model, source, n[source], absorbed[source], result.statistic, ci.low, ci.high,
                         labels.entailment_missing_by_source.get((model, source), 0)))
            cells.append(result.statistic)
        total = proportion(sum(absorbed.values()), sum(n.values()), settings.confidence_level)
        wide.append((model, *cells, total.statistic))
    display = Table("sources", "", (Column("model", "Model"),
                                    *(Column(s, s, "proportion") for s in sources),
                                    Column("all", "all", "proportion")), tuple(wide))
    method = ("Casual-comment absorption rate in percent, newline and blank conditions pooled (usable pairs "
              "of both), per source; all: every source pooled. The CSV adds counts and 95% Wilson intervals "
              "(which treat the two conditions of a cluster as independent, so they are somewhat too narrow).")
    return SOURCES.table("Casual-comment absorption by source", rows, (method, *notes), display)


# ---------------------------------------------------------------- clusters


@dataclass(frozen=True)
class ClusterCounts:
    """How many models absorbed one cluster's comment, per condition."""

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
    """Per cluster (by name) and condition: models that absorbed, models with a usable pair.

    >>> counts = cluster_counts(_example())
    >>> [(c.cluster, c.per_condition, c.share) for c in counts[:2]]
    [('austen-000', ((0, 1), (0, 0)), 0.0), ('humaneval-000', ((2, 2), (1, 1)), 1.0)]
    """
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
    """One row per cluster: the counts of `cluster_counts`, flattened; displayed as "absorbed/usable".

    >>> labels = _example()
    >>> table = clusters_table(labels, cluster_counts(labels), [])
    >>> table.rows[1]
    ('humaneval-000', 'humaneval', 'code', 'casual-00', 2, 2, 1, 1, 3, 3, 1.0)
    >>> table.display.rows[1]
    ('humaneval-000', 'humaneval', '2/2', '1/1', 1.0)
    """
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
    return CLUSTERS.table("Absorption per cluster", rows, (method, *notes), display,
                          columns=CLUSTERS.columns_for(labels.conditions))


def extremes_table(counts: list[ClusterCounts], settings: TableSettings, notes: list[str]) -> Table:
    """The `settings.top` clusters most and least often absorbed.

    >>> for row in extremes_table(cluster_counts(_example()), TableSettings(top=1), []).rows:
    ...     print(row)
    ('most', 1, 'humaneval-000', 'humaneval', 'casual-00', 3, 3, 1.0)
    ('least', 1, 'austen-000', 'austen', 'casual-00', 0, 1, 0.0)
    """
    scored = [c for c in counts if c.usable]
    most = sorted(scored, key=lambda c: (-c.share, -c.usable, c.cluster))[: settings.top]
    least = sorted(scored, key=lambda c: (c.share, -c.usable, c.cluster))[: settings.top]
    rows = [(end, rank, c.cluster, c.source, c.comment, c.absorbed, c.usable, c.share)
            for end, chosen in (("most", most), ("least", least))
            for rank, c in enumerate(chosen, start=1)]
    method = (f"The {settings.top} clusters most and least often absorbed, over all models and conditions "
              "(share in percent; ties broken by more usable pairs, then by name).")
    return CLUSTER_EXTREMES.table("Clusters most and least often absorbed", rows, (method, *notes))


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
                     notes: list[str], contrasts=CONTRASTS) -> Table:
    """Per contrast, the smallest paired difference the design detects (`stats.power`), and beside it what
    the paper's design (`PAPER_PAIRS` pairs, `PAPER_MODELS` models) would detect at the same discordance.

    >>> labels = _example()
    >>> resolution_table(labels, absorption_contrast_rows(labels, DEFAULT_SETTINGS), DEFAULT_SETTINGS, []).rows
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


# ---------------------------------------------------------------- figures and report


def figure(labels: LabelSet, settings: TableSettings, treatments=FIGURE_CONDITIONS) -> str:
    """rates.svg: the rate of each treatment condition per model (`treatments` present in the labels).

    >>> svg = figure(_example(), DEFAULT_SETTINGS)
    >>> svg.startswith("<svg"), svg.count("<circle")  # newline: a legend marker and one per model
    (True, 3)
    """
    series = []
    for condition in treatments:
        if not labels.has_condition(condition):
            continue
        points = []
        for model in labels.models:
            n, absorbed = _count(labels.outcome(model, condition))
            if not n:
                points.append(None)
                continue
            result = proportion(absorbed, n, settings.confidence_level)
            ci = result.confidence_interval
            points.append(Point(result.statistic, ci.low, ci.high))
        series.append(Series(condition, tuple(points)))
    names = ", ".join(s.name for s in series)
    return rates_figure(labels.models, tuple(series), f"Absorption rate per model: {names}",
                        confidence_level=settings.confidence_level)


def paired_figure(rows: list[ContrastRow], settings: TableSettings) -> str:
    """contrasts.svg: the rows of contrasts.csv drawn, one band per contrast in the table's order.

    >>> svg = paired_figure(absorption_contrast_rows(_example(), DEFAULT_SETTINGS), DEFAULT_SETTINGS)
    >>> svg.count("<circle"), "newline vs boundary" in svg, "no pairs" in svg  # legend 2, model a; b untested
    (3, True, True)
    """
    bands: dict[str, list[Difference]] = {}
    for row in rows:
        ci = row.result.confidence_interval
        bands.setdefault(contrast_name(row.first, row.second), []).append(
            Difference(row.model, row.result.difference, ci.low, ci.high, row.significant))
    return contrasts_figure(tuple(Band(name, tuple(found)) for name, found in bands.items()),
                            "Paired contrasts per model: difference in absorption rate, first minus second",
                            confidence_level=settings.confidence_level, alpha=settings.alpha)


def build_report(labels: LabelSet, settings: TableSettings = DEFAULT_SETTINGS, *,
                 labels_sha256: str | None = None, evidence=None,
                 exclusions: Exclusions | None = None, conditions: ConditionSet | None = None,
                 conditions_file: dict | None = None, usage: UsageSettings | None = None) -> AbsorptionReport:
    """Every table, the figure, the data notes and the provenance record of `seam.py tables`.

    `conditions` (default: the built-ins) give the contrasts (the built-in ones, then a condition file's),
    the treatments the figure draws and the phrases of the summary sentences; `conditions_file` (the
    condition file's name and SHA-256) is then recorded in provenance.json.

    `exclusions` (adjudicated false positives, `stats.exclusions`) are counted as not absorbed in every
    table, whose notes and provenance.json then say so; without them nothing differs. `evidence` (a
    `stats.evidence.Evidence`: the benchmark's comments, and the trace outputs when given) feeds the
    sensitivity analyses (`stats.sensitivity`), whose reference rows are the labels as scored and whose
    row (d) applies the exclusions; analyses whose inputs are missing are not computed, and the
    sensitivity table says so. A condition file's `recovered` shares add the recovered table (stats/recovered.py),
    and the trace outputs, where two conditions sent the same message, the reruns table (stats/reruns.py).
    With the trace outputs, the usage table (`stats.usage`, costs at the prices of
    `usage`) totals what the run cost.

    >>> report = build_report(_example(), TableSettings(resamples=100))
    >>> [table.name for table in report.tables]  # doctest: +NORMALIZE_WHITESPACE
    ['rates', 'contrasts', 'summary', 'sources', 'clusters', 'cluster_extremes', 'resampling', 'resolution',
     'sensitivity']
    >>> report.provenance["models"], report.provenance["resampling"]["resamples"]
    (['a', 'b'], 100)
    """
    conditions = conditions or builtin()
    wanted = conditions.contrasts
    scored = labels
    if exclusions is not None:
        labels = exclusions.apply(labels)
    notes = data_notes(labels, wanted)
    if exclusions is not None:
        notes.append(exclusions.note())
    contrasts = absorption_contrast_rows(labels, settings, wanted)
    counts = cluster_counts(labels)
    resampled = None
    if labels.has_condition("newline") and labels.has_condition("boundary"):
        resampled = resample.comment_pool_resampling(labels, "newline", "boundary",
                                                     resamples=settings.resamples, seed=settings.seed,
                                                     alpha=settings.alpha)
    sensitivity, sensitivity_record = absorption_sensitivity(scored, wanted, settings, notes,
                                                             evidence=evidence, exclusions=exclusions)
    tables = (
        rates_table(labels, settings, notes),
        paired_contrasts_table(contrasts, settings, notes),
        summary_table(contrasts, wanted, settings, notes, conditions),
        sources_table(labels, settings, notes),
        clusters_table(labels, counts, notes),
        extremes_table(counts, settings, notes),
        resampling_table(resampled, notes),
        resolution_table(labels, contrasts, settings, notes, wanted),
        sensitivity,
    )
    recovered = recovered_table(labels.outcomes, labels.models, conditions.recovered, settings, notes)
    if recovered.rows:
        tables += (recovered,)
    repeated = [] if evidence is None or evidence.outputs is None else reruns(
        evidence.outputs, evidence.origins, labels.outcomes, conditions.order(labels.conditions), settings)
    if repeated:
        tables += (reruns_table(repeated, settings, notes),)
    if evidence is not None and evidence.outputs is not None:
        tables += (usage_table(list(evidence.outputs.values()), conditions.names, usage or UsageSettings()),)
    methods = sorted({r.result.permutation.method for r in contrasts if r.result.table.n})
    provenance = {
        "alpha": settings.alpha,
        "confidence": settings.confidence_level,
        "power": settings.power,
        "labels_sha256": labels_sha256,
        "models": list(labels.models),
        "conditions": list(labels.conditions),
        "clusters": len(labels.clusters),
        "entailment_not_run_models": list(labels.lexical_only_models),
        "interval_paired": "Newcombe (1998) hybrid score, method 10",
        "interval_rate": "Wilson score",
        "permutation": {"methods": methods, "monte_carlo_permutations": settings.permutations,
                        "monte_carlo_seed": settings.seed, "generator": "numpy PCG64"},
        "resampling": None if resampled is None else {
            "contrast": contrast_name(resampled.first, resampled.second), "resamples": resampled.resamples,
            "seed": resampled.seed, "generator": "numpy PCG64", "comments": resampled.comments,
            "kept_models": resampled.kept_models, "models": len(resampled.models)},
        "resolution_discordance": settings.discordance,
        "sensitivity": sensitivity_record,
    }
    if exclusions is not None:
        provenance["exclusions"] = exclusions.provenance()
    if recovered.rows:
        provenance["recovered"] = {"interval": RECOVERED_METHOD, "shares": [list(r) for r in conditions.recovered]}
    if conditions_file is not None:
        provenance["conditions_file"] = conditions_file
    return AbsorptionReport(tables=tables, figure=figure(labels, settings, conditions.treatments),
                            contrasts_figure=paired_figure(contrasts, settings), notes=tuple(notes),
                            provenance=provenance)
