"""The tables have a schema, as the records do (tests/test_records.py): docs/FORMATS.md lists exactly the columns
of stats/specs.py, validity/specs.py, review/specs.py and occurrence/specs.py, every released table reads
against its spec and writes back to the same bytes, a malformed table is one line naming file, line and what
was expected, the commands summarise the tables they computed (not the files they wrote), `report` reads each
table once, and tables are written by one writer."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import seam
from common import jsonl
from common.errors import UserError
from occurrence import specs as occurrence_specs
from review import specs as review_specs
from stats import specs as absorption_specs
from stats.render import to_csv
from stats.synthetic import synthetic_labels
from validity import specs as validity_specs

ROOT = Path(__file__).resolve().parents[1]
FORMATS = (ROOT / "docs" / "FORMATS.md").read_text(encoding="utf-8")
# Each vocabulary with the heading of its section in docs/FORMATS.md.
SECTIONS = {"\n## Tables (`data/tables/`)": (*absorption_specs.TABLES, *validity_specs.TABLES),
            "\n## Review report (`seam.py review report --out DIR`)": review_specs.TABLES,
            "\n### Occurrence report (`seam.py occurrence report --out DIR`)": occurrence_specs.TABLES}
SPECS = {spec.name: spec for specs in SECTIONS.values() for spec in specs}


def _documented(heading: str) -> dict[str, list[str]]:
    """A table section of docs/FORMATS.md: each NAME with its CSV columns, in order. A parenthesis explains
    (its words are not columns); "as `other`" means the columns of `other`."""
    start = FORMATS.index("| NAME | CSV columns |", FORMATS.index(heading))
    lines = (FORMATS[start:] + "\n").split("\n\n", 1)[0].splitlines()  # to the blank line after it, or the end
    rows = [line.split("|")[1:-1] for line in lines[2:]]  # after the header and its rule
    found: dict[str, list[str]] = {}
    for names, columns in rows:
        while re.search(r"\([^()]*\)", columns):
            columns = re.sub(r"\s*\([^()]*\)", "", columns)
        listed = [cell.strip().strip("`") for cell in columns.split(",")]
        if as_other := re.fullmatch(r"as `([a-z_]+)`", columns.split(",")[0].strip()):
            listed = found[as_other.group(1)]
        for name in re.findall(r"`([a-z_]+)`", re.sub(r"\([^()]*\)", "", names)):
            found[name] = listed
    return found


@pytest.mark.parametrize("heading", sorted(SECTIONS))
def test_formats_md_names_exactly_the_tables_of_the_specs(heading):
    assert sorted(_documented(heading)) == sorted(spec.name for spec in SECTIONS[heading])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_formats_md_lists_exactly_the_columns_of_each_spec_in_order(name):
    heading = next(heading for heading, specs in SECTIONS.items() if SPECS[name] in specs)
    assert _documented(heading)[name] == SPECS[name].documented()


RELEASED = sorted([*(ROOT / "data" / "tables").glob("*.csv"), *(ROOT / "data" / "studies").glob("*/tables/*.csv"),
                   *(ROOT / "data" / "review").glob("*/review_*.csv"),
                   *(ROOT / "data" / "occurrence").glob("*/occurrence_*.csv")])


@pytest.mark.parametrize("path", RELEASED, ids=[str(p.relative_to(ROOT / "data")) for p in RELEASED])
def test_every_released_table_reads_against_its_spec_and_writes_back_to_the_same_bytes(path):
    from stats.schema import read_table

    table = read_table(path, SPECS[path.stem])
    assert table.rows
    assert to_csv(table) == path.read_text(encoding="utf-8")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rates.csv"
    path.write_bytes(text.encode("utf-8"))
    return path


HEADER = "model,condition,n,absorbed,rate,ci_low,ci_high,entailment_not_run\n"


@pytest.mark.parametrize(("text", "message"), [
    ("model,condition,n,absorbed,rate,ci_low,ci_high\n",
     r"rates.csv:1: no column 'entailment_not_run', expected the rates table's columns: model, condition, n, "),
    ("model,condition,N,absorbed,rate,ci_low,ci_high,entailment_not_run\n",
     r"rates.csv:1: column 3 is 'N', expected the rates table's columns: model, condition, n,"),
    ("condition,model,n,absorbed,rate,ci_low,ci_high,entailment_not_run\n",
     r"rates.csv:1: the columns are out of order, expected the rates table's columns: model, condition,"),
    (HEADER + "m,blank,8,3,0.375000,0.1,0.6,0\nm,newline,eight,3,0.375000,0.1,0.6,0\n",
     r"rates.csv:3: column 'n' is 'eight', expected a whole number$"),
    (HEADER + "m,blank,8,3,high,0.1,0.6,0\n", r"rates.csv:2: column 'rate' is 'high', expected a number$"),
    (HEADER + "m,blank,8,3\n", r"rates.csv:2: 4 cells, expected 8 \(the columns of the header\)$"),
    (HEADER + '"a\nb",blank,8,3,0.3,0.1,0.6,0\nm,blank,8,3,0.3,0.1,0.6,x\n',
     r"rates.csv:4: column 'entailment_not_run' is 'x', expected a whole number$"),  # the row's first line
    ("", r"rates.csv:1: no header, expected the rates table's columns"),
])
def test_a_malformed_table_is_one_line_naming_file_line_and_what_was_expected(tmp_path, text, message):
    from stats.schema import read_table

    with pytest.raises(UserError) as caught:
        read_table(_write(tmp_path, text), absorption_specs.RATES)
    assert re.search(message, str(caught.value)) and "\n" not in str(caught.value)
    assert str(caught.value).startswith(str(tmp_path))


def test_a_table_of_compare_and_the_columns_per_condition_read_too(tmp_path):
    from stats.schema import origin_of, read_table

    rates = read_table(_write(tmp_path, "origin," + HEADER + "yours,m,blank,8,3,0.375000,,,\n"),
                       absorption_specs.RATES)
    (row,) = rates.rows
    assert (origin_of(row), row.model, row.n, row.rate, row.ci_low, row.entailment_not_run) == \
        ("yours", "m", 8, 0.375, None, None)
    header = "cluster,source,genre,comment_id,newline_absorbed,newline_models,absorbed,usable,share,xml-tags_absorbed"
    path = tmp_path / "clusters.csv"
    path.write_text(header + ",xml-tags_models\na-001,a,code,,1,2,1,3,0.333333,0,1\n", encoding="utf-8")
    table = read_table(path, absorption_specs.CLUSTERS)
    assert [c.key for c in table.columns][-2:] == ["xml-tags_absorbed", "xml-tags_models"]
    assert table.rows[0][-2:] == (0, 1) and to_csv(table) == path.read_text(encoding="utf-8")
    path.write_text(header + "\na-001,a,code,,1,2,1,3,0.333333,0\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"clusters.csv:1: no column 'xml-tags_models', expected the clusters"):
        read_table(path, absorption_specs.CLUSTERS)


def test_a_text_cell_made_safe_for_a_spreadsheet_reads_back_as_it_was(tmp_path):
    from stats.schema import read_table

    path = _write(tmp_path, HEADER + "'=cmd,blank,8,3,0.375000,0.1,0.6,0\n'plain,blank,1,0,0,0,0,0\n")
    rows = read_table(path, absorption_specs.RATES).rows
    assert [row.model for row in rows] == ["=cmd", "'plain"]


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """The files opened for reading (by `open`, `Path.open`, or `os.open` without a write flag, as
    common.reading opens them) while the test runs: every read of a file (the kit writes with `os.open`,
    through common.files, with write flags)."""
    import builtins
    import io
    import os

    found: list[str] = []
    real, real_os_open = io.open, os.open

    def counting(file, *args, **kwargs):
        if isinstance(file, str | Path):
            found.append(str(file))
        return real(file, *args, **kwargs)

    def counting_os(path, flags, *args, **kwargs):
        if isinstance(path, str | Path) and not flags & (os.O_WRONLY | os.O_RDWR):
            found.append(str(path))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(io, "open", counting)
    monkeypatch.setattr(builtins, "open", counting)
    monkeypatch.setattr(os, "open", counting_os)
    return found


def test_tables_prints_the_summary_of_what_it_computed_not_of_the_files_it_wrote(tmp_path, opened, capsys):
    import stats.summary

    jsonl.write(tmp_path / "labels.jsonl", synthetic_labels(models=2, clusters=12, comments=4))
    out = tmp_path / "out"
    assert seam.main(["tables", str(tmp_path / "labels.jsonl"), "--out", str(out), "--resamples", "20"]) == 0
    assert [path for path in opened if Path(path).parent == out] == []
    printed = capsys.readouterr().out.splitlines()[1:]
    assert len(printed) > 5 and printed == stats.summary.folder_lines(out)  # what the files give, too


def test_validity_prints_the_summary_of_what_it_computed_not_of_the_files_it_wrote(tmp_path, opened, capsys):
    import validity.summary
    from benchmark import dataset
    from validity.synthetic import trace_row

    benchmark = dataset.load()
    rows = [trace_row(name, condition, "def f():\n    return 1\n", benchmark_sha256=benchmark.sha256)
            for name in ("humaneval-001", "humaneval-002") for condition in ("clean", "newline")]
    jsonl.write(tmp_path / "m.jsonl", rows)
    out = tmp_path / "out"
    assert seam.main(["validity", str(tmp_path / "m.jsonl"), "--out", str(out)]) == 0
    assert [path for path in opened if Path(path).parent == out] == []
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("validity: ")]
    assert printed and printed == validity.summary.folder_lines(out)


def test_report_reads_each_table_once(tmp_path, opened):
    data = ROOT / "data"
    assert seam.main(["report", "--labels", str(data / "labels"), "--traces", str(data / "traces"), "--tables",
                      str(data / "tables"), "--review", str(data / "review"), "--occurrence",
                      str(data / "occurrence" / "sharegpt-v3-prefix"), "--out", str(tmp_path / "r.html")]) == 0
    tables = [path for path in opened if path.endswith(".csv")]
    assert tables.count(str(data / "tables" / "rates.csv")) == 1
    assert str(data / "occurrence" / "sharegpt-v3-prefix" / "occurrence_pipeline.csv") in tables
    assert len(tables) > 20 and sorted(tables) == sorted(set(tables))
    assert (tmp_path / "r.html").read_bytes() == (data / "report.html").read_bytes()


def test_tables_are_written_by_the_one_writer():
    """No module but stats/render.py renders a table file (CSV or LaTeX): every command writes its tables with
    stats.render.write_tables, all or (a full disk) none."""
    callers = []
    for package in ("stats", "validity", "review", "report", "compare", "occurrence", "perf"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "stats" / "render.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in (
                        "to_csv", "to_latex", "write_table"):
                    callers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert callers == []


def _review_copy(tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(ROOT / "data" / "review" / "smollm2-135m", tmp_path / "review" / "smollm2-135m")
    return tmp_path / "review"


def test_the_report_reads_review_tables_against_their_specs_and_names_each_reader(tmp_path):
    from report.tables import read_reviews

    (review,) = read_reviews(_review_copy(tmp_path))
    assert review.readers == ("seam-dev",)
    estimates = dict(review.tables)["review_estimates.csv"]
    assert estimates.columns == review_specs.ESTIMATES.columns and isinstance(estimates.rows[0].n, int)


def test_a_review_table_of_other_columns_is_one_line_naming_file_and_line(tmp_path):
    from report.tables import read_reviews

    folder = _review_copy(tmp_path)
    path = folder / "smollm2-135m" / "review_confusion.csv"
    path.write_text(path.read_text(encoding="utf-8").replace("unanswered", "unseen", 1), encoding="utf-8")
    with pytest.raises(UserError, match=r"review_confusion.csv:1: column 6 is 'unseen', expected the "
                                        r"review_confusion table's columns: kit, cases, "):
        read_reviews(folder)


@pytest.mark.parametrize(("change", "message"), [
    (lambda folder: (folder / "review_extra.csv").write_text("a\n1\n"),
     r"review_extra.csv: not a table of 'seam.py review report' \(expected one of review_cases, "),
    (lambda folder: (folder / "review_provenance.json").unlink(),
     r"review_provenance.json: no such file, expected the review report's provenance"),
    (lambda folder: (folder / "review_provenance.json").write_text("[1]\n"),
     r"review_provenance.json: found an array, expected the review report's provenance"),
    (lambda folder: (folder / "review_provenance.json").write_text('{"reviewer": 3}\n'),
     r"review_provenance.json: 'reviewer' is a number, expected a reader's name \(text\) or null"),
    (lambda folder: (folder / "review_provenance.json").write_text('{"reviewer": "a", "second": {"second": []}}\n'),
     r"review_provenance.json: 'second.second' is an array, expected a reader's name"),
])
def test_a_review_folder_the_kit_did_not_write_is_one_line_from_seam_report(tmp_path, capsys, change, message):
    folder = _review_copy(tmp_path)
    change(folder / "smollm2-135m")
    data = ROOT / "data"
    assert seam.main(["report", "--labels", str(data / "labels"), "--traces", str(data / "traces"), "--tables",
                      str(data / "tables"), "--review", str(folder), "--out", str(tmp_path / "r.html")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("report: reading")]
    assert len(err) == 1 and err[0].startswith("seam.py report: error: ") and re.search(message, err[0]), err
    assert not (tmp_path / "r.html").exists()
