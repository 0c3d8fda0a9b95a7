"""The notes under a Markdown (and LaTeX) table describe the columns that table shows, not columns only the
CSV has: where a table is displayed in another shape (`display`), a CSV-only column may be named in the notes
only in a clause that says the CSV adds it."""

from __future__ import annotations

import re

import pytest

from benchmark import dataset
from common import jsonl
from stats.labels import label_set_of
from stats.render import Table, to_markdown
from stats.settings import TableSettings
from stats.synthetic import synthetic_labels
from stats.tables import build_report
from validity import report
from validity.sandbox import Limits
from validity.specs import FUNCTIONAL_CONTRASTS
from validity.synthetic import trace_row
from validity.tables import Options, clean_contrasts_table, functional_table


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Table]:
    absorption = build_report(label_set_of(synthetic_labels(models=2, clusters=12, comments=4)),
                              TableSettings(resamples=20)).tables
    benchmark = dataset.load()
    rows = [trace_row(cluster.cluster, condition, cluster.reference or cluster.artifact,
                      benchmark_sha256=benchmark.sha256)
            for cluster in benchmark.clusters[::50] for condition in ("clean", "newline", "boundary")]
    path = tmp_path_factory.mktemp("traces") / "model-a.jsonl"
    jsonl.write(path, rows)
    labels = tmp_path_factory.mktemp("labels") / "labels.jsonl"
    jsonl.write(labels, synthetic_labels(models=2, clusters=12, comments=4))
    validity = report.build([path], labels=[labels]).tables
    options = Options()
    functional = (functional_table([], set(), {}, {}, Limits(), options, []),
                  clean_contrasts_table(FUNCTIONAL_CONTRASTS, "Passing the unit tests", [],
                                        "the edited function passes its unit tests", options, []))
    return {table.name: table for table in (*absorption, *validity, *functional)}


def csv_only(table: Table) -> list[str]:
    """The names (key and header) of the columns the CSV has and the Markdown table does not show."""
    if table.display is None:
        return []
    keys = {c.key for c in table.display.columns}
    headers = {c.header.lower() for c in table.display.columns}
    return [name for c in table.columns if c.key not in keys and c.header.lower() not in headers
            for name in {c.key.replace("_", " "), c.header.lower()}]


def markdown_clauses(table: Table) -> list[str]:
    """The clauses of the notes as the Markdown file has them, leaving out those about the CSV."""
    notes = [line[2:] for line in to_markdown(table).splitlines() if line.startswith("- ")]
    return [clause for note in notes for clause in re.split(r"(?<=[.;])\s+", note.lower()) if "csv" not in clause]


def test_every_table_is_checked(tables):
    assert set(NAMES) <= set(tables)


NAMES = ("rates", "contrasts", "summary", "sources", "clusters", "sensitivity", "validity_syntax",
         "validity_syntax_contrasts", "validity_syntax_as_returned", "validity_syntax_as_returned_contrasts",
         "validity_provenance", "validity_functional", "validity_functional_contrasts", "validity_sensitivity")


@pytest.mark.parametrize("name", NAMES)
def test_the_markdown_notes_define_no_column_only_the_csv_has(tables, name):
    table = tables[name]
    defined = [(column, clause) for column in csv_only(table) for clause in markdown_clauses(table)
               if re.search(rf"(?<![\w-]){re.escape(column)}\s*[:=]", clause)]
    assert defined == []


@pytest.mark.parametrize(("name", "words"), [
    ("validity_provenance", ("missing", "median", "fingerprint")),
    ("validity_syntax", ("outputs =", "without markers")),
    ("validity_syntax_as_returned", ("outputs =", "without markers", "fenced:", "fenced (", "still invalid")),
    ("contrasts", ("p permutation", "significant:")),
])
def test_columns_only_the_csv_has_are_named_only_as_what_the_csv_adds(tables, name, words):
    for clause in markdown_clauses(tables[name]):
        assert not [word for word in words if re.search(rf"(?<![\w-]){re.escape(word)}", clause)], clause
