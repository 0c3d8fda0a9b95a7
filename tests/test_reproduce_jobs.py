"""reproduce.sh with steps side by side (SEAM_JOBS): the same text in the same order, the same failures
counted, a bad SEAM_JOBS refused in one line, and Ctrl+C leaving nothing behind."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from test_reproduce import copy_release, flip_a_label  # noqa: E402


@pytest.fixture
def repo(tmp_path):
    return copy_release(tmp_path / "repo")


def start(repo: Path, jobs: str, tmp: Path, **kwargs) -> subprocess.Popen:
    """reproduce.sh with SEAM_JOBS=jobs and its temporary folder under `tmp`."""
    tmp.mkdir(exist_ok=True)
    env = dict(os.environ, SEAM_NO_VENV="1", PYTHON=sys.executable, SEAM_JOBS=jobs, TMPDIR=str(tmp))
    return subprocess.Popen(["bash", str(repo / "reproduce.sh")], cwd=repo, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def run(repo: Path, jobs: str, tmp: Path) -> tuple[int, str, str]:
    process = start(repo, jobs, tmp)
    out, err = process.communicate(timeout=600)
    return process.returncode, out, err


def timeless(text: str) -> str:
    """The output without what may differ between two runs: the times and the temporary folder's name."""
    return re.sub(r"/tmp\.\w+", "/tmp.X", re.sub(r"\(\d+ s\b", "(N s", text))


def test_one_job_and_several_print_the_same_and_count_the_same_failures(repo, tmp_path):
    # Failures in steps that run side by side (a label: step 2 and the steps reading the labels; a table: step 3).
    labels = sorted((repo / "data" / "labels").glob("*.jsonl"))[0]
    index = flip_a_label(labels)
    table = repo / "data" / "tables" / "rates.csv"
    rows = table.read_text(encoding="utf-8").splitlines(keepends=True)
    model, _, rest = rows[-1].partition(",")
    rows[-1] = f"{model}-altered,{rest}"
    table.write_text("".join(rows), encoding="utf-8")

    alone = run(repo, "1", tmp_path / "tmp")
    side_by_side = run(repo, "4", tmp_path / "tmp")  # the same TMPDIR: the output names the temporary folder
    assert alone[0] == side_by_side[0] == 1
    assert re.search(r"^reproduce: [2-9] step\(s\) FAILED", alone[1], re.M), alone[1]
    assert f"data/labels/{labels.name}:{index + 1}: differs" in alone[1]
    assert "data/tables/rates.csv:" in alone[1]
    assert timeless(side_by_side[1]) == timeless(alone[1])
    assert timeless(side_by_side[2]) == timeless(alone[2])
    assert not list((tmp_path / "tmp").iterdir())


@pytest.mark.parametrize("jobs", ["0", "-1", "two", "1.5", "3 "])
def test_a_bad_seam_jobs_is_refused_in_one_line(tmp_path, jobs):
    code, out, err = run(ROOT, jobs, tmp_path)  # refused before anything is installed, read or written
    assert code == 2
    assert out == ""
    assert err == f"reproduce: SEAM_JOBS must be a whole number of jobs, at least 1; got '{jobs}'\n"


def processes_in(folder: Path) -> list[str]:
    """The command lines of the processes working in `folder` (or naming it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(str(folder)) or str(folder) in command:
            found.append(command)
    return found


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc to find stray processes")
def test_ctrl_c_ends_the_steps_running_in_the_background_and_removes_the_temporary_folder(repo, tmp_path):
    tmp = tmp_path / "tmp"
    process = start(repo, "3", tmp, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # until steps run in the background (their pid files are written)
        if len(list(tmp.glob("tmp.*/steps/*/pid"))) >= 3:
            break
        time.sleep(0.02)
    else:
        pytest.fail("no steps started in the background")
    assert processes_in(repo)
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl+C does: the signal to the terminal's foreground group
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGINT
    assert processes_in(repo) == []
    assert list(tmp.iterdir()) == []
