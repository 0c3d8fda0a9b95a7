"""`seam.py validity` end to end on hand-made traces: tables, pairing, bytes, --execute, bad input."""

from datetime import timedelta

import pytest

import seam
from benchmark import dataset
from benchmark.render import BEGIN_MARKER, END_MARKER
from common import jsonl
from common.errors import UserError
from common.files import read_csv
from common.traces import read_final
from stats.synthetic import label_row
from validity.synthetic import trace_row

BENCHMARK = dataset.load()
HE, FX, WK = (BENCHMARK.cluster(name) for name in ("humaneval-001", "fissix-002", "wikipedia-001"))
SHA = BENCHMARK.sha256
TABLES = ("validity_syntax", "validity_syntax_contrasts", "validity_syntax_as_returned",
          "validity_syntax_as_returned_contrasts", "validity_similarity", "validity_provenance",
          "validity_provenance_flags")


def rows():
    broken = HE.reference.replace("def x_or_y(n, x, y):", "def x_or_y(n, x, y)")
    twice = f"{BEGIN_MARKER}\n{HE.reference}\n{END_MARKER}\n{BEGIN_MARKER}\n{HE.reference}\n{END_MARKER}"
    made = [
        ("humaneval-001", "clean", f"Here you go:\n\n```python\n{HE.reference}\n```", "ok"),
        ("humaneval-001", "boundary", broken, "ok"),
        ("humaneval-001", "mitigation", twice, "ok"),
        ("fissix-002", "clean", FX.reference, "ok"),
        ("fissix-002", "boundary", FX.artifact, "ok"),  # not ported: Python 2 is invalid Python 3
        ("fissix-002", "mitigation", FX.reference[:20], "unusable"),
        ("wikipedia-001", "clean", WK.reference, "ok"),
        ("wikipedia-001", "boundary", WK.artifact, "ok"),
        ("wikipedia-001", "mitigation", WK.reference + " Sent after lunch.", "ok"),
    ]
    return [trace_row(cluster, condition, output, status=status, at=timedelta(seconds=i), benchmark_sha256=SHA)
            for i, (cluster, condition, output, status) in enumerate(made)]


def run_cli(*argv):
    return seam.main(["validity", *map(str, argv)])


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "model-a.jsonl"
    jsonl.write(path, rows())
    return path


def test_writes_every_table_but_not_the_functional_one_without_execute(trace, tmp_path, capsys):
    assert run_cli(trace, "--out", tmp_path / "out") == 0
    names = {p.name for p in (tmp_path / "out").iterdir()}
    assert {f"{t}{s}" for t in TABLES for s in (".csv", ".md", ".tex")} | {"validity_items.jsonl"} == names
    out = capsys.readouterr().out
    assert "functional check not run" in out and "--execute" in out
    assert "validity: model-a: invalid code clean 0/2; boundary 2/2" in out
    assert "validity: model-a: code invalid as returned clean 1/2; boundary 2/2; mitigation 1/1 (1 recovered)" in out


def test_syntax_counts_and_the_paired_contrast_with_clean(trace, tmp_path):
    run_cli(trace, "--out", tmp_path / "out")
    syntax = {(r["source"], r["condition"]): r for r in read_csv(tmp_path / "out" / "validity_syntax.csv")}
    assert (syntax["all", "clean"]["n"], syntax["all", "clean"]["invalid"]) == ("2", "0")
    assert (syntax["all", "boundary"]["n"], syntax["all", "boundary"]["invalid"]) == ("2", "2")
    assert (syntax["fissix", "boundary"]["invalid"], syntax["humaneval", "boundary"]["invalid"]) == ("1", "1")
    mitigation = syntax["all", "mitigation"]
    assert (mitigation["outputs"], mitigation["n"], mitigation["echo"]) == ("2", "1", "1")  # fissix unusable
    assert syntax["all", "boundary"]["rate"] == "1.000000"
    contrasts = {r["contrast"]: r for r in read_csv(tmp_path / "out" / "validity_syntax_contrasts.csv")}
    boundary = contrasts["boundary vs clean"]
    assert (boundary["n_pairs"], boundary["b"], boundary["c"]) == ("2", "2", "0")
    assert float(boundary["p_mcnemar"]) == 0.5  # two discordant pairs, both one way: 2 * (1/2)^2
    assert contrasts["mitigation vs clean"]["n_pairs"] == "1"  # the unusable output leaves its pair out
    assert "blank vs clean" not in contrasts  # no blank outputs, no contrast


