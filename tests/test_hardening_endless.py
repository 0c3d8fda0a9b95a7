"""Endless inputs are refused, never read whole (issue 36, defect 12).

/dev/zero given as a trace file, or a file of a report folder linked to it, was read whole: a MemoryError, or
the machine's memory. Every reader now refuses a path that is not a regular file (a character device, a FIFO)
in one line naming it, and bounds what it reads of a file that is small by nature (a table, a provenance, a
prices file). Each command runs in a child process with a memory limit and a timeout, so that a regression
fails here within seconds instead of eating the machine.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
ZERO = Path("/dev/zero")
MEMORY = 1 << 30  # bytes of address space: far more than any of these commands needs to refuse its input
SECONDS = 60  # each refusal takes a few seconds (the page's, after reading the released cases)

pytestmark = pytest.mark.skipif(not ZERO.is_char_device(), reason="needs /dev/zero")


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def one_line(argv, named: Path, cwd: Path) -> str:
    """Run seam.py in a child process with limited memory and time; it must exit 2 with one error line naming
    `named`, returned."""
    command = argv[0]
    done = subprocess.run([sys.executable, str(ROOT / "seam.py"), *map(str, argv)], cwd=cwd, capture_output=True,
                          text=True, timeout=SECONDS, preexec_fn=_limited)
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith(f"seam.py {command}: error: ")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr[-2000:]
    assert done.stderr.endswith(errors[0] + "\n") and str(named) in errors[0], done.stderr[-2000:]
    return errors[0]


TRACE = DATA / "traces" / "smollm2-135m.jsonl"
CANDIDATES = DATA / "occurrence" / "sharegpt-v3-prefix.candidates.jsonl"
COMMANDS = {
    "score": ["score", ZERO, "--out-dir", "labels", "--no-nli"],
    "compare": ["compare", ZERO, "--out", "compare"],
    "tables --traces": ["tables", DATA / "labels", "--traces", ZERO, "--out", "tables"],
    "tables (labels)": ["tables", ZERO, "--out", "tables"],
    "validity": ["validity", ZERO, "--out", "validity"],
    "usage": ["usage", ZERO],
    "usage --prices": ["usage", TRACE, "--prices", ZERO],
    "audit --labels": ["audit", TRACE, "--labels", ZERO, "--no-nli"],
    "review report": ["review", "report", ZERO, "--labels", DATA / "labels", "--out", "review"],
    "occurrence report": ["occurrence", "report", ZERO, "--out", "occurrence"],
    "occurrence report --judged": ["occurrence", "report", CANDIDATES, "--judged", ZERO, "--out", "occurrence"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_dev_zero_as_an_input_is_one_line(tmp_path, name):
    line = one_line(COMMANDS[name], ZERO, tmp_path)
    assert "a character device, not a regular file" in line


def test_a_fifo_as_a_trace_file_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "traces.jsonl"
    os.mkfifo(fifo)
    line = one_line(["score", fifo, "--out-dir", "labels", "--no-nli"], fifo, tmp_path)
    assert "a FIFO (named pipe), not a regular file" in line


def _report(tmp_path: Path, *, tables: Path = DATA / "tables", review: Path | None = None,
            occurrence: Path | None = None) -> list:
    argv = ["report", "--labels", DATA / "labels", "--traces", DATA / "traces", "--tables", tables,
            "--out", tmp_path / "report.html"]
    if review is not None:
        argv += ["--review", review]
    if occurrence is not None:
        argv += ["--occurrence", occurrence]
    return argv


def _copy_linking(source: Path, copy: Path, name: str) -> Path:
    """A copy of the folder `source` whose file `name` is a symbolic link to /dev/zero; the link."""
    shutil.copytree(source, copy)
    link = copy / name
    link.unlink(missing_ok=True)
    link.symlink_to(ZERO)
    return link


@pytest.mark.parametrize("name", ["contrasts.csv", "validity_syntax.csv", "rates.svg"])
def test_a_table_of_the_report_linked_to_dev_zero_is_one_line(tmp_path, name):
    link = _copy_linking(DATA / "tables", tmp_path / "tables", name)
    one_line(_report(tmp_path, tables=tmp_path / "tables"), link, tmp_path)
    assert not (tmp_path / "report.html").exists()


@pytest.mark.parametrize("name", ["review_estimates.csv", "review_provenance.json"])
def test_a_review_report_file_linked_to_dev_zero_is_one_line(tmp_path, name):
    model = "smollm2-135m"
    link = _copy_linking(DATA / "review" / model, tmp_path / "review" / model, name)
    one_line(_report(tmp_path, review=tmp_path / "review"), link, tmp_path)


@pytest.mark.parametrize("name", ["occurrence_pipeline.csv", "occurrence_provenance.json"])
def test_an_occurrence_report_file_linked_to_dev_zero_is_one_line(tmp_path, name):
    link = _copy_linking(DATA / "occurrence" / "sharegpt-v3-prefix", tmp_path / "occurrence", name)
    one_line(_report(tmp_path, occurrence=tmp_path / "occurrence"), link, tmp_path)


def test_a_table_larger_than_any_table_is_refused_unread(tmp_path):
    """A regular file can be endless in practice too (sparse, a terabyte): a table is bounded before it is read."""
    shutil.copytree(DATA / "tables", tmp_path / "tables")
    huge = tmp_path / "tables" / "sources.csv"
    with open(huge, "r+b") as f:
        f.truncate(2 * MEMORY)  # sparse: no disk is used
    line = one_line(_report(tmp_path, tables=tmp_path / "tables"), huge, tmp_path)
    assert "bytes, more than" in line


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)  # sparse: no disk is used
    return path


@pytest.mark.parametrize("command", ["score", "compare"])
def test_a_sparse_trace_larger_than_memory_is_one_line(tmp_path, command):
    """A regular file within the trace bound but larger than the memory there is: the MemoryError of reading it
    whole is one line naming the file and its size."""
    huge = _sparse(tmp_path / "sparse.jsonl", 2 * MEMORY)
    argv = (["score", huge, "--out-dir", "labels", "--no-nli"] if command == "score"
            else ["compare", huge, "--out", "compare"])
    line = one_line(argv, huge, tmp_path)
    assert f"{2 * MEMORY:,} bytes" in line and "not enough memory" in line


@pytest.mark.parametrize("command", ["score", "compare", "usage"])
def test_a_sparse_trace_larger_than_any_trace_is_refused_unread(tmp_path, command):
    """`truncate -s 50G sparse.jsonl`: above the bound a trace file can be (common.reading.TRACE_FILE_BYTES)."""
    huge = _sparse(tmp_path / "sparse.jsonl", 50 << 30)
    argv = {"score": ["score", huge, "--out-dir", "labels", "--no-nli"],
            "compare": ["compare", huge, "--out", "compare"], "usage": ["usage", huge]}[command]
    line = one_line(argv, huge, tmp_path)
    assert f"{50 << 30:,} bytes, more than a trace file" in line

    from common.reading import TRACE_FILE_BYTES

    assert f"({TRACE_FILE_BYTES:,} bytes at most)" in line
