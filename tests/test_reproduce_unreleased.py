"""./reproduce.sh checks the release only; when data/ holds files the release does not have (or released files
changed that no step compares), its last line says so again, not only the list at the top (issue 36)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from test_reproduce import copy_release, reproduce

# Left out of the copy, so that each run takes a few seconds: nothing to rescore, table or page (the steps then say
# so and pass), but the benchmark is still checked.
HEAVY = ("traces", "labels", "tables", "review", "studies", "occurrence", "guard")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   check=True, capture_output=True)


def _released(tmp_path: Path) -> Path:
    """A copy of the kit as a git checkout whose commit is the release."""
    repo = copy_release(tmp_path / "repo")
    for folder in HEAVY:
        shutil.rmtree(repo / "data" / folder, ignore_errors=True)
    (repo / "data" / "report.html").unlink()
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "release")
    return repo


def _last_line(repo: Path) -> str:
    done = reproduce(repo)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.rstrip("\n").rsplit("\n", 1)[-1]


def test_the_last_line_repeats_what_data_holds_that_the_release_does_not(tmp_path):
    repo = _released(tmp_path)
    last = _last_line(repo)
    assert last.startswith("reproduce: everything matches (") and last.endswith(")"), last  # data/ as released
    (repo / "data" / "traces").mkdir()
    (repo / "data" / "traces" / "my-model.jsonl").write_text("{}\n", encoding="utf-8")
    (repo / "data" / "notes.txt").write_text("mine\n", encoding="utf-8")
    model_card = repo / "data" / "models" / "smollm2-135m.md"  # a released file that no step compares
    model_card.write_text(model_card.read_text(encoding="utf-8") + "edited\n", encoding="utf-8")
    done = reproduce(repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "   new: data/traces/my-model.jsonl" in done.stdout  # named at the top, as before
    last = done.stdout.rstrip("\n").rsplit("\n", 1)[-1]
    assert last.startswith("reproduce: everything matches ("), last
    assert last.endswith("; 2 files in data/ are not in the release: data/notes.txt, data/traces/my-model.jsonl; "
                         "1 released file in data/ is changed: data/models/smollm2-135m.md (named at the top)"), last


def test_a_long_list_is_cut_to_three_and_the_count_of_the_rest(tmp_path):
    repo = _released(tmp_path)
    for number in range(5):
        (repo / "data" / f"extra-{number}.txt").write_text("x\n", encoding="utf-8")
    last = _last_line(repo)
    assert last.endswith("; 5 files in data/ are not in the release: data/extra-0.txt, data/extra-1.txt, "
                         "data/extra-2.txt and 2 more (named at the top)"), last
