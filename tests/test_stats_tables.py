"""The tables end to end: values against direct counts, gaps reported, same labels -> same bytes."""

import csv
import io
import math
import random
import xml.etree.ElementTree as ET

import pytest

import seam
from common import jsonl
from stats.holm import holm_adjust
from stats.labels import label_set_of
from stats.paired import mcnemar_exact
from stats.render import latex_escape
from stats.settings import TableSettings
from stats.synthetic import label_row, synthetic_labels
from stats.tables import build_report


def label(model, cluster, condition, absorbed, *, source="humaneval", comment="casual-00", usable=True,
          entailment_ran=True):
    return label_row(model, cluster, condition, absorbed if usable else None, source=source, comment_id=comment,
                     usable=usable, entailment_ran=entailment_ran)


def report_of(rows, **settings):
    return build_report(label_set_of(rows), TableSettings(resamples=50, **settings))


def table(report, name):
    return next(t for t in report.tables if t.name == name)


def csv_rows(report, name):
    from stats.render import to_csv
    return list(csv.DictReader(io.StringIO(to_csv(table(report, name)))))


def run_cli(*argv):
    return seam.main(["tables", *map(str, argv)])


def test_cli_writes_every_table_and_required_columns(tmp_path, capsys):
    jsonl.write(tmp_path / "labels.jsonl", synthetic_labels(3, 36, comments=6, seed=3))
    assert run_cli(tmp_path / "labels.jsonl", "--out", tmp_path / "out", "--resamples", 200) == 0
    names = {p.name for p in (tmp_path / "out").iterdir()}
    for stem in ("rates", "contrasts", "summary", "sources", "clusters", "cluster_extremes", "resampling",
                 "resolution", "sensitivity"):
        assert {f"{stem}.csv", f"{stem}.md", f"{stem}.tex"} <= names
    assert {"rates.svg", "contrasts.svg", "notes.md", "provenance.json"} <= names
    header = (tmp_path / "out" / "rates.csv").read_text().splitlines()[0].split(",")
    assert header[:7] == ["model", "condition", "n", "absorbed", "rate", "ci_low", "ci_high"]
    header = (tmp_path / "out" / "contrasts.csv").read_text().splitlines()[0].split(",")
    assert header[:13] == ["model", "contrast", "n_pairs", "b", "c", "diff", "ci_low", "ci_high", "p_mcnemar",
                           "p_permutation", "p_holm", "significant", "direction"]
    assert "wrote 31 files" in capsys.readouterr().out


def test_same_labels_give_the_same_bytes_whatever_the_file_split(tmp_path):
    rows = synthetic_labels(4, 48, comments=8, seed=5)
    jsonl.write(tmp_path / "one" / "all.jsonl", rows)
    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    jsonl.write(tmp_path / "two" / "a.jsonl", shuffled[:100])
    jsonl.write(tmp_path / "two" / "b.jsonl", shuffled[100:])
    assert run_cli(tmp_path / "one", "--out", tmp_path / "out1", "--resamples", 100) == 0
    assert run_cli(tmp_path / "one", "--out", tmp_path / "out2", "--resamples", 100) == 0
    assert run_cli(tmp_path / "two", "--out", tmp_path / "out3", "--resamples", 100) == 0
    files = sorted(p.name for p in (tmp_path / "out1").iterdir())
    for other in ("out2", "out3"):
        assert sorted(p.name for p in (tmp_path / other).iterdir()) == files
        for name in files:
            assert (tmp_path / other / name).read_bytes() == (tmp_path / "out1" / name).read_bytes(), name
    # the seed is recorded, and a different seed changes only what depends on it
    assert run_cli(tmp_path / "one", "--out", tmp_path / "out4", "--resamples", 100, "--seed", 99) == 0
    assert '"seed":99' in (tmp_path / "out4" / "provenance.json").read_text()
    assert (tmp_path / "out4" / "rates.csv").read_bytes() == (tmp_path / "out1" / "rates.csv").read_bytes()


def test_rates_against_direct_counts():
    rows = [label("m", f"humaneval-{i:03d}", "newline", i < 3) for i in range(10)]
    rows += [label("m", "humaneval-010", "newline", True, usable=False)]
    (rate,) = csv_rows(report_of(rows), "rates")
    assert (rate["n"], rate["absorbed"], rate["rate"]) == ("10", "3", "0.300000")
    # Wilson 3/10: centre (3 + z^2/2)/(10 + z^2)
    z2 = 1.959963984540054 ** 2
    half = math.sqrt(z2) * math.sqrt(3 * 7 / 10 + z2 / 4) / (10 + z2)
    assert float(rate["ci_low"]) == pytest.approx((3 + z2 / 2) / (10 + z2) - half, abs=1e-6)


