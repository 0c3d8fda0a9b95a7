"""The absorption tables' vocabulary: every table `seam.py tables` writes, its columns named, typed and
headed once (validity/specs.py holds the validity tables'). The builders (stats/tables.py and the modules it
calls) make their tables from these specs, every reader reads them with `stats.schema.read_table`, and
docs/FORMATS.md lists exactly these columns (tests/test_table_specs.py keeps the two equal).

    RATES             rates.csv             absorption rate per model and condition
    CONTRASTS         contrasts.csv         paired contrasts per model (McNemar, permutation, Holm)
    SUMMARY           summary.csv           the headline counts per contrast, with their sentence
    SOURCES           sources.csv           casual-comment absorption per model and source
    CLUSTERS          clusters.csv          per cluster, per condition: models absorbed / usable
    CLUSTER_EXTREMES  cluster_extremes.csv  the clusters most and least often absorbed
    RESAMPLING        resampling.csv        comment-pool resampling of the newline vs boundary reduction
    RESOLUTION        resolution.csv        the smallest difference the design detects
    SENSITIVITY       sensitivity.csv       each contrast under alternative readings of the labels
    USAGE             usage.csv             requests, tokens, time and cost (with --traces; `seam.py usage`)
    RECOVERED         recovered.csv         the share of an oracle's reduction a candidate recovers (a condition
                                            file's `recovered`)
    RERUNS            reruns.csv            the same request asked under two conditions (with --traces, where any is)
"""

from __future__ import annotations

from stats.render import Column
from stats.schema import ORIGIN, Repeated, TableSpec

__all__ = ["CLUSTERS", "CLUSTER_EXTREMES", "CONTRASTS", "DIRECTION", "ORIGIN", "PAIRED_VS_CLEAN", "RATES",
           "RECOVERED", "RERUNS", "RESAMPLING", "RESOLUTION", "SENSITIVITY", "SENSITIVITY_COLUMNS", "SOURCES",
           "SUMMARY", "TABLES", "USAGE"]

_MODEL, _CONDITION = Column("model", "Model"), Column("condition", "Condition")
_CONTRAST = Column("contrast", "Contrast")
_INTERVAL = (Column("ci_low", "CI low", "proportion"), Column("ci_high", "CI high", "proportion"))
_SHARE = (Column("absorbed", "Absorbed", "int"), Column("usable", "Usable", "int"),
          Column("share", "Share", "proportion"))


def _rate(by: Column) -> tuple[Column, ...]:
    return (_MODEL, by, Column("n", "n", "int"), Column("absorbed", "Absorbed", "int"),
            Column("rate", "Rate", "proportion"), *_INTERVAL, Column("entailment_not_run", "Entailment not run", "int"))


RATES = TableSpec("rates", _rate(_CONDITION))
SOURCES = TableSpec("sources", _rate(Column("source", "Source")))

# The paired contrasts: the absorption ones (`contrasts`) add which way the second condition moves absorption;
# the validity stage's contrasts of a treatment with clean (validity/specs.py) have the same columns without it.
DIRECTION = Column("direction", "Direction")
_PAIRED = (_MODEL, _CONTRAST, Column("n_pairs", "n", "int"), Column("b", "b", "int"), Column("c", "c", "int"),
           Column("diff", "Diff", "proportion"), *_INTERVAL, Column("p_mcnemar", "p McNemar", "pvalue"),
           Column("p_permutation", "p permutation", "pvalue"), Column("p_holm", "p Holm", "pvalue"),
           Column("significant", "Significant", "flag"))
_METHOD = Column("permutation_method", "Permutation method")
CONTRASTS = TableSpec("contrasts", (*_PAIRED, DIRECTION, _METHOD))
PAIRED_VS_CLEAN = (*_PAIRED, _METHOD)

SUMMARY = TableSpec("summary", (
    _CONTRAST, Column("first", "First"), Column("second", "Second"), Column("models", "Models", "int"),
    Column("reduces_significantly", "Significantly reduces", "int"),
    Column("raises_significantly", "Significantly raises", "int"), Column("neither", "Neither", "int"),
    Column("reduces", "Reduces", "int"), Column("raises", "Raises", "int"),
    Column("no_difference", "No difference", "int"), Column("untested", "Untested", "int"),
    Column("statement", "Statement")))

CLUSTERS = TableSpec("clusters", (
    Column("cluster", "Cluster"), Column("source", "Source"), Column("genre", "Genre"), Column("comment_id", "Comment"),
    Repeated("condition", (Column("{}_absorbed", "{} absorbed", "int"), Column("{}_models", "{} models", "int"))),
    *_SHARE))
