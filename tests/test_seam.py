"""seam.py itself: a Python without the kit's packages gets a one-line hint, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import seam

ROOT = Path(__file__).resolve().parents[1]

# Runs seam.py (argv[1]) in a Python where importing numpy fails, as in a Python without numpy; argv[2]
# becomes sys.prefix, which says which Python this pretends to be (the repository's .venv or another).
WITHOUT_NUMPY = """
import runpy, sys

class NoNumpy:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "numpy":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoNumpy())
seam, sys.prefix = sys.argv[1:3]
sys.argv = ["seam.py", *sys.argv[3:]]
runpy.run_path(seam, run_name="__main__")
"""


def run_without_numpy(prefix: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_NUMPY, str(ROOT / "seam.py"), prefix, *args], cwd=ROOT,
                          capture_output=True, text=True)


@pytest.mark.parametrize(("prefix", "advice"), [
    ("/usr", "; run ./reproduce.sh once to create .venv, then use .venv/bin/python seam.py …"),
    (str(ROOT / ".venv"), "; install what seam needs with: .venv/bin/python -m pip install -r requirements.txt"),
], ids=["another python", "the .venv"])
def test_a_missing_package_is_one_line_naming_it_and_what_to_do(tmp_path, prefix, advice):
    done = run_without_numpy(prefix, "tables", str(ROOT / "data" / "labels"), "--out", str(tmp_path / "tables"))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("seam.py tables: error: the package 'numpy' is not installed in ")
    assert advice in done.stderr
    assert not (tmp_path / "tables").exists()


def test_only_third_party_packages_count_as_missing():
    assert seam.missing_package(ModuleNotFoundError(name="onnxruntime.capi")) == "onnxruntime"
    for name in ("stats.nothing", "common", "tomllib", "json.nothing", None):
        assert seam.missing_package(ModuleNotFoundError(name=name)) is None


def test_a_missing_module_of_our_own_is_a_bug_with_a_traceback(monkeypatch):
    import benchmark.cli

    def broken(args):
        import validity.no_such_module  # noqa: F401

    monkeypatch.setattr(benchmark.cli, "run_check", broken)
    with pytest.raises(ModuleNotFoundError, match="validity.no_such_module"):
        seam.main(["check"])