def test_the_reply_as_returned_beside_the_edited_text(trace, tmp_path):
    run_cli(trace, "--out", tmp_path / "out")
    table = {(r["source"], r["condition"]): r
             for r in read_csv(tmp_path / "out" / "validity_syntax_as_returned.csv")}
    clean = table["all", "clean"]  # the humaneval reply has a preamble before its fence: invalid as returned
    assert (clean["n"], clean["invalid"], clean["invalid_extracted"], clean["fenced"]) == ("2", "1", "0", "0")
    assert (table["humaneval", "clean"]["invalid"], table["fissix", "clean"]["invalid"]) == ("1", "0")
    boundary = table["all", "boundary"]
    assert (boundary["invalid"], boundary["invalid_extracted"], boundary["recovered"]) == ("2", "2", "0")
    mitigation = table["all", "mitigation"]  # the block echoed twice: its marker lines removed, it parses
    assert (mitigation["outputs"], mitigation["n"], mitigation["invalid"]) == ("2", "1", "1")
    assert (mitigation["echoing"], mitigation["recovered"], mitigation["invalid_without_markers"]) == ("1", "1", "0")
    assert mitigation["invalid_extracted"] == "1"  # the extraction keeps the inner END and BEGIN lines too
    assert clean["rate"] == "0.500000"
    contrasts = {r["contrast"]: r for r in read_csv(tmp_path / "out" / "validity_syntax_as_returned_contrasts.csv")}
    boundary = contrasts["boundary vs clean"]
    assert (boundary["n_pairs"], boundary["b"], boundary["c"]) == ("2", "1", "0")  # both invalid on humaneval
    mitigation = contrasts["mitigation vs clean"]
    assert (mitigation["n_pairs"], mitigation["b"], mitigation["c"]) == ("1", "0", "0")
    markdown = (tmp_path / "out" / "validity_syntax_as_returned.md").read_text()
    assert "exactly one Markdown fenced block" in markdown and "Invalid extracted" in markdown
    assert (tmp_path / "out" / "validity_syntax.csv").read_text().splitlines()[0].endswith("recovered")


def test_table_counts_agree_with_the_item_rows(trace, tmp_path):
    run_cli(trace, "--out", tmp_path / "out")
    items = [row for _, row in jsonl.read(tmp_path / "out" / "validity_items.jsonl")]
    for row in read_csv(tmp_path / "out" / "validity_syntax.csv"):
        mine = [i for i in items if i["condition"] == row["condition"] and i["parses"] is not None
                and row["source"] in ("all", i["source"])]
        assert int(row["n"]) == len(mine)
        assert int(row["invalid"]) == sum(not i["parses"] for i in mine)
        assert int(row["recovered"]) == sum(not i["parses"] and i["parses_without_markers"] for i in mine)
    for row in read_csv(tmp_path / "out" / "validity_syntax_as_returned.csv"):
        mine = [i for i in items if i["condition"] == row["condition"] and i["returned_parses"] is not None
                and row["source"] in ("all", i["source"])]
        assert int(row["n"]) == len(mine) and [i["parses"] is not None for i in mine] == [True] * len(mine)
        assert int(row["invalid"]) == sum(not i["returned_parses"] for i in mine)
        assert int(row["fenced"]) == sum(i["returned_fenced"] for i in mine)
        assert int(row["recovered"]) == sum(not i["returned_parses"] and i["returned_parses_without_markers"]
                                            for i in mine)
        assert int(row["invalid_extracted"]) == sum(not i["parses"] for i in mine)
        assert [bool(i["returned_error"]) for i in mine] == [not i["returned_parses"] for i in mine]
    assert {i["id"] for i in items if i["source"] == "wikipedia"} == {
        "wikipedia-001/clean", "wikipedia-001/boundary", "wikipedia-001/mitigation"}


def test_similarity_sees_the_reference_and_the_unchanged_artifact(trace, tmp_path):
    run_cli(trace, "--out", tmp_path / "out")
    rows_ = {(r["source"], r["condition"]): r for r in read_csv(tmp_path / "out" / "validity_similarity.csv")}
    assert rows_["wikipedia", "clean"]["chrf"] == "1.000000"
    boundary = rows_["wikipedia", "boundary"]
    assert float(boundary["chrf"]) < 1 and boundary["unchanged"] == "1"
    assert (boundary["pairs"], boundary["higher"], boundary["lower"]) == ("1", "0", "1")
    assert float(boundary["diff"]) < 0


def test_same_traces_give_the_same_bytes_whatever_their_split_into_files(trace, tmp_path):
    run_cli(trace, "--out", tmp_path / "one")
    split = rows()
    jsonl.write(tmp_path / "split" / "b.jsonl", split[::2])
    jsonl.write(tmp_path / "split" / "a.jsonl", split[1::2])
    run_cli(tmp_path / "split", "--out", tmp_path / "two")
    for path in sorted((tmp_path / "one").iterdir()):
        assert path.read_bytes() == (tmp_path / "two" / path.name).read_bytes(), path.name


