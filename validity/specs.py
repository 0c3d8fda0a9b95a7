"""The validity tables' vocabulary: every table `seam.py validity` writes, its columns named, typed and headed
once, as stats/specs.py does for the absorption tables (whose contrast and sensitivity columns three of these
share). The builders (validity/tables.py, validity/sensitivity.py) make their tables from these specs, every
reader reads them with `stats.schema.read_table`, and docs/FORMATS.md lists exactly these columns
(tests/test_table_specs.py keeps the two equal).

    SYNTAX                         validity_syntax.csv                edited code that does not parse
    SYNTAX_AS_RETURNED             validity_syntax_as_returned.csv    the same of the reply as returned
    SYNTAX_CONTRASTS, SYNTAX_AS_RETURNED_CONTRASTS, FUNCTIONAL_CONTRASTS   each treatment vs clean
    SIMILARITY                     validity_similarity.csv            chrF against the reference edit
    PROVENANCE                     validity_provenance.csv            how each condition was collected
    PROVENANCE_FLAGS               validity_provenance_flags.csv      models whose conditions differ in that
    SENSITIVITY                    validity_sensitivity.csv           contrasts without the flagged models (--labels)
    FUNCTIONAL                     validity_functional.csv            unit tests of edited functions (--execute)
"""

from __future__ import annotations

from stats.render import Column
from stats.schema import TableSpec
from stats.specs import PAIRED_VS_CLEAN, SENSITIVITY_COLUMNS
from validity.sandbox import OUTCOMES  # a column each, counted per model and condition

_MODEL, _SOURCE, _CONDITION = Column("model", "Model"), Column("source", "Source"), Column("condition", "Condition")
_INTERVAL = (Column("ci_low", "CI low", "proportion"), Column("ci_high", "CI high", "proportion"))

SYNTAX = TableSpec("validity_syntax", (
    _MODEL, _SOURCE, _CONDITION, Column("outputs", "Outputs", "int"), Column("n", "n", "int"),
    Column("invalid", "Invalid", "int"), Column("rate", "Invalid rate", "proportion"), *_INTERVAL,
    Column("echo", "Echo", "int"), Column("marker_in_text", "Marker in text", "int"),
    Column("invalid_without_markers", "Invalid without markers", "int"), Column("recovered", "Recovered", "int")))
SYNTAX_AS_RETURNED = TableSpec("validity_syntax_as_returned", (
    _MODEL, _SOURCE, _CONDITION, Column("outputs", "Outputs", "int"), Column("n", "n", "int"),
    Column("fenced", "Fenced", "int"), Column("invalid", "Invalid", "int"),
    Column("rate", "Invalid rate", "proportion"), *_INTERVAL, Column("echoing", "Echoing", "int"),
    Column("recovered", "Recovered", "int"), Column("invalid_without_markers", "Invalid without markers", "int"),
    Column("invalid_extracted", "Invalid extracted", "int")))

# b: the outcome only under the treatment, c: only under clean; no `direction` (the outcomes are not absorption).
SYNTAX_CONTRASTS = TableSpec("validity_syntax_contrasts", PAIRED_VS_CLEAN)
SYNTAX_AS_RETURNED_CONTRASTS = TableSpec("validity_syntax_as_returned_contrasts", PAIRED_VS_CLEAN)
FUNCTIONAL_CONTRASTS = TableSpec("validity_functional_contrasts", PAIRED_VS_CLEAN)

SIMILARITY = TableSpec("validity_similarity", (
    _MODEL, _SOURCE, _CONDITION, Column("n", "n", "int"), Column("chrf", "chrF", "proportion"),
    Column("unchanged", "Unchanged", "int"), Column("pairs", "Pairs", "int"),
    Column("diff", "Diff vs clean", "proportion"), Column("higher", "Higher", "int"),
    Column("lower", "Lower", "int"), Column("p_sign", "p sign test", "pvalue")))

PROVENANCE = TableSpec("validity_provenance", (
    _MODEL, _CONDITION, Column("rows", "Rows", "int"), Column("missing", "Missing", "int"), Column("ok", "OK", "int"),
    Column("unusable", "Unusable", "int"), Column("failed", "Failed", "int"),
    Column("unusable_share", "Unusable share", "proportion"), Column("failed_share", "Failed share", "proportion"),
    Column("first_request", "First request"), Column("median_request", "Median request"),
    Column("last_request", "Last request"), Column("served_models", "Served models"),
    Column("fingerprints", "Fingerprints")))
PROVENANCE_FLAGS = TableSpec("validity_provenance_flags", (
    _MODEL, Column("conditions", "Conditions", "int"), Column("served_models", "Served models"),
    Column("served_differs", "Served differs", "flag"), Column("served_missing", "No served identifier"),
    Column("gap_days", "Largest gap (days)", "float"), Column("gap_between", "Between"),
    Column("days_apart", "Days apart", "flag"), Column("flagged", "Flagged", "flag")))

SENSITIVITY = TableSpec("validity_sensitivity", SENSITIVITY_COLUMNS)

FUNCTIONAL = TableSpec("validity_functional", (
    _MODEL, _CONDITION, Column("outputs", "Outputs", "int"), Column("n", "n", "int"),
    *(Column(outcome, outcome.capitalize(), "int") for outcome in OUTCOMES),
    Column("rate", "Pass rate", "proportion"), *_INTERVAL))

TABLES = (SYNTAX, SYNTAX_AS_RETURNED, SYNTAX_CONTRASTS, SYNTAX_AS_RETURNED_CONTRASTS, FUNCTIONAL_CONTRASTS,
          SIMILARITY, PROVENANCE, PROVENANCE_FLAGS, SENSITIVITY, FUNCTIONAL)
