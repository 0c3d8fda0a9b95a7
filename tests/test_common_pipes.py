"""Every command-line entry point stops quietly when its reader does (`… | head`), with no traceback."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The sandbox's child process writes its verdict to its supervisor, not to a user's pipe, and
# imports nothing from the repository.
NOT_A_USER_ENTRY_POINT = {"validity/sandbox_child.py"}


def run_into_closed_pipe(args: list[str], *, buffered: bool) -> tuple[int, str]:
    """Run `python ARGS` with stdout a pipe whose reader has already gone; its exit status and stderr."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    process = subprocess.Popen([sys.executable, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    process.stdout.close()  # the reader stops before the program writes anything
    stderr = process.stderr.read().decode("utf-8", "replace")
    process.stderr.close()
    return process.wait(), stderr


@pytest.fixture(scope="module")
def differing(tmp_path_factory):
    folder = tmp_path_factory.mktemp("differing")
    (folder / "a.txt").write_text("one\n", encoding="utf-8")
    (folder / "b.txt").write_text("two\n", encoding="utf-8")
    return folder


ENTRY_POINTS = {
    "seam.py prompts": (["seam.py", "prompts", "--sources", "humaneval"], 0),
    "stats.summary": (["-m", "stats.summary", "data/tables"], 0),
    "validity.summary": (["-m", "validity.summary", "data/tables"], 0),
    "scripts/released_tiers.py": (["scripts/released_tiers.py", "no-such-labels.jsonl"], 0),
    "scripts/local_models.py": (["scripts/local_models.py", "list"], 0),
    # compare prints only differences: a reader that stopped early stopped on one
    "scripts/compare.py": (["scripts/compare.py", "{differing}/a.txt", "{differing}/b.txt"], 1),
}


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_a_reader_that_stops_early_ends_the_program_quietly(name, buffered, differing):
    args, expected = ENTRY_POINTS[name]
    status, stderr = run_into_closed_pipe([arg.format(differing=differing) for arg in args], buffered=buffered)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr and "Exception ignored" not in stderr, stderr
    assert status == expected, stderr


def test_a_broken_pipe_elsewhere_is_still_an_error(tmp_path):
    code = ("import sys; sys.path.insert(0, '.'); from common.pipes import run_main\n"
            "def main():\n    print('written')\n    raise BrokenPipeError(32, 'a socket, not stdout')\n"
            "sys.exit(run_main(main))\n")
    with open(tmp_path / "out", "w") as out:
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, stdout=out, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 1
    assert "BrokenPipeError: [Errno 32] a socket, not stdout" in done.stderr
    assert (tmp_path / "out").read_text() == "written\n"


def _main_blocks(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and "__main__" in ast.unparse(node.test):
            yield ast.unparse(node)


def test_every_entry_point_goes_through_run_main():
    files = [path for path in ROOT.rglob("*.py")
             if not {".venv", ".sources", "tests"} & set(path.relative_to(ROOT).parts)
             and path.relative_to(ROOT).as_posix() not in NOT_A_USER_ENTRY_POINT]
    entry_points = {path.relative_to(ROOT).as_posix(): list(_main_blocks(path)) for path in files}
    entry_points = {name: blocks for name, blocks in entry_points.items() if blocks}
    assert {"seam.py", "stats/summary.py", "validity/summary.py", "scripts/compare.py"} <= set(entry_points)
    assert [name for name, blocks in entry_points.items() if not any("run_main(" in b for b in blocks)] == []