def test_execute_runs_the_functional_check_reproducibly(trace, tmp_path, capsys):
    assert run_cli(trace, "--out", tmp_path / "a", "--execute") == 0
    functional = {r["condition"]: r for r in read_csv(tmp_path / "a" / "validity_functional.csv")}
    assert (functional["clean"]["n"], functional["clean"]["passed"]) == ("1", "1")
    assert (functional["boundary"]["passed"], functional["boundary"]["error"]) == ("0", "1")
    markdown = (tmp_path / "a" / "validity_functional.md").read_text()
    assert "reference solutions pass 1 of 1" in markdown and "unedited artifacts pass 1 of 1" in markdown
    assert "CPU seconds" in markdown and "Protections:" in markdown
    items = {r["id"]: r for _, r in jsonl.read(tmp_path / "a" / "validity_functional_items.jsonl")}
    assert items["humaneval-001/boundary"]["detail"] == "SyntaxError in edited code"
    assert items["humaneval-001/reference"]["outcome"] == "passed"
    assert "validity: model-a: unit tests passed clean 1/1" in capsys.readouterr().out
    run_cli(trace, "--out", tmp_path / "b", "--execute")
    for path in sorted((tmp_path / "a").iterdir()):
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes(), path.name
    # a later run without --execute leaves the earlier functional tables alone, and says so; an optional table
    # of this command that it did not write this time (the sensitivity table of --labels) is removed
    (tmp_path / "a" / "validity_sensitivity.csv").write_text("from an earlier run\n")
    run_cli(trace, "--out", tmp_path / "a")
    assert "still holds functional tables" in capsys.readouterr().out
    assert (tmp_path / "a" / "validity_functional.csv").read_bytes() == (tmp_path / "b" / "validity_functional.csv"
                                                                          ).read_bytes()
    assert (tmp_path / "a" / "validity_functional_items.jsonl").is_file()
    assert not (tmp_path / "a" / "validity_sensitivity.csv").exists()


def started_at(row: dict, value) -> dict:
    """`row` with its (one) attempt started at `value`."""
    return {**row, "attempts": [{**row["attempts"][0], "started_at": value}]}


def test_max_days_reaches_the_flags(tmp_path):
    late = [r if r["condition"] != "mitigation" else started_at(r, "2026-02-01T00:00:00.000Z") for r in rows()]
    jsonl.write(tmp_path / "t.jsonl", late)
    run_cli(tmp_path / "t.jsonl", "--out", tmp_path / "strict")
    run_cli(tmp_path / "t.jsonl", "--out", tmp_path / "lax", "--max-days", "30")
    (strict,) = read_csv(tmp_path / "strict" / "validity_provenance_flags.csv")
    (lax,) = read_csv(tmp_path / "lax" / "validity_provenance_flags.csv")
    assert (strict["days_apart"], strict["flagged"]) == ("true", "true")
    assert (lax["days_apart"], lax["flagged"]) == ("false", "false")


def test_labels_add_the_contrasts_with_the_flagged_models_left_out(tmp_path, capsys):
    # model-a's mitigation answered by another served model: flagged; model-b collected alike: kept
    flagged = [r if r["condition"] != "mitigation" else {**r, "served_model": "served-2"} for r in rows()]
    jsonl.write(tmp_path / "traces" / "model-a.jsonl", flagged)
    jsonl.write(tmp_path / "traces" / "model-b.jsonl", [{**r, "model": "model-b"} for r in rows()])
    labels = []
    for model in ("model-a", "model-b", "model-c"):  # model-c has labels but no traces
        for i in range(6):  # the same borderline reduction in each: significant alone, not after Holm
            labels += [label_row(model, f"humaneval-{i:03d}", "newline", True),
                       label_row(model, f"humaneval-{i:03d}", "boundary", False)]
    jsonl.write(tmp_path / "labels.jsonl", labels)
    assert run_cli(tmp_path / "traces", "--out", tmp_path / "out", "--labels", tmp_path / "labels.jsonl") == 0
    got = {r["model"]: r for r in read_csv(tmp_path / "out" / "validity_sensitivity.csv")
           if r["contrast"] == "newline vs boundary"}
    assert got["model-a"]["n_pairs"] == "" and got["model-a"]["survives"] == ""  # left out
    assert got["model-a"]["changed_pairs"] == "6"
    for kept in ("model-b", "model-c"):  # Holm over two models instead of three
        assert float(got[kept]["reference_p_holm"]) == pytest.approx(3 * 0.03125)
        assert float(got[kept]["p_holm"]) == pytest.approx(2 * 0.03125)
    markdown = (tmp_path / "out" / "validity_sensitivity.md").read_text()
    assert "Left out: model-a (served identifiers differ between conditions)." in markdown
    assert "No traces for model-c: provenance unknown, kept." in markdown
    assert "validity: flagged models left out:" in capsys.readouterr().out
    (flags,) = [r for r in read_csv(tmp_path / "out" / "validity_provenance_flags.csv") if r["model"] == "model-a"]
    assert (flags["served_differs"], flags["served_missing"], flags["flagged"]) == ("true", "", "true")
    # without --labels there is no such table
    run_cli(tmp_path / "traces", "--out", tmp_path / "plain")
    assert not (tmp_path / "plain" / "validity_sensitivity.csv").exists()


