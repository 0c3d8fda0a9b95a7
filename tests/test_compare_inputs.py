"""`seam.py compare` never overwrites its own inputs (issue 36, defect 1).

Compare writes OUT/labels/NAME.jsonl, OUT/tables/* and OUT/report.html. A trace file (or the prices or
condition file) standing at one of those paths, reached through a symbolic link to one, or a hard link
of one, was read and then replaced by compare's output: the user's run was lost. Every such input is
refused in one line naming it and the output that would overwrite it, before anything is written.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.fakeserver import config_keys, serve, toml_text

import seam

MODEL = "input-model"
PRICES = b'[input-model]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n'


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    """A small trace file of a model of the user's (3 clusters, every condition), from the fake server."""
    home = tmp_path_factory.mktemp("run")
    with serve() as server:
        config = home / f"{MODEL}.toml"
        config.write_text(toml_text(config_keys(server, name=MODEL)), encoding="utf-8")
        traces = home / f"{MODEL}.jsonl"
        assert seam.main(["run", str(config), "--first", "3", "--out", str(traces)]) == 0
    return traces


def refused(capsys, argv) -> str:
    """Run compare; it must exit 2 with one error line (no traceback), returned."""
    assert seam.main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("seam.py compare: error: "), err
    return lines[0]


def placed(trace: Path, at: Path) -> bytes:
    """A copy of the trace file at `at` (an output path of compare); its bytes."""
    at.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(trace, at)
    return at.read_bytes()


@pytest.mark.parametrize("where", [f"labels/{MODEL}.jsonl", "report.html", "tables/rates.csv", "tables/notes.md",
                                   "tables/validity_items.jsonl"])
def test_a_trace_where_compare_writes_is_refused_and_kept(trace, tmp_path, capsys, where):
    out = tmp_path / "out"
    given = out / where
    kept = placed(trace, given)
    line = refused(capsys, ["compare", given, "--out", out])
    assert f"{given}: this trace file is {given}, which compare writes" in line
    assert given.read_bytes() == kept
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [where]  # nothing written


def test_a_symbolic_link_to_a_path_compare_writes_is_refused(trace, tmp_path, capsys):
    out = tmp_path / "out"
    target = out / "labels" / f"{MODEL}.jsonl"
    kept = placed(trace, target)
    link = tmp_path / "mine.jsonl"
    link.symlink_to(target)
    line = refused(capsys, ["compare", link, "--out", out])
    assert f"{link}: this trace file links to {target}, which compare writes" in line
    assert target.read_bytes() == kept


def test_an_output_folder_linked_to_the_traces_folder_is_refused(trace, tmp_path, capsys):
    """OUT/labels is a link to the folder the trace sits in: the labels would replace the trace."""
    runs = tmp_path / "runs"
    given = runs / f"{MODEL}.jsonl"
    kept = placed(trace, given)
    out = tmp_path / "out"
    out.mkdir()
    (out / "labels").symlink_to(runs)
    line = refused(capsys, ["compare", given, "--out", out])
    assert f"{given}: this trace file is {out / 'labels' / f'{MODEL}.jsonl'}, which compare writes" in line
    assert given.read_bytes() == kept


def test_a_hard_link_of_a_path_compare_writes_is_refused(trace, tmp_path, capsys):
    out = tmp_path / "out"
    output = out / "tables" / "summary.md"
    kept = placed(trace, output)
    given = tmp_path / "mine.jsonl"
    os.link(output, given)
    line = refused(capsys, ["compare", given, "--out", out])
    assert f"{given}: this trace file is the same file as {output}, which compare writes" in line
    assert given.read_bytes() == kept


@pytest.mark.parametrize("option", ["--prices", "--conditions"])
def test_a_prices_or_condition_file_where_compare_writes_is_refused(trace, tmp_path, capsys, option):
    out = tmp_path / "out"
    given = out / "tables" / "provenance.json"
    given.parent.mkdir(parents=True)
    if option == "--prices":
        given.write_bytes(PRICES)
    else:
        shutil.copyfile(Path(__file__).resolve().parents[1] / "data" / "conditions" / "example.toml", given)
    kept = given.read_bytes()
    line = refused(capsys, ["compare", trace, "--out", out, option, given])
    what = "prices file" if option == "--prices" else "condition file"
    assert f"{given}: this {what} is {given}, which compare writes" in line
    assert given.read_bytes() == kept


def test_every_file_compare_writes_is_one_it_checked_before_writing(trace, tmp_path):
    """The check is made against the paths compare plans to write; here is a run that writes them."""
    from compare.outputs import planned

    out = tmp_path / "out"
    prices = tmp_path / "prices.toml"
    prices.write_bytes(PRICES)
    assert seam.main(["compare", str(trace), "--out", str(out), "--prices", str(prices)]) == 0
    written = {path for path in out.rglob("*") if path.is_file()}
    assert written and written <= set(planned(out, [MODEL]))
    assert prices.read_bytes() == PRICES


@pytest.mark.parametrize("where", ["labels", "tables", "report.html"])
def test_a_symbolic_link_loop_in_the_output_folder_is_one_line(trace, tmp_path, capsys, where):
    """OUT/labels (or another output) a link to itself: resolving it was a RuntimeError traceback."""
    out = tmp_path / "out"
    out.mkdir()
    (out / where).symlink_to(where)
    line = refused(capsys, ["compare", trace, "--out", out])
    assert str(out / where) in line and "a symbolic link loop" in line
    assert [p.name for p in out.iterdir()] == [where]


def test_an_out_that_links_to_itself_is_one_line(trace, tmp_path, capsys):
    out = tmp_path / "out"
    out.symlink_to(out)
    line = refused(capsys, ["compare", trace, "--out", out])
    assert f"{out}: a symbolic link loop" in line
