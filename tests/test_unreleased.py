"""scripts/unreleased.py names what under data/ the release does not have, and what was changed: the first
thing ./reproduce.sh prints when a user put a model's traces into data/ by hand."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("unreleased", ROOT / "scripts" / "unreleased.py")
unreleased = importlib.util.module_from_spec(spec)
spec.loader.exec_module(unreleased)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_new_and_changed_files_under_data_are_named(tmp_path):
    (tmp_path / "data" / "traces").mkdir(parents=True)
    (tmp_path / "data" / "tables.csv").write_text("a\n")
    (tmp_path / "other.txt").write_text("x\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "release")
    assert unreleased.unreleased(tmp_path) == []
    (tmp_path / "data" / "traces" / "my-model.jsonl").write_text("{}\n")
    (tmp_path / "data" / "tables.csv").write_text("b\n")
    (tmp_path / "elsewhere.txt").write_text("not data\n")
    assert unreleased.unreleased(tmp_path) == ["new data/traces/my-model.jsonl", "changed data/tables.csv"]
    # a name git would quote, and a new file already staged, are new files too
    (tmp_path / "data" / "traces" / "café model.jsonl").write_text("{}\n")
    _git(tmp_path, "add", "data/traces/my-model.jsonl")
    assert sorted(unreleased.unreleased(tmp_path)) == ["changed data/tables.csv", "new data/traces/café model.jsonl",
                                                      "new data/traces/my-model.jsonl"]


def test_outside_a_git_checkout_it_cannot_tell_and_says_nothing(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.jsonl").write_text("{}\n")
    assert unreleased.unreleased(tmp_path) == []
