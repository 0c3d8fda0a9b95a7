"""Assemble every table of the report from a `LabelSet`, and its two figures.

The rates, the sources and the data notes are built here; the other tables by the module of their
analysis (`stats.contrasts`, `stats.headline`, `stats.clusters`, `stats.design_limits`,
`stats.sensitivity`, `stats.recovered`, `stats.reruns`, `stats.usage`), which `build_report` calls in
the order the tables are written. Each builder returns a `render.Table` (raw values for CSV, a paper-style
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
from stats.clusters import cluster_counts, clusters_table, extremes_table
from stats.contrasts import ContrastRow, contrast_name, paired_contrast_rows, paired_contrasts_table
from stats.contrasts_figure import Band, Difference, contrasts_figure
from stats.design_limits import resampling_table, resolution_table
from stats.exclusions import Exclusions
from stats.headline import summary_table
from stats.labels import POOLED_CASUAL, LabelSet
from stats.rates import proportion
from stats.rates_figure import Point, Series, rates_figure
from stats.recovered import METHOD as RECOVERED_METHOD
from stats.recovered import recovered_table
from stats.render import Column, Table, interval_text
from stats.reruns import reruns, reruns_table
from stats.sensitivity import absorption_sensitivity
from stats.settings import TableSettings
from stats.specs import RATES, SOURCES
from stats.usage import UsageSettings, usage_table

# The built-in contrasts and treatments, as benchmark/conditions.toml defines them (a condition file adds to both):
# newline vs blank, newline vs boundary, boundary vs mitigation, newline vs native.
CONTRASTS = builtin().contrasts
FIGURE_CONDITIONS = builtin().treatments  # newline, blank, boundary, mitigation, native; clean is their baseline


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
    """The labels of the examples below (`stats.synthetic.example_labels`): model a on four humaneval clusters
    under newline and boundary and on one austen cluster (entailment not run) under newline; model b under
    newline only."""
    from stats.synthetic import example_labels

    return example_labels()


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