def test_single_pair_and_no_discordant_pairs():
    rows = [label("m", "humaneval-000", "newline", True), label("m", "humaneval-000", "boundary", False),
            label("m", "humaneval-000", "blank", True)]
    contrasts = {r["contrast"]: r for r in csv_rows(report_of(rows), "contrasts")}
    one = contrasts["newline vs boundary"]
    assert (one["n_pairs"], one["b"], one["c"], one["diff"]) == ("1", "1", "0", "1.000000")
    assert one["p_mcnemar"] == one["p_permutation"] == one["p_holm"] == "1"
    assert one["significant"] == "false"
    none = contrasts["newline vs blank"]
    assert (none["b"], none["c"], none["diff"], none["p_mcnemar"]) == ("0", "0", "0.000000", "1")
    assert float(none["ci_low"]) < 0 < float(none["ci_high"])


def test_missing_condition_is_reported_and_left_out_of_holm():
    rows = []
    for model in ("a", "b", "c"):
        for i in range(20):
            rows.append(label(model, f"humaneval-{i:03d}", "newline", i < 15))
            if model != "c":  # model c never ran boundary
                rows.append(label(model, f"humaneval-{i:03d}", "boundary", i < (2 if model == "a" else 9)))
    report = report_of(rows)
    rates = {(r["model"], r["condition"]): r for r in csv_rows(report, "rates")}
    assert rates[("c", "boundary")]["n"] == "0" and rates[("c", "boundary")]["rate"] == ""
    contrasts = {r["model"]: r for r in csv_rows(report, "contrasts")
                 if r["contrast"] == "newline vs boundary"}
    assert contrasts["c"]["n_pairs"] == "0"
    assert contrasts["c"]["p_holm"] == contrasts["c"]["significant"] == contrasts["c"]["diff"] == ""
    # the Holm family is the two models with pairs
    raw = [mcnemar_exact(13, 0).pvalue, mcnemar_exact(6, 0).pvalue]
    assert [float(contrasts[m]["p_holm"]) for m in "ab"] == pytest.approx(holm_adjust(raw), rel=1e-5)
    assert any("Model c has no labels for condition(s): boundary" in n for n in report.notes)
    from stats.render import to_markdown
    assert "Model c has no labels for condition(s): boundary" in to_markdown(table(report, "contrasts"))


def test_contrast_with_an_absent_condition_is_skipped_with_a_note():
    rows = [label("m", f"humaneval-{i:03d}", c, i % 2 == 0) for i in range(6) for c in ("newline", "blank")]
    report = report_of(rows)
    contrasts = {r["contrast"] for r in csv_rows(report, "contrasts")}
    assert contrasts == {"newline vs blank"}
    assert any(n.startswith("Contrast newline vs native not computed") for n in report.notes)
    assert "Not computed" in table(report, "resampling").notes[0]


def test_entailment_note_only_when_a_prose_label_lacked_it():
    def rows(entailment_ran):
        return [label("m", f"austen-{i:03d}", c, i == 0, source="austen", entailment_ran=entailment_ran)
                for i in range(4) for c in ("newline", "boundary")]
    from stats.render import to_latex, to_markdown
    with_gap = report_of(rows(False))
    for t in with_gap.tables:
        assert "lexical-only lower bounds" in to_markdown(t)
        assert "lexical-only lower bounds" in to_latex(t, command="python seam.py tables")
    assert csv_rows(with_gap, "rates")[0]["entailment_not_run"] == "4"
    assert with_gap.provenance["entailment_not_run_models"] == ["m"]
    complete = report_of(rows(True))
    assert not any("lexical-only" in to_markdown(t) for t in complete.tables)


