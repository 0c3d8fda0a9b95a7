"""Every perf/ script starts the way its docstring says: `python perf/NAME.py` from the repository's root.

A perf script is run by hand, rarely, so a broken import (a module moved, a package no longer on the path)
goes unnoticed until someone needs the numbers. Each one is started here with `--help`, in a fresh process
with nothing added to its path, which imports everything it imports at the top and times nothing.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "perf").glob("*.py"))


def test_there_are_perf_scripts():
    assert SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_the_docstring_says_how_to_run_it_and_help_runs(script):
    docstring = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    command = f"python perf/{script.name}"
    assert command in docstring, f"{script.name}: its docstring does not say `{command}`"
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONSTARTUP")}
    done = subprocess.run([sys.executable, f"perf/{script.name}", "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"usage: {script.name}"), done.stdout + done.stderr
