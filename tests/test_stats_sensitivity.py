"""Sensitivity analyses: each alternative changes exactly the pairs it should, and the table says what survives.

The end-to-end tests score hand-made traces of real benchmark clusters with the scorer itself and then run
`seam.py tables --traces`, so the witness phrases, the extraction's cuts and the labels are the real ones.
"""

from __future__ import annotations

import csv
import io

import pytest

import seam
from benchmark import dataset
from common import jsonl
from common.records import Comment
from stats.alternatives import (
    affected_clusters_dropped,
    excluded_witness_absorbed,
    exclusions_applied,
    models_left_out,
    outside_edit,
    witnessed_exclusions,
)
from stats.evidence import Evidence
from stats.labels import label_set_of
from stats.render import to_csv, to_markdown
from stats.sensitivity import changed_pairs, sensitivity_rows, sensitivity_table
from stats.settings import TableSettings
from stats.synthetic import label_row
from stats.tables import CONTRASTS, build_report
from validity.synthetic import trace_row

BENCHMARK = dataset.load()
CODE = [c for c in BENCHMARK.clusters if c.source == "humaneval"][:12]
SETTINGS = TableSettings(resamples=20)


def rows_of(table):
    return list(csv.DictReader(io.StringIO(to_csv(table))))


# ---------------------------------------------------------------- the alternatives on hand-made labels


def strong_reduction(model="m", n=12, excluded=()):
    """newline absorbed in every cluster, boundary in none: a clear, significant reduction; the
    (cluster, condition) pairs of `excluded` are excluded labels."""
    rows = []
    for i in range(n):
        cluster = f"humaneval-{i:03d}"
        for condition, absorbed in (("newline", True), ("blank", i < 6), ("boundary", False)):
            usable = (cluster, condition) not in excluded
            rows.append(label_row(model, cluster, condition, absorbed if usable else None, usable=usable))
    return rows


def test_changed_pairs_counts_entering_leaving_and_changing_pairs():
    reference = {("m", "newline"): {"a": True, "b": True, "c": None, "d": True},
                 ("m", "boundary"): {"a": False, "b": False, "c": False, "d": False}}
    alternative = {("m", "newline"): {"a": True, "c": True, "d": True},  # b leaves, c enters
                   ("m", "boundary"): {"a": True, "b": False, "c": False, "d": False}}  # a changes
    assert changed_pairs(reference, alternative, "m", "newline", "boundary") == 3
    assert changed_pairs(reference, reference, "m", "newline", "boundary") == 0


def test_excluded_witness_counts_as_absorbed_and_drop_removes_the_cluster_everywhere():
    labels = label_set_of(strong_reduction(excluded={("humaneval-003", "boundary")}))
    affected = frozenset({("m", "boundary", "humaneval-003")})
    upper = excluded_witness_absorbed(labels, affected)
    assert upper.outcomes[("m", "boundary")]["humaneval-003"] is True
    assert labels.outcome("m", "boundary")["humaneval-003"] is None  # the labels themselves are untouched
    dropped = affected_clusters_dropped(labels, affected)
    assert all("humaneval-003" not in dropped.outcomes[("m", c)] for c in ("newline", "blank", "boundary"))
    rows = {(r.reference.first, r.reference.second, r.analysis): r
            for r in sensitivity_rows(labels, [upper, dropped], CONTRASTS, SETTINGS)}
    a = rows[("newline", "boundary", "excluded_witness_absorbed")]
    assert (a.changed_pairs, a.alternative.result.table.n, a.alternative.result.table.both) == (1, 12, 1)
    assert (a.reference.result.table.n, a.reference.result.table.both) == (11, 0)
    # dropping the cluster changes newline vs blank too, where its pair was usable
    b = rows[("newline", "blank", "affected_clusters_dropped")]
    assert (b.changed_pairs, b.alternative.result.table.n, b.reference.result.table.n) == (1, 11, 12)