def test_source_table_pools_newline_and_blank():
    rows = []
    for i in range(4):
        rows.append(label("m", f"humaneval-{i:03d}", "newline", i < 1))
        rows.append(label("m", f"humaneval-{i:03d}", "blank", i < 3))
        rows.append(label("m", f"humaneval-{i:03d}", "boundary", True))  # not pooled
        rows.append(label("m", f"austen-{i:03d}", "newline", False, source="austen"))
    by_source = {r["source"]: r for r in csv_rows(report_of(rows), "sources")}
    assert (by_source["humaneval"]["n"], by_source["humaneval"]["absorbed"]) == ("8", "4")
    assert (by_source["austen"]["n"], by_source["austen"]["absorbed"]) == ("4", "0")
    assert list(by_source) == ["humaneval", "austen"]  # code sources before prose


def test_cluster_counts_and_extremes():
    rows = []
    for model in ("a", "b", "c"):
        rows.append(label(model, "humaneval-000", "newline", True))
        rows.append(label(model, "humaneval-001", "newline", model == "a"))
        rows.append(label(model, "humaneval-002", "newline", False))
    report = report_of(rows, top=1)
    clusters = {r["cluster"]: r for r in csv_rows(report, "clusters")}
    middle = clusters["humaneval-001"]
    assert (middle["newline_absorbed"], middle["newline_models"]) == ("1", "3")
    extremes = csv_rows(report, "cluster_extremes")
    assert [(r["end"], r["cluster"]) for r in extremes] == [("most", "humaneval-000"),
                                                            ("least", "humaneval-002")]


def test_figure_is_valid_svg_with_one_marker_per_rate():
    rows = [label(m, f"humaneval-{i:03d}", c, i % 2 == 0) for m in ("x&y", "<z>") for i in range(4)
            for c in ("newline", "blank", "boundary")]
    rows = [r for r in rows if not (r["model"] == "<z>" and r["condition"] == "blank")]
    svg = report_of(rows).figure
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "x&y" in texts and "<z>" in texts
    # legend (3) + points: x&y has 3 conditions, <z> has 2
    markers = len(list(root.iter(f"{ns}circle"))) + len(list(root.iter(f"{ns}polygon")))
    assert markers == 3 + 5


def test_contrasts_figure_draws_the_rows_of_contrasts_csv_in_their_order():
    rows = [label(m, f"humaneval-{i:03d}", c, (i + j) % 3 == 0) for j, m in enumerate(("a", "b"))
            for i in range(12) for c in ("newline", "blank", "boundary", "mitigation", "native")]
    report = report_of(rows)
    texts = [t.text for t in ET.fromstring(report.contrasts_figure).iter("{http://www.w3.org/2000/svg}text")]
    bands = [t for t in texts if " vs " in t]
    assert bands == list(dict.fromkeys(r["contrast"] for r in csv_rows(report, "contrasts")))
    values = [t for t in texts if t.endswith("]") or t.endswith("] *")]
    shown = table(report, "contrasts").display.rows
    assert values == [row[5] + (" *" if row[9] else "") for row in shown]


def test_latex_escapes_special_characters():
    assert latex_escape("gpt_4 & 50% #1 <0.001") == r"gpt\_4 \& 50\% \#1 $<$0.001"


def test_cli_errors_exit_2_with_a_message(tmp_path, capsys):
    assert run_cli(tmp_path / "nope.jsonl", "--out", tmp_path / "o") == 2
    assert "nope.jsonl: no such file" in capsys.readouterr().err
    jsonl.write(tmp_path / "l.jsonl", synthetic_labels(1, 6, comments=2))
    (tmp_path / "file").write_text("x")
    assert run_cli(tmp_path / "l.jsonl", "--out", tmp_path / "file") == 2
    assert "not a directory" in capsys.readouterr().err


@pytest.mark.parametrize("option, value, message", [
    ("--resamples", "0", "argument --resamples: must be at least 1, got 0"),
    ("--top", "0", "argument --top: must be at least 1, got 0"),
    ("--seed", "-1", "argument --seed: must be a whole number of at least 0, got -1"),
    ("--seed", "x", "argument --seed: expected a whole number, got 'x'"),
    ("--power", "1", "argument --power: must be between 0 and 1 (exclusive), got 1"),
    ("--discordance", "1.5", "argument --discordance: must be a number from 0 to 1, got 1.5"),
])
def test_cli_refuses_bad_option_values_before_reading_anything(tmp_path, capsys, option, value, message):
    with pytest.raises(SystemExit) as caught:
        run_cli(tmp_path / "not-read.jsonl", "--out", tmp_path / "o", option, value)
    assert caught.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_seed_zero_is_a_seed_like_any_other(tmp_path):
    jsonl.write(tmp_path / "l.jsonl", synthetic_labels(2, 12, comments=3))
    assert run_cli(tmp_path / "l.jsonl", "--out", tmp_path / "o", "--resamples", 20, "--seed", 0) == 0
    assert '"seed":0' in (tmp_path / "o" / "provenance.json").read_text()


