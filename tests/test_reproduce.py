"""End to end: reproduce.sh passes on the released data and points at any altered file."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import seam  # noqa: E402

# Every stage seam.py wires up (it imports them all), the plumbing below them, and the release.
PARTS = ("seam.py", "reproduce.sh", "common", *dict.fromkeys(stage.split(".")[0] for stage in seam.STAGES),
         "scripts", "data")


@pytest.fixture(scope="module")
def released():
    if not list((ROOT / "data" / "traces").glob("*.jsonl")):
        pytest.fail("no released trace set in data/traces/")
    return sorted((ROOT / "data" / "labels").glob("*.jsonl"))


def copy_release(folder: Path) -> Path:
    """The kit and its release copied into `folder` (made if need be), as reproduce.sh sees a checkout."""
    folder.mkdir(exist_ok=True)
    for part in PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, folder / part, ignore=shutil.ignore_patterns("__pycache__", "cache"))
        elif source.exists():
            shutil.copy2(source, folder / part)
    return folder


def flip_a_label(labels: Path) -> int:
    """Turn the verdict of the first usable label in `labels`; its index (0-based line)."""
    lines = labels.read_text(encoding="utf-8").splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if json.loads(line)["usable"])
    row = json.loads(lines[index])
    row["absorbed"] = not row["absorbed"]
    lines[index] = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
    labels.write_text("".join(lines), encoding="utf-8")
    return index


@pytest.fixture
def repo(tmp_path):
    return copy_release(tmp_path)


def reproduce(repo: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, SEAM_NO_VENV="1", PYTHON=sys.executable)
    return subprocess.run(["bash", str(repo / "reproduce.sh")], cwd=repo, env=env, capture_output=True, text=True)


def test_reproduce_passes_on_the_released_data(repo, released):
    done = reproduce(repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reproduce: everything matches" in done.stdout
    for number in ("1.", "2.", "3.", "3c.", "4."):
        assert f"== {number}" in done.stdout
    for conditions in sorted((repo / "data" / "conditions").glob("*.toml")):  # each condition file is checked
        assert f"== 1b. condition file data/conditions/{conditions.name}" in done.stdout
    for study in sorted(p for p in (repo / "data" / "studies").glob("*") if p.is_dir()):
        if list(study.glob("traces/*.jsonl")):
            assert f"== 3d. regenerate the study data/studies/{study.name} " in done.stdout
        else:
            assert f"data/studies/{study.name}: no traces yet" in done.stdout


def test_each_note_prints_under_the_header_of_its_own_step(repo, released):
    """The note on how a trace set is rescored (lexical-only, or with the entailment tier) and the note that the
    functional check is not rerun once printed above their step's header, under the previous step's."""
    lines = reproduce(repo).stdout.splitlines()
    notes = [i for i, line in enumerate(lines) if re.match(r"   \S+\.jsonl: released labels (are lexical-only|include)",
                                                           line)]
    assert len(notes) == len(released)
    for i in notes:
        name = lines[i].split()[0].removesuffix(":")
        assert lines[i - 1] == f"== 2. rescore data/traces/{name} and compare with data/labels/{name}", lines[i - 1]
    (functional,) = [i for i, line in enumerate(lines) if "the functional check executes model output" in line]
    assert lines[functional - 1].startswith("== 3. regenerate the absorption and validity tables")


def test_an_altered_label_fails_and_names_the_row(repo, released):
    labels = repo / "data" / "labels" / released[0].name
    index = flip_a_label(labels)
    done = reproduce(repo)
    assert done.returncode == 1
    assert f"data/labels/{labels.name}:{index + 1}: differs" in done.stdout
    reviewed = (repo / "data" / "review" / labels.name.replace(".jsonl", ".review.jsonl")).exists()
    # a review's report is regenerated from the released labels too (rescored or not), and no longer matches;
    # so are the tables of a study of the same model, which table its built-in labels beside the study's
    studies = len(list((repo / "data" / "studies").glob(f"*/traces/{labels.name}")))
    assert f"reproduce: {1 + reviewed + studies} step(s) FAILED" in done.stdout


def test_an_altered_table_fails_and_names_the_file(repo, released):
    # Alter the last data row, whichever model it is: the test must not depend on which models data/ holds.
    table = repo / "data" / "tables" / "rates.csv"
    lines = table.read_text(encoding="utf-8").splitlines(keepends=True)
    model, _, rest = lines[-1].partition(",")
    lines[-1] = f"{model}-altered,{rest}"
    table.write_text("".join(lines), encoding="utf-8")
    done = reproduce(repo)
    assert done.returncode == 1
    assert f"data/tables/rates.csv:{len(lines)}: differs" in done.stdout


def test_an_altered_report_page_fails_step_3c_and_names_the_line(repo, released):
    page = repo / "data" / "report.html"
    lines = page.read_text(encoding="utf-8").split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith("<title>"))
    lines[index] = lines[index].replace("SEAM report", "SEAM report (edited by hand)")
    page.write_text("\n".join(lines), encoding="utf-8")
    done = reproduce(repo)
    assert done.returncode == 1
    assert "== 3c. regenerate the HTML report and compare with data/report.html" in done.stdout
    assert f"data/report.html:{index + 1}: differs" in done.stdout
    assert "reproduce: 1 step(s) FAILED" in done.stdout


def test_an_altered_review_answer_fails_and_names_the_report_file(repo, released):
    reviews = sorted((repo / "data" / "review").glob("*.review.jsonl"))
    if not reviews:
        pytest.skip("no released blinded review")
    review = reviews[0]
    lines = review.read_text(encoding="utf-8").splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if json.loads(line).get("verdict") == "not_absorbed")
    row = json.loads(lines[index])
    row["verdict"] = "absorbed"  # the reviewer's answer changes; the released report no longer follows from it
    lines[index] = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
    review.write_text("".join(lines), encoding="utf-8")
    done = reproduce(repo)
    assert done.returncode == 1
    name = review.name.removesuffix(".review.jsonl")
    differs = rf"data/review/{re.escape(name)}/review_\w+\.(csv|md|json)(:\d+)?: differs"
    assert re.search(differs, done.stdout), done.stdout
    assert "reproduce: 1 step(s) FAILED" in done.stdout


def test_a_review_of_rescored_labels_is_read_with_the_labels_it_was_drawn_from(repo, released):
    drawn = sorted((repo / "data" / "review").glob("*.drawn-labels.jsonl"))
    if not drawn:
        pytest.skip("no released review of labels rescored since the draw")
    name = drawn[0].name.removesuffix(".drawn-labels.jsonl")
    lines = drawn[0].read_text(encoding="utf-8").splitlines(keepends=True)
    drawn[0].write_text("".join(lines[:-1]), encoding="utf-8")  # no longer the bytes the review was drawn from
    done = reproduce(repo)
    assert done.returncode == 1
    assert f"== 3b. regenerate the blinded review's report from data/review/{name}.review.jsonl" in done.stdout
    assert "these are not the labels the review was drawn from" in done.stderr
    assert "reproduce: 1 step(s) FAILED" in done.stdout


def test_the_install_into_venv_is_shown_and_counted_in_the_total(repo):
    # A .venv whose pip takes install_s seconds to install nothing; any other use of it is this Python.
    install_s = 5
    for folder in ("traces", "labels", "tables", "review"):  # nothing to rescore: the rest takes a second or two
        shutil.rmtree(repo / "data" / folder, ignore_errors=True)
    shutil.copy2(ROOT / "requirements.txt", repo / "requirements.txt")
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "activate").write_text(f'export PATH="{bin_dir}:$PATH"\n', encoding="utf-8")
    (bin_dir / "python").write_text(
        f'#!{shutil.which("bash")}\n'
        f'if [ "$1 $2" = "-m pip" ]; then sleep {install_s}; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n', encoding="utf-8")
    (bin_dir / "python").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("SEAM_NO_VENV", "VIRTUAL_ENV")}
    done = subprocess.run(["bash", str(repo / "reproduce.sh")], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "data/report.html is released without the traces and tables it is made from" in done.stdout
    for study in sorted(p for p in (repo / "data" / "studies").glob("*") if list(p.glob("traces/*.jsonl"))):
        assert f"data/studies/{study.name} is released without the built-in traces and labels" in done.stdout
    total = int(re.search(r"^reproduce: everything matches \((\d+) s", done.stdout, re.M).group(1))
    assert total >= install_s, done.stdout
    assert "== installing into .venv (first use, or requirements.txt changed): requests==" in done.stdout
    assert int(re.search(r"^   installed \((\d+) s\)$", done.stdout, re.M).group(1)) >= install_s


def test_the_tables_read_the_traces_an_unusable_output_changes_only_the_sensitivity_table(repo, released):
    # An output stopped by the limit is excluded whatever its text, so its labels stay the same; but the
    # sensitivity analysis counts the witness phrase inside it, so the tables step must read the traces.
    from stats.evidence import benchmark_comments

    comments, _ = benchmark_comments()
    for labels in released:  # the first released trace set that has such an output
        traces = repo / "data" / "traces" / labels.name
        lines = [line + "\n" for line in traces.read_text(encoding="utf-8").split("\n")[:-1]]
        found = False
        for index, line in enumerate(lines):
            row = json.loads(line)
            witness = comments[row["id"]].witness.lower() if row["condition"] != "clean" else None
            if row["status"] == "unusable" and witness and witness in (row["output"] or "").lower():
                row["output"] = "no comment here"
                lines[index] = json.dumps(row, ensure_ascii=False) + "\n"
                found = True
                break
        if found:
            break
    else:
        pytest.fail("no unusable output holding its witness phrase in the released traces")
    traces.write_text("".join(lines), encoding="utf-8")
    done = reproduce(repo)
    assert done.returncode == 1
    assert "data/tables/sensitivity.csv:" in done.stdout and "differs" in done.stdout
    assert "data/report.html:" in done.stdout  # the page shows every output, this one too
    # a study that pairs with this model's built-in traces tables and shows them too: its step fails as well,
    # and nowhere do the labels differ (the output was excluded before and is now)
    studies = [found for found in sorted((repo / "data" / "studies").glob("*/traces"))
               if (found / labels.name).exists()]
    for found in studies:
        assert f"data/studies/{found.parent.name}/" in done.stdout
    assert "labels/" not in "".join(line for line in done.stdout.splitlines(keepends=True) if "differs" in line)
    assert f"reproduce: {2 + len(studies)} step(s) FAILED" in done.stdout