def test_witness_in_an_excluded_output_is_found_only_where_the_clean_output_lacks_it():
    cluster = CODE[0]
    comment = cluster.comment
    rows = [label_row("m", cluster.cluster, "boundary", None, usable=False, comment_id=comment.id),
            label_row("m", cluster.cluster, "newline", None, usable=False, comment_id=comment.id)]
    labels = label_set_of(rows)
    witness = comment.witness.upper()  # normalised: case does not matter
    outputs = {("m", f"{cluster.cluster}/boundary"): trace_row(cluster.cluster, "boundary", f"# {witness}\n" * 50,
                                                               status="unusable"),
               ("m", f"{cluster.cluster}/newline"): trace_row(cluster.cluster, "newline", "def f(): pass",
                                                              status="unusable"),
               ("m", f"{cluster.cluster}/clean"): trace_row(cluster.cluster, "clean", cluster.reference)}
    from common.records import TraceRow
    outputs = {key: TraceRow.from_row(row, "test") for key, row in outputs.items()}
    comments = {f"{cluster.cluster}/{c}": comment for c in ("newline", "boundary")}
    assert witnessed_exclusions(labels, outputs, comments) == {("m", "boundary", cluster.cluster)}
    # the same phrase in the cluster's clean output: not a sign of absorption (the clean-diff rule)
    outputs[("m", f"{cluster.cluster}/clean")] = TraceRow.from_row(
        trace_row(cluster.cluster, "clean", f"{cluster.reference}\n# {comment.witness}"), "test")
    assert witnessed_exclusions(labels, outputs, comments) == frozenset()
    # an excluded label without its trace row: the traces are not the ones the labels were scored from
    del outputs[("m", f"{cluster.cluster}/newline")]
    with pytest.raises(Exception, match="traces given have no row for it"):
        witnessed_exclusions(labels, outputs, comments)


def test_comment_in_the_cut_text_is_found_by_witness_or_content_words_and_an_unknown_comment_is_reported():
    comment = Comment("casual-00", "btw this goes out with friday's newsletter", "friday's newsletter", "p")
    rows = [label_row("m", f"humaneval-{i:03d}", "boundary", False) for i in range(4)]
    rows[0]["cut_after"] = "-----END TEXT-----\nBTW this goes out with Friday's newsletter!"
    rows[1]["cut_before"] = "Sure. The newsletter goes out on friday, so here it is:"  # every content word
    rows[2]["cut_after"] = "I kept the function as it was."  # something cut, but not the comment
    labels = label_set_of(rows)
    comments = {f"humaneval-{i:03d}/boundary": comment for i in range(4)}
    found, unknown = outside_edit(labels, comments)
    assert sorted(cluster for _, _, cluster in found) == ["humaneval-000", "humaneval-001"]
    assert unknown == ()
    other = {**comments, "humaneval-002/boundary": Comment("casual-99", "x", "y", "z")}
    assert outside_edit(labels, other)[1] == ("m humaneval-002/boundary",)  # the label's comment is another


def test_absorbed_labels_are_never_rechecked_for_text_cut_around_the_edit():
    rows = [label_row("m", "humaneval-000", "boundary", True)]
    rows[0]["cut_after"] = "friday's newsletter"
    assert label_set_of(rows).cut_text == {}


def _exclusions(*ids, model="m"):
    from stats.exclusions import Exclusion, Exclusions

    return Exclusions("fp.jsonl", "0" * 64, tuple(Exclusion(rid, model, "false positive", f"fp.jsonl:{n}")
                                                 for n, rid in enumerate(ids, 1)))


def test_exclusions_count_the_named_positives_as_not_absorbed_and_keep_the_pairs():
    labels = label_set_of(strong_reduction())
    assert labels.outcomes[("m", "newline")]["humaneval-000"] is True
    alternative = exclusions_applied(labels, _exclusions("humaneval-000/newline"))
    assert alternative.outcomes[("m", "newline")]["humaneval-000"] is False
    assert alternative.outcomes[("m", "newline")]["humaneval-001"] is True
    assert "1 adjudicated false positives counted as not absorbed" in alternative.note
    (row,) = [r for r in sensitivity_rows(labels, [alternative], CONTRASTS, SETTINGS)
              if (r.reference.first, r.reference.second) == ("newline", "boundary")]
    assert row.changed_pairs == 1 and row.alternative.result.table.n == row.reference.result.table.n


