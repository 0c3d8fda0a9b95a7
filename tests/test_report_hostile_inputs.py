"""`seam.py report` on hostile tables and provenance files: one line naming file and line or field, never a
traceback (issue 36, defect 9).

A 5,000-digit whole number in a table cell is more than Python's int() converts (4,300 digits by default), and
a lone surrogate ("\\ud800", valid JSON, no Unicode text) in a review or occurrence provenance file cannot be
written into the page's UTF-8: both once ended in a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from support.reportdata import ROOT, make_release

import seam
from review.specs import ESTIMATES
from stats.render import Column
from stats.schema import parse_cell

OCCURRENCE = ROOT / "data" / "occurrence" / "sharegpt-v3-prefix"
REVIEW = ROOT / "data" / "review"
DIGITS = "7" * 5000


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return make_release(tmp_path_factory.mktemp("report"), clusters=2)


def report(release, tmp_path, **changed) -> list[str]:
    options = {"labels": release.labels, "traces": release.traces, "tables": release.tables,
               "out": tmp_path / "r.html", **changed}
    return ["report", *(part for name, value in options.items() for part in (f"--{name}", str(value)))]


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("seam.py report: error: ")]
    assert len(errors) == 1, err
    return errors[0].removeprefix("seam.py report: error: ")


def test_a_whole_number_past_the_digit_limit_is_one_line_naming_file_line_and_column():
    with pytest.raises(Exception) as caught:
        parse_cell(DIGITS, Column("n", "n", "int"), "rates.csv:3")
    assert type(caught.value).__name__ == "UserError"
    assert str(caught.value).startswith("rates.csv:3: column 'n' is a whole number of 5,000 digits")
    assert parse_cell("7" * 4300, Column("n", "n", "int"), "x") == int("7" * 4300)  # at the limit: read


@pytest.mark.parametrize("column", ["n", "absorbed"])
def test_a_5000_digit_cell_in_the_rates_table_is_one_line(release, tmp_path, capsys, column):
    tables = tmp_path / "tables"
    shutil.copytree(release.tables, tables)
    lines = (tables / "rates.csv").read_text(encoding="utf-8").split("\n")
    header = lines[0].split(",")
    cells = lines[2].split(",")
    cells[header.index(column)] = DIGITS
    lines[2] = ",".join(cells)
    (tables / "rates.csv").write_text("\n".join(lines), encoding="utf-8")
    assert seam.main(report(release, tmp_path, tables=tables)) == 2
    assert one_error(capsys).startswith(f"{tables / 'rates.csv'}:3: column {column!r} is a whole number of 5,000 "
                                        "digits")


def test_a_5000_digit_cell_in_a_review_table_is_one_line(release, tmp_path, capsys):
    review = tmp_path / "review"
    shutil.copytree(REVIEW, review)
    path = review / "smollm2-135m" / "review_estimates.csv"
    whole = next(column.key for column in ESTIMATES.columns if column.kind == "int")
    lines = path.read_text(encoding="utf-8").split("\n")
    header = lines[0].split(",")
    cells = lines[1].split(",")
    cells[header.index(whole)] = DIGITS
    lines[1] = ",".join(cells)
    path.write_text("\n".join(lines), encoding="utf-8")
    assert seam.main(report(release, tmp_path, review=review)) == 2
    assert one_error(capsys).startswith(f"{path}:2: column {whole!r} is a whole number of 5,000 digits")


@pytest.mark.parametrize("field", ["statement", "judged.model", "answers.reviewer", "corpora"])
def test_a_lone_surrogate_in_the_occurrence_provenance_is_one_line_naming_the_field(release, tmp_path, capsys,
                                                                                     field):
    folder = tmp_path / "occurrence"
    shutil.copytree(OCCURRENCE, folder)
    path = folder / "occurrence_provenance.json"
    provenance = json.loads(path.read_text(encoding="utf-8"))
    if field == "corpora":
        provenance["corpora"][0]["file"] = "sharegpt\ud800.json"
    else:
        record, _, key = field.rpartition(".")
        (provenance[record] if record else provenance)[key] = "a\ud800b"
    path.write_text(json.dumps(provenance), encoding="utf-8")  # ensure_ascii: spelled "\ud800", valid JSON
    assert seam.main(report(release, tmp_path, occurrence=folder)) == 2
    error = one_error(capsys)
    assert error.startswith(f"{path}: ") and "lone surrogate" in error and "U+D800" in error
    assert (field if field != "corpora" else "corpora[0].file") in error


@pytest.mark.parametrize("field", ["reviewer", "second.second"])
def test_a_lone_surrogate_in_a_review_provenance_is_one_line_naming_the_field(release, tmp_path, capsys, field):
    review = tmp_path / "review"
    shutil.copytree(REVIEW, review)
    path = review / "smollm2-135m" / "review_provenance.json"
    provenance = json.loads(path.read_text(encoding="utf-8"))
    if field == "reviewer":
        provenance["reviewer"] = "seam\udc80-dev"
    else:
        provenance["second"] = {**(provenance.get("second") or {}), "second": "seam\udc80-dev"}
    path.write_text(json.dumps(provenance), encoding="utf-8")
    assert seam.main(report(release, tmp_path, review=review)) == 2
    error = one_error(capsys)
    assert error.startswith(f"{path}: ") and "lone surrogate" in error and "U+DC80" in error and field in error


def test_a_review_folder_whose_name_is_not_utf8_is_one_line_naming_it(release, tmp_path, capsys):
    """A folder name of bytes that are not UTF-8 (any byte but "/" and NUL is allowed) comes to Python with a
    surrogate escape ("bad\\udcff"), which the page's UTF-8 cannot carry: once a UnicodeEncodeError traceback."""
    review = tmp_path / "review"
    review.mkdir()
    bad = review / os.fsdecode(b"bad\xff")
    shutil.copytree(REVIEW / "qwen2.5-coder-1.5b", bad)
    assert seam.main(report(release, tmp_path, review=review)) == 2
    error = one_error(capsys)
    assert error == (f"--review {review}: the folder name 'bad\\xff' is not UTF-8 (byte 0xFF at 4); rename it: "
                     "the page names each review report by its folder")
    assert not (tmp_path / "r.html").exists()


def test_a_review_folder_whose_name_is_not_utf8_is_named_safely_on_a_terminal(release, tmp_path):
    """The message goes to a terminal as text: the folder's bytes shown escaped, never raw (nor a traceback)."""
    review = tmp_path / "review"
    review.mkdir()
    shutil.copytree(REVIEW / "qwen2.5-coder-1.5b", review / os.fsdecode(b"bad\xff"))
    done = subprocess.run([sys.executable, "seam.py", *map(str, report(release, tmp_path, review=review))],
                          cwd=ROOT, capture_output=True, timeout=300)
    assert done.returncode == 2 and b"Traceback" not in done.stderr and b"\xff" not in done.stderr
    assert done.stderr.decode("ascii").strip().endswith("the page names each review report by its folder")