def test_latex_names_the_command_that_made_the_table(tmp_path):
    jsonl.write(tmp_path / "l.jsonl", synthetic_labels(1, 6, comments=2))
    assert run_cli(tmp_path / "l.jsonl", "--out", tmp_path / "o", "--resamples", 20) == 0
    first = (tmp_path / "o" / "rates.tex").read_text().splitlines()[0]
    assert first == "% rates: generated by 'python seam.py tables'; do not edit by hand."
    from stats.render import to_latex
    report = report_of([label("m", "c0", "newline", True)])
    assert to_latex(table(report, "rates"), command="make tables").startswith(
        "% rates: generated by 'make tables'; do not edit by hand.\n")


def test_paired_contrast_rows_follow_the_given_contrasts_and_skip_absent_conditions():
    from stats.contrasts import paired_contrast_rows
    clusters = [f"c{i}" for i in range(5)]
    outcomes = {("m", "clean"): dict.fromkeys(clusters, False), ("m", "boundary"): dict.fromkeys(clusters, True),
                ("m", "newline"): {c: i < 2 for i, c in enumerate(clusters)}}
    rows = paired_contrast_rows(outcomes, ["m", "absent-model"],
                                [("newline", "clean"), ("native", "clean"), ("boundary", "clean")], TableSettings())
    assert [(r.model, r.first, r.second) for r in rows] == [
        ("m", "newline", "clean"), ("absent-model", "newline", "clean"),
        ("m", "boundary", "clean"), ("absent-model", "boundary", "clean")]
    by_key = {(r.model, r.first): r for r in rows}
    assert by_key[("m", "boundary")].result.table.first_only == 5
    assert by_key[("m", "newline")].result.table.first_only == 2
    assert by_key[("absent-model", "boundary")].result.table.n == 0
    assert by_key[("absent-model", "boundary")].significant is None


def test_cli_summary_quotes_each_rate_and_contrast_from_the_tables(tmp_path, capsys):
    rows = [label("m", f"c{i}", "newline", i < 3) for i in range(8)]
    rows += [label("m", f"c{i}", "blank", i < 1) for i in range(8)]
    jsonl.write(tmp_path / "labels.jsonl", rows)
    assert run_cli(tmp_path / "labels.jsonl", "--out", tmp_path / "out", "--resamples", 20) == 0
    printed = capsys.readouterr().out.splitlines()
    assert "models: 1 (m); conditions: newline, blank" in printed
    # Wilson 95% intervals for 3/8 and 1/8
    assert "  m: newline 37.5% [13.7%, 69.4%] n=8; blank 12.5% [2.2%, 47.1%] n=8" in printed
    assert any(line.startswith("  m newline vs blank: b=2 c=0 p_holm=0.5") for line in printed)


def test_summary_of_a_folder_without_tables_is_empty(tmp_path):
    from stats.summary import folder_lines, summary_lines
    assert folder_lines(tmp_path) == [] and summary_lines({}) == []


def test_a_table_an_earlier_run_wrote_and_this_run_does_not_is_removed_and_nothing_else(tmp_path, capsys):
    """The page reads every table a spec names in the folder: an earlier run's usage table (written with
    --traces) must not be shown beside a later run's rates. Files no spec names are the user's and stay."""
    jsonl.write(tmp_path / "labels.jsonl", synthetic_labels(2, 12, comments=4, seed=5))
    out = tmp_path / "out"
    assert run_cli(tmp_path / "labels.jsonl", "--out", out, "--resamples", 50) == 0
    for name in ("usage.csv", "usage.md", "usage.tex", "recovered.csv", "mine.csv", "rates.txt"):
        (out / name).write_text("from an earlier run\n")
    assert run_cli(tmp_path / "labels.jsonl", "--out", out, "--resamples", 50) == 0
    names = {p.name for p in out.iterdir()}
    assert not names & {"usage.csv", "usage.md", "usage.tex", "recovered.csv"}
    assert {"mine.csv", "rates.txt", "rates.csv", "sensitivity.tex"} <= names