def test_leaving_a_model_out_recomputes_holm_over_the_others():
    # two models with the same borderline reduction: significant alone, not after Holm over both
    rows = strong_reduction("a", n=6) + strong_reduction("b", n=6)
    labels = label_set_of(rows)
    alternative = models_left_out(labels, {"b": "served identifiers differ between conditions"})
    got = {r.reference.model: r for r in sensitivity_rows(labels, [alternative], [("newline", "boundary")], SETTINGS)}
    assert got["a"].reference.adjusted_pvalue == pytest.approx(2 * 0.03125)  # Holm over two models
    assert got["a"].reference.significant is False
    assert got["a"].alternative.adjusted_pvalue == pytest.approx(0.03125)  # alone
    assert got["a"].alternative.significant is True
    assert (got["a"].direction_survives, got["a"].significance_survives, got["a"].survives) == (True, False, False)
    assert got["b"].alternative is None and got["b"].survives is None and got["b"].changed_pairs == 6
    table = sensitivity_table(list(got.values()), SETTINGS, [alternative.note])
    markdown = to_markdown(table)
    assert "| newline vs boundary | a | (e) models with provenance flags left out | 0 | 6 | 6 | 0 |" in markdown
    assert "no (significance) |" in markdown and "| left out |" in markdown
    assert "b (served identifiers differ between conditions)" in markdown
    csv_rows = rows_of(table)
    assert csv_rows[0]["reference_significant"] == "false" and csv_rows[0]["significant"] == "true"
    assert csv_rows[0]["survives"] == "false" and csv_rows[1]["survives"] == ""


def test_a_direction_that_flips_does_not_survive():
    labels = label_set_of(strong_reduction(n=3))
    flip = _exclusions(*(f"humaneval-{i:03d}/newline" for i in range(3)))
    rows = sensitivity_rows(labels, [exclusions_applied(labels, flip)], [("newline", "boundary")], SETTINGS)
    (row,) = rows
    assert row.reference.direction == "reduces" and row.alternative.direction != "reduces"
    assert row.direction_survives is False


def test_report_without_traces_or_exclusions_says_what_was_not_computed():
    report = build_report(label_set_of(strong_reduction()), SETTINGS)
    table = next(t for t in report.tables if t.name == "sensitivity")
    assert {r["analysis"] for r in rows_of(table)} == {"outside_edit_absorbed"}
    notes = " ".join(table.notes)
    assert "(a) and (b) not computed" in notes and "--traces" in notes
    assert "(d) not computed" in notes and "validity_sensitivity" in notes
    assert report.provenance["sensitivity"]["not_computed"] == [
        "excluded_witness_absorbed", "affected_clusters_dropped", "exclusions_applied"]
    with_exclusions = build_report(label_set_of(strong_reduction()), SETTINGS,
                                   exclusions=_exclusions("humaneval-000/newline"),
                                   evidence=Evidence())
    table = next(t for t in with_exclusions.tables if t.name == "sensitivity")
    assert {r["analysis"] for r in rows_of(table)} == {"outside_edit_absorbed", "exclusions_applied"}


# ---------------------------------------------------------------- end to end: traces -> score -> tables --traces


def fenced(code: str) -> str:
    return f"Here is the code:\n\n```python\n{code}\n```"


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """Twelve humaneval clusters: newline absorbs the comment as a code comment in every cluster,
    blank in half, boundary never, except that
      cluster 0's boundary output stopped at the limit after writing the comment (excluded, witness inside),
      cluster 1's boundary output puts the comment in a note after the code fence (cut, judged not absorbed),
      cluster 2's clean output is unusable, and its boundary output holds the comment (excluded, witness inside).
    """
    tmp = tmp_path_factory.mktemp("e2e")
    rows = []
    for i, cluster in enumerate(CODE):
        name, code, comment = cluster.cluster, cluster.reference, cluster.comment
        absorbed = f"{code}\n# {comment.text}"
        outputs = {"clean": (fenced(code), "ok"), "newline": (fenced(absorbed), "ok"),
                   "blank": (fenced(absorbed if i % 2 else code), "ok"), "boundary": (fenced(code), "ok")}
        if i == 0:
            outputs["boundary"] = (absorbed + "\n" + "# and so on\n" * 40, "unusable")
        if i == 1:
            outputs["boundary"] = (fenced(code) + f"\n\nNote: {comment.text}", "ok")
        if i == 2:
            outputs["clean"] = ("def" * 500, "unusable")
            outputs["boundary"] = (fenced(absorbed), "ok")
        rows += [trace_row(name, condition, output, status=status, benchmark_sha256=BENCHMARK.sha256,
                           model="m")
                 for condition, (output, status) in outputs.items()]
    jsonl.write(tmp / "traces" / "m.jsonl", rows)
    assert seam.main(["score", str(tmp / "traces" / "m.jsonl"), "--out", str(tmp / "labels" / "m.jsonl"),
                      "--no-nli"]) == 0
    return tmp


