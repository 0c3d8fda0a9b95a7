"""The occurrence report's vocabulary: every table `seam.py occurrence report` writes, its columns named, typed
and headed once, as stats/specs.py does for the absorption tables. occurrence/report.py builds the tables from
these specs, and docs/FORMATS.md lists exactly these columns (tests/test_table_specs.py keeps the two equal).

    PIPELINE  occurrence_pipeline.csv  every count in pipeline order, with the confirmed shares
    SHAPES    occurrence_shapes.csv    unique candidates by artifact kind and separator
    FEATURES  occurrence_features.csv  unique candidates on which each feature of the screen fired
    READERS   occurrence_readers.csv   (--second) the two readers' answers crossed
"""

from __future__ import annotations

from occurrence.records import ANSWERS
from stats.render import Column
from stats.schema import TableSpec

_OF, _SHARE = Column("of", "Of", "int"), Column("share", "Share %", "proportion")

PIPELINE = TableSpec("occurrence_pipeline", (
    Column("stage", "Stage"), Column("count", "Count", "int"), _OF, _SHARE,
    Column("ci_low", "95% CI low", "proportion"), Column("ci_high", "95% CI high", "proportion")))
SHAPES = TableSpec("occurrence_shapes", (
    Column("artifact_kind", "Artifact"), Column("separator", "Remark after"),
    Column("unique_candidates", "Unique candidates", "int")))
FEATURES = TableSpec("occurrence_features", (Column("feature", "Feature"), Column("count", "Unique candidates", "int"),
                                             _OF, _SHARE))

READERS = TableSpec("occurrence_readers", (
    Column("first", "First \\ second"), *(Column(answer, answer, "int") for answer in ANSWERS)))

TABLES = (PIPELINE, SHAPES, FEATURES, READERS)
