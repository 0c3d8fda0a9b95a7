"""`seam.py score` and `seam.py placebo` never overwrite their own inputs (review of issue 36).

`seam.py score sdir/my-model.jsonl --out-dir sdir` wrote the labels of my-model to sdir/my-model.jsonl: the trace it
had just read, lost. Every file the scorer reads (the traces, --clean-traces, --requests, --conditions) that is, links
to, or is a hard link of a file it writes (--out, --out-dir's <model>.jsonl, placebo's --out) is refused in one line
naming both, before anything is written, by the check compare uses (common/outputs.py). A symbolic link loop where
the scorer writes is one line too.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.fakeserver import config_keys, serve, toml_text

import seam

MODEL = "own-input"
OTHER = "own-input-2"
ROOT = Path(__file__).resolve().parents[1]


def _run(home: Path, name: str) -> Path:
    with serve() as server:
        config = home / f"{name}.toml"
        config.write_text(toml_text(config_keys(server, name=name)), encoding="utf-8")
        traces = home / f"{name}.jsonl"
        assert seam.main(["run", str(config), "--first", "2", "--out", str(traces)]) == 0
    return traces


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """Small trace files of two models of the user's (2 clusters, every condition), from the fake server."""
    home = tmp_path_factory.mktemp("run")
    return {MODEL: _run(home, MODEL), OTHER: _run(home, OTHER)}


@pytest.fixture
def trace(made) -> Path:
    return made[MODEL]


def refused(capsys, argv) -> str:
    """Run the command; it must exit 2 with one error line (no traceback), returned."""
    assert seam.main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith(f"seam.py {argv[0]}: error: ")]
    assert len(errors) == 1 and err.endswith(errors[0] + "\n"), err
    return errors[0]


def placed(trace: Path, at: Path) -> bytes:
    at.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(trace, at)
    return at.read_bytes()