# ---------------------------------------------------------------- bad input


def error_of(capsys, *argv):
    assert run_cli(*argv) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("change, expected", [
    (lambda r: started_at(r, "yesterday"), "attempt 1: attempt 'started_at' is 'yesterday'; expected a UTC time"),
    (lambda r: started_at(r, "2026-01-05T09:00:00"), "has no time zone"),
    (lambda r: {**r, "attempts": [{"started_at": "2026-01-05T09:00:00.000Z"}]},
     "attempt 1: field 'latency_s' is missing"),
    (lambda r: {**r, "attempts": "none"}, "field 'attempts' is 'none', expected a list of attempt objects"),
    (lambda r: {**r, "cluster": "humaneval-999", "id": "humaneval-999/mitigation"}, "not in the benchmark"),
    (lambda r: {**r, "benchmark_sha256": "0" * 64}, "rendered from benchmark 000000000000"),
    (lambda r: {**r, "condition": "loud", "id": "humaneval-001/loud"}, "condition 'loud' is not defined (built-in"),
    (lambda r: {**r, "condition": "LOUD", "id": "humaneval-001/LOUD"}, "field 'condition' is 'LOUD', expected a"),
    (lambda r: {**r, "id": "humaneval-001/blank"}, "does not match cluster/condition"),
    (lambda r: {**r, "output": 42}, "field 'output' is 42, expected a string or null"),
    (lambda r: {**r, "model": None}, "field 'model' is None, expected a string"),
])
def test_a_malformed_row_is_named_by_file_and_line(tmp_path, capsys, change, expected):
    made = rows()
    made[2] = change(made[2])
    jsonl.write(tmp_path / "t.jsonl", made)
    err = error_of(capsys, tmp_path / "t.jsonl", "--out", tmp_path / "out")
    assert f"{tmp_path / 't.jsonl'}:3:" in err and expected in err
    assert "Traceback" not in err


def test_a_bad_attempt_time_is_refused_with_the_common_readers_file_and_line(tmp_path, capsys):
    made = rows()
    made[4] = started_at(made[4], "2026-13-01T00:00:00.000Z")  # month 13
    path = tmp_path / "t.jsonl"
    jsonl.write(path, made)
    with pytest.raises(UserError) as caught:
        read_final(path)
    assert str(caught.value) == (f"{path}:5: attempt 1: attempt 'started_at' is '2026-13-01T00:00:00.000Z'; "
                                 "expected a UTC time like 2026-01-02T03:04:05.678Z")
    assert error_of(capsys, path, "--out", tmp_path / "out") == f"seam.py validity: error: {caught.value}\n"
    assert not (tmp_path / "out").exists()


def test_the_same_model_given_twice_is_refused(trace, tmp_path, capsys):
    jsonl.write(tmp_path / "again.jsonl", rows()[:1])
    err = error_of(capsys, trace, tmp_path / "again.jsonl", "--out", tmp_path / "out")
    assert "already has a final row for 'humaneval-001/clean'" in err


def test_a_torn_trace_is_refused_with_the_common_readers_message(trace, tmp_path, capsys):
    with open(trace, "ab") as f:
        f.write(b'{"id": "half')
    err = error_of(capsys, trace, "--out", tmp_path / "out")
    assert f"{trace}:10: the last line is torn" in err and "--move-torn" in err


def test_bad_paths_and_options(trace, tmp_path, capsys):
    assert "no such file or directory" in error_of(capsys, tmp_path / "missing.jsonl", "--out", tmp_path / "o")
    (tmp_path / "empty").mkdir()
    assert "no *.jsonl trace files" in error_of(capsys, tmp_path / "empty", "--out", tmp_path / "o")
    (tmp_path / "file").write_text("x")
    assert "not a directory" in error_of(capsys, trace, "--out", tmp_path / "file")
    for days in ("0", "-1", "nan", "soon"):
        with pytest.raises(SystemExit) as exit_:
            run_cli(trace, "--out", tmp_path / "o", "--max-days", days)
        assert exit_.value.code == 2 and "argument --max-days:" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