CLUSTER_EXTREMES = TableSpec("cluster_extremes", (
    Column("end", "End"), Column("rank", "Rank", "int"), Column("cluster", "Cluster"), Column("source", "Source"),
    Column("comment_id", "Comment"), *_SHARE))

RESAMPLING = TableSpec("resampling", (
    _MODEL, Column("n_pairs", "n", "int"), Column("b", "b", "int"), Column("c", "c", "int"),
    Column("observed_significant", "Significant (observed)", "flag"), Column("resamples", "Resamples", "int"),
    Column("significant_resamples", "Significant resamples", "int"), Column("share", "Share", "proportion"),
    Column("majority", "Majority", "flag"), Column("keeps", "Keeps", "flag")))

# paper_resolution's header names the paper's n and K, which stats/design_limits.py fills in (`TableSpec.headed`).
RESOLUTION = TableSpec("resolution", (
    _CONTRAST, Column("models", "Models", "int"), Column("n_pairs", "n", "int"),
    Column("discordance", "Discordance", "float"), Column("discordance_source", "Discordance from"),
    Column("threshold", "Per-test level", "float"), Column("power", "Power", "float"),
    Column("resolution", "Resolution", "proportion"),
    Column("paper_resolution", "At the paper's design", "proportion")))

# One row per model, contrast and alternative reading, beside the reference result (validity_sensitivity too).
SENSITIVITY_COLUMNS = (
    _MODEL, _CONTRAST, Column("analysis", "Analysis"), Column("changed_pairs", "Changed pairs", "int"),
    Column("reference_n_pairs", "Reference n", "int"), Column("reference_b", "Reference b", "int"),
    Column("reference_c", "Reference c", "int"), Column("reference_diff", "Reference diff", "proportion"),
    Column("reference_p_holm", "Reference p Holm", "pvalue"),
    Column("reference_significant", "Reference significant", "flag"),
    Column("reference_direction", "Reference direction"),
    Column("n_pairs", "n", "int"), Column("b", "b", "int"), Column("c", "c", "int"),
    Column("diff", "Diff", "proportion"), *_INTERVAL, Column("p_holm", "p Holm", "pvalue"),
    Column("significant", "Significant", "flag"), DIRECTION,
    Column("direction_survives", "Direction survives", "flag"),
    Column("significance_survives", "Significance survives", "flag"), Column("survives", "Survives", "flag"))
SENSITIVITY = TableSpec("sensitivity", SENSITIVITY_COLUMNS)

USAGE = TableSpec("usage", (
    _MODEL, _CONDITION, Column("requests", "Requests", "int"), Column("usage_unknown", "Usage unknown", "int"),
    Column("prompt_tokens", "Prompt tokens", "int"), Column("completion_tokens", "Completion tokens", "int"),
    Column("reasoning_tokens", "Reasoning tokens", "int"), Column("cached_tokens", "Cached tokens", "int"),
    Column("time_s", "Time (s)", "float"), Column("cost_usd", "Cost (USD)", "float")))

# One row per model and share of a condition file's `recovered` list (stats/recovered.py).
RECOVERED = TableSpec("recovered", (
    _MODEL, Column("recovered", "Recovered"), Column("candidate", "Candidate"), Column("base", "Base"),
    Column("oracle", "Oracle"), Column("n", "n", "int"), Column("base_absorbed", "Base absorbed", "int"),
    Column("candidate_absorbed", "Candidate absorbed", "int"), Column("oracle_absorbed", "Oracle absorbed", "int"),
    Column("discordant", "Candidate is not oracle", "int"), Column("reduction", "Candidate's reduction", "proportion"),
    Column("oracle_reduction", "Oracle's reduction", "proportion"), Column("share", "Share", "proportion"),
    *_INTERVAL, Column("bounded", "Bounded", "flag")))

# One row per model, pair of conditions that sent the same message, and one or two trace files (stats/reruns.py).
RERUNS = TableSpec("reruns", (
    _MODEL, Column("pair", "Same message under"), Column("runs", "Asked in"),
    Column("same_messages", "Clusters", "int"), Column("identical_outputs", "Identical outputs", "int"),
    Column("n_pairs", "n", "int"), Column("b", "b", "int"), Column("c", "c", "int"),
    Column("diff", "Diff", "proportion"), *_INTERVAL, Column("p_mcnemar", "p McNemar", "pvalue")))

TABLES = (RATES, CONTRASTS, SUMMARY, SOURCES, CLUSTERS, CLUSTER_EXTREMES, RESAMPLING, RESOLUTION, SENSITIVITY, USAGE,
          RECOVERED, RERUNS)