def files_in(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def test_score_into_the_folder_holding_the_trace_is_refused_and_kept(trace, tmp_path, capsys):
    sdir = tmp_path / "sdir"
    given = sdir / f"{MODEL}.jsonl"
    kept = placed(trace, given)
    line = refused(capsys, ["score", given, "--out-dir", sdir, "--no-nli"])
    assert (f"{given}: this trace file is {given}, which score writes; it would be overwritten: move it out of the "
            "--out-dir folder, or choose another --out-dir") in line
    assert given.read_bytes() == kept and files_in(sdir) == [f"{MODEL}.jsonl"]


def test_score_out_naming_the_trace_is_refused(trace, tmp_path, capsys):
    given = tmp_path / "mine.jsonl"
    kept = placed(trace, given)
    line = refused(capsys, ["score", given, "--out", given, "--no-nli"])
    assert f"{given}: this trace file is {given}, which score writes; it would be overwritten: choose another --out" \
        in line
    assert given.read_bytes() == kept and files_in(tmp_path) == ["mine.jsonl"]


def test_a_trace_given_through_a_symbolic_link_to_the_output_is_refused(trace, tmp_path, capsys):
    sdir = tmp_path / "sdir"
    target = sdir / f"{MODEL}.jsonl"
    kept = placed(trace, target)
    link = tmp_path / "mine.jsonl"
    link.symlink_to(target)
    line = refused(capsys, ["score", link, "--out-dir", sdir, "--no-nli"])
    assert f"{link}: this trace file links to {target}, which score writes" in line
    assert target.read_bytes() == kept


def test_a_hard_link_of_the_output_is_refused(trace, tmp_path, capsys):
    given = tmp_path / "runs" / "mine.jsonl"
    kept = placed(trace, given)
    output = tmp_path / "sdir" / f"{MODEL}.jsonl"
    output.parent.mkdir()
    os.link(given, output)
    line = refused(capsys, ["score", given, "--out-dir", output.parent, "--no-nli"])
    assert f"{given}: this trace file is the same file as {output}, which score writes" in line
    assert given.read_bytes() == kept and output.read_bytes() == kept


def test_an_out_dir_linked_to_the_traces_folder_is_refused(trace, tmp_path, capsys):
    runs = tmp_path / "runs"
    given = runs / f"{MODEL}.jsonl"
    kept = placed(trace, given)
    labels = tmp_path / "labels"
    labels.symlink_to(runs)
    line = refused(capsys, ["score", given, "--out-dir", labels, "--no-nli"])
    assert f"{given}: this trace file is {labels / f'{MODEL}.jsonl'}, which score writes" in line
    assert given.read_bytes() == kept and files_in(runs) == [f"{MODEL}.jsonl"]


@pytest.mark.parametrize(("option", "what"), [("--clean-traces", "clean trace file"), ("--requests", "requests file"),
                                              ("--conditions", "condition file")])
def test_another_input_named_as_the_output_is_refused(trace, tmp_path, capsys, option, what):
    given = tmp_path / "input.jsonl"
    if option == "--conditions":
        given = given.with_suffix(".toml")
        kept = placed(ROOT / "data" / "conditions" / "example.toml", given)
    else:
        kept = placed(trace, given)
    line = refused(capsys, ["score", trace, option, given, "--out", given, "--no-nli"])
    assert f"{given}: this {what} is {given}, which score writes" in line
    assert given.read_bytes() == kept


def test_a_clean_traces_folder_holding_the_output_is_refused(made, tmp_path, capsys):
    """--clean-traces FOLDER stands for its *.jsonl files: one of them at the output path is refused."""
    sdir = tmp_path / "sdir"
    clean = sdir / f"{OTHER}.jsonl"
    kept = placed(made[OTHER], clean)
    line = refused(capsys, ["score", made[OTHER], "--clean-traces", sdir, "--out-dir", sdir, "--no-nli"])
    assert f"{clean}: this clean trace file is {clean}, which score writes" in line
    assert clean.read_bytes() == kept


def test_score_in_workers_refuses_the_same_before_writing(made, tmp_path, capsys):
    sdir = tmp_path / "sdir"
    given = sdir / f"{OTHER}.jsonl"
    kept = placed(made[OTHER], given)
    line = refused(capsys, ["score", made[MODEL], given, "--out-dir", sdir, "--workers", "2", "--no-nli"])
    assert f"{given}: this trace file is {given}, which score writes" in line
    assert given.read_bytes() == kept and files_in(sdir) == [f"{OTHER}.jsonl"]  # neither labels file written


def test_placebo_out_naming_the_trace_is_refused(trace, tmp_path, capsys):
    given = tmp_path / "mine.jsonl"
    kept = placed(trace, given)
    line = refused(capsys, ["placebo", given, "--out", given, "--no-nli"])
    assert f"{given}: this trace file is {given}, which placebo writes; it would be overwritten: choose another --out" \
        in line
    assert given.read_bytes() == kept and files_in(tmp_path) == ["mine.jsonl"]


def test_placebo_out_linking_to_the_trace_is_refused(trace, tmp_path, capsys):
    given = tmp_path / "mine.jsonl"
    kept = placed(trace, given)
    out = tmp_path / "placebo.jsonl"
    out.symlink_to(given)
    line = refused(capsys, ["placebo", given, "--out", out, "--no-nli"])
    assert f"{given}: this trace file is the same file as {out}, which placebo writes" in line
    assert given.read_bytes() == kept


def test_score_elsewhere_still_writes(trace, tmp_path, capsys):
    """The check refuses only a clash: a trace beside the labels of another model is scored as before."""
    runs = tmp_path / "runs"
    given = runs / "mine.jsonl"
    kept = placed(trace, given)
    assert seam.main(["score", str(given), "--out-dir", str(runs), "--no-nli"]) == 0
    assert given.read_bytes() == kept and files_in(runs) == ["mine.jsonl", f"{MODEL}.jsonl"]


@pytest.mark.parametrize("where", ["--out-dir", "--out"])
def test_a_symbolic_link_loop_where_score_writes_is_one_line(trace, tmp_path, capsys, where):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    out = loop if where == "--out-dir" else loop / "labels.jsonl"
    line = refused(capsys, ["score", trace, where, out, "--no-nli"])
    assert str(loop) in line and "symbolic link" in line


@pytest.mark.parametrize("where", ["trace", "out"])
def test_a_cache_naming_an_input_or_the_output_is_refused(trace, tmp_path, capsys, where):
    """--cache is a sqlite file the scorer writes: naming the trace it reads, or the labels file it writes, is
    refused before anything is written, as every other clash of an input and an output (left by issue 36)."""
    given = tmp_path / "given" / f"{MODEL}.jsonl"
    kept = placed(trace, given)
    out = tmp_path / "labels.jsonl"
    cache = given if where == "trace" else out
    line = refused(capsys, ["score", given, "--out", out, "--cache", cache])
    assert "choose another --cache" in line and ("entailment cache" in line or "trace file" in line)
    assert given.read_bytes() == kept and not out.exists()