def sensitivity_of(out):
    with open(out / "sensitivity.csv", encoding="utf-8") as handle:
        return {(r["contrast"], r["analysis"]): r for r in csv.DictReader(handle)}


def test_tables_with_traces_compute_every_analysis_from_the_real_scorer_output(scored, capsys):
    out = scored / "out"
    assert seam.main(["tables", str(scored / "labels"), "--out", str(out), "--traces", str(scored / "traces"),
                      "--resamples", "20"]) == 0
    got = sensitivity_of(out)
    upper = got[("newline vs boundary", "excluded_witness_absorbed")]
    # clusters 0 and 2 enter, absorbed under boundary (and under newline, where cluster 2's unusable clean
    # output had excluded an output that holds the witness too): two more pairs, both concordant
    assert upper["changed_pairs"] == "2" and upper["reference_n_pairs"] == "10" and upper["n_pairs"] == "12"
    assert (upper["reference_b"], upper["b"], upper["c"]) == ("10", "10", "0")
    dropped = got[("newline vs blank", "affected_clusters_dropped")]
    assert dropped["reference_n_pairs"] == "11" and dropped["n_pairs"] == "10" and dropped["changed_pairs"] == "1"
    outside = got[("newline vs boundary", "outside_edit_absorbed")]
    assert outside["changed_pairs"] == "1" and (outside["b"], outside["c"]) == ("9", "0")
    assert all(r["survives"] == "true" for key, r in got.items() if key[0] == "newline vs boundary")
    assert ("newline vs boundary", "exclusions_applied") not in got
    provenance = (out / "provenance.json").read_text()
    assert '"trace_models":["m"]' in provenance
    assert "sensitivity: " in capsys.readouterr().out


def test_traces_that_are_not_the_labels_own_are_refused(scored, capsys):
    other = scored / "other.jsonl"
    rows = [row for _, row in jsonl.read(scored / "traces" / "m.jsonl")]
    jsonl.write(other, [r for r in rows if r["id"] != f"{CODE[0].cluster}/boundary"])
    assert seam.main(["tables", str(scored / "labels"), "--out", str(scored / "o2"), "--traces", str(other)]) == 2
    assert f"the labels exclude {CODE[0].cluster}/boundary, but the traces given have no row" in capsys.readouterr().err
    assert not (scored / "o2").exists()


def test_the_same_labels_and_traces_give_the_same_sensitivity_bytes(scored):
    for name in ("a", "b"):
        assert seam.main(["tables", str(scored / "labels"), "--out", str(scored / name), "--traces",
                          str(scored / "traces" / "m.jsonl"), "--resamples", "20"]) == 0
    for path in sorted((scored / "a").iterdir()):
        assert path.read_bytes() == (scored / "b" / path.name).read_bytes(), path.name


def test_cut_text_whose_comment_the_benchmark_lacks_leaves_c_uncomputed_with_a_note():
    rows = strong_reduction()
    rows[2]["cut_after"] = "something the model said"  # humaneval-000/boundary, not absorbed
    report = build_report(label_set_of(rows), SETTINGS, evidence=Evidence())
    table = next(t for t in report.tables if t.name == "sensitivity")
    assert rows_of(table) == []
    assert any(note.startswith("(c) not computed: 1 labels") and "m humaneval-000/boundary" in note
               for note in table.notes)
    assert "outside_edit_absorbed" in report.provenance["sensitivity"]["not_computed"]
